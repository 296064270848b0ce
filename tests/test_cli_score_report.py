"""fdenv-score re-scores saved records; fdenv-report compares run folders and draws."""

import json

import pytest

from fdenv.cli import report, score
from fdenv.run import read_episodes, run
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
    from fdenv.run import run_scoring

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
