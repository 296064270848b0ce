"""fdenv-score re-scores saved records; fdenv-report compares run folders and draws."""

import json

import pytest

from fdenv.cli import report, score
from fdenv.run import run
from fdenv.runs import read_episodes
from fdenv_agents import OracleAgent, ScriptedAgent

from .helpers import scene

SC = scene([{"speaker": "Ann", "text": "So I was thinking [pause=1.0] about the trip to the lake.", "label": "pause"}],
           kind="pause", id="pause-cli")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    # A short word inside the pause: a segment under min_speech_ms=500 but over 250.
    short = ScriptedAgent([(1.9, "Sure.")])
    return [run(short, scenes=[SC], out=tmp, progress=False), run(OracleAgent(), scenes=[SC], out=tmp, progress=False)]


def rescored_segments(folder, capsys, ms):
    assert score.main([str(folder), "--min-speech-ms", str(ms), "--profiles", "paper"]) == 0
    out = capsys.readouterr().out
    assert "pause_handling" in out
    path = out.strip().splitlines()[-1].removeprefix("wrote ")
    return json.loads(open(path).read().splitlines()[0])["segments"]


def test_rescore_with_another_min_speech(folders, capsys):
    folder = folders[0]
    original = read_episodes(folder)[0]
    assert len(rescored_segments(folder, capsys, 250)) == 1  # the short word
    assert rescored_segments(folder, capsys, 500) == []  # shorter than 500 ms: dropped
    assert len(list((folder / "rescored").glob("*.jsonl"))) == 2
    assert read_episodes(folder)[0] == original  # the original lines are kept


def test_rescoring_uses_the_runs_own_recogniser_and_judge(folders, tmp_path, capsys):
    from fdenv.score.rescore import run_scoring

    assert run_scoring(folders[0]) == {"asr": "tiny.en", "judge": "offline"}
    assert score.main([str(folders[0]), "--profiles", "paper"]) == 0
    assert "asr=tiny.en judge=offline" in capsys.readouterr().err
    # a run judged by Claude is re-scored by Claude unless told otherwise
    other = tmp_path / "claude-run"
    other.mkdir()
    config = json.loads((folders[0] / "config.json").read_text())
    config["scoring"]["FDBScore"]["judge"] = {"name": "anthropic:claude-x", "prompt_version": "v1"}
    (other / "config.json").write_text(json.dumps(config))
    assert run_scoring(other) == {"asr": "tiny.en", "judge": "anthropic:claude-x"}
    assert run_scoring(tmp_path) == {"asr": None, "judge": None}  # no config: the defaults apply


def test_rescoring_an_mpe_run_prints_mpes_table(tmp_path, capsys):
    from fdenv.scene import find_scene
    from fdenv_agents import SilentAgent

    folder = run(SilentAgent(), scenes=[find_scene("mpe-0001-explicit")], out=tmp_path, progress=False)
    assert score.main([str(folder)]) == 0
    out = capsys.readouterr().out
    assert "response presence" in out and "silence preservation" in out


def test_report_table_bars_and_timeline(folders, tmp_path, capsys):
    args = [str(f) for f in folders] + ["--bars", str(tmp_path / "b.png"), "--timeline", "pause-cli",
                                        "--png", str(tmp_path / "t.png"), "--resamples", "200"]
    assert report.main(args) == 0
    out = capsys.readouterr().out
    assert "scripted *" in out and "oracle *" in out and "pause_handling" in out
    assert (tmp_path / "b.png").stat().st_size > 1000 and (tmp_path / "t.png").stat().st_size > 1000


def test_bad_folders(tmp_path, capsys):
    assert report.main([str(tmp_path)]) == 2
    assert score.main([str(tmp_path)]) == 2
    assert "not" in capsys.readouterr().err


def _config(agent, room=None, **knobs):
    return {"agent": {"name": agent, **knobs}, "env": {"sample_rate": 16000, "tts": "espeak", "room": room,
                                                      "scheduler": {"wait_s": 5.0}},
            "scenes": {"set": "turn_taking", "split": "test"},
            "scoring": {"FDBScore": {"profiles": ["paper"], "min_speech_ms": 250}}}


def test_labels_name_what_differs_between_runs():
    from fdenv.report import run_labels

    office = {"preset": "office", "rt60": 0.5, "echo_gain": 0.0}
    configs = [_config("cascade", endpoint_silence_ms=300, vad_threshold=0.5),
               _config("cascade", office, endpoint_silence_ms=900, vad_threshold=0.5),
               _config("oracle", {**office, "echo_gain": 0.5}),
               _config("oracle", office)]
    assert run_labels(configs) == ["cascade endpoint_silence_ms=300 room=anechoic",
                                   "cascade endpoint_silence_ms=900 room=office echo_gain=0",
                                   "oracle room=office echo_gain=0.5",  # the preset's own rt60 goes unsaid
                                   "oracle room=office echo_gain=0"]
    tts = _config("oracle")
    tts["env"]["tts"] = "kokoro"
    scoring = _config("oracle")
    scoring["scoring"]["FDBScore"]["min_speech_ms"] = 500
    behaviour = _config("oracle")
    behaviour["env"]["scheduler"]["wait_s"] = 2.0
    assert run_labels([_config("oracle"), tts, scoring, behaviour]) == [
        "oracle wait_s=5 tts=espeak min_speech_ms=250", "oracle wait_s=5 tts=kokoro min_speech_ms=250",
        "oracle wait_s=5 tts=espeak min_speech_ms=500", "oracle wait_s=2 tts=espeak min_speech_ms=250"]
    paper = _config("oracle")
    paper["env"].update(behaviour="paper", scheduler={"wait_s": 8.0})  # a profile explains its own knobs
    natural = _config("oracle")
    natural["env"]["behaviour"] = "natural"
    assert run_labels([paper, natural]) == ["oracle behaviour=paper", "oracle behaviour=natural"]
    # nothing a label can name differs (fdenv's source did): the run keys tell the rows apart
    same = [{**_config("oracle"), "_key": "aaa"}, {**_config("oracle"), "_key": "bbb"}]
    assert run_labels(same) == ["oracle [aaa]", "oracle [bbb]"]
    # one agent over two scene sets: the dimension column tells the rows apart
    other_set = {**_config("oracle"), "scenes": {"set": "pause", "split": "test"}, "_key": "ccc"}
    assert run_labels([same[0], other_set]) == ["oracle", "oracle"]


def test_report_reads_multirun_folders_and_writes_rows(folders, tmp_path, capsys):
    import csv

    sweep = tmp_path / "multirun"
    for i, f in enumerate(folders):  # what fdenv-run -m leaves: one job folder each
        (sweep / str(i)).mkdir(parents=True)
        (sweep / str(i) / "run_folders.json").write_text(json.dumps([str(f)]))
    assert report.main([str(sweep), "--resamples", "200", "--json", str(tmp_path / "r.json"),
                        "--csv", str(tmp_path / "r.csv")]) == 0
    out = capsys.readouterr().out
    assert "scripted *" in out and "oracle *" in out
    rows = json.loads((tmp_path / "r.json").read_text())
    with open(tmp_path / "r.csv", newline="") as f:
        assert list(csv.DictReader(f))[0].keys() == rows[0].keys()
    assert {r["run"] for r in rows} == {f.name for f in folders}
    tor = [r for r in rows if r["metric"] == "tor" and r["profile"] == "paper"]
    assert len(tor) == 2 and all(r["dimension"] == "pause_handling" and r["lo"] <= r["value"] <= r["hi"] for r in tor)
    # one row per (run, dimension, metric) and profile: no duplicates
    assert len({(r["run"], r["dimension"], r["profile"], r["condition"], r["metric"]) for r in rows}) == len(rows)
    # the folder that holds the run folders works too, and a folder of nothing says what it wants
    assert report.main([str(folders[0].parent), "--resamples", "200"]) == 0
    assert report.main([str(tmp_path / "empty")]) == 2
    assert f"no run folders in {tmp_path / 'empty'}" in capsys.readouterr().err


def test_rescoring_an_overlap_run_reproduces_its_scores(tmp_path, capsys):
    from fdenv_agents import make_agent

    folder = run(make_agent("oracle"), scene_set="overlap", split="test", limit=1, out=tmp_path, progress=False)
    live = read_episodes(folder)[0]["overlap"]
    assert live["paper"]["met_speaking"] is True  # the oracle is answering when the event comes
    assert score.main([str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"overlap:{live['event']}" in out and "met 1.00" in out
    path = out.strip().splitlines()[-1].removeprefix("wrote ")
    assert json.loads(open(path).read().splitlines()[0])["overlap"] == live
