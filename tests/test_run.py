"""The runner and its run folders (SPEC 9): records on disk, resumable, nothing lost."""

import json

import numpy as np
import pytest

from fdenv.record import EpisodeRecord
from fdenv.run import run
from fdenv.runs import config_key, load_records, read_episodes
from fdenv.sim.env import RoomEnv
from fdenv_agents import ScriptedAgent, SilentAgent, make_agent

from .helpers import rollout, scene, tone

SC = scene([
    {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, what time does the film start?", "label": "final", "gold_answer": "At seven thirty."},
], kind="turn_taking", id="run-test")


def test_run_writes_records_and_resumes(tmp_path):
    folder = run(SilentAgent(), scenes=[SC], seeds=[0, 1], out=tmp_path, progress=False)
    lines = read_episodes(folder)
    assert [(ln["scene_id"], ln["seed"]) for ln in lines] == [("run-test", 0), ("run-test", 1)]
    assert lines[0]["fdb"]["dimension"] == "turn_taking" and lines[0]["fdb"]["paper"]["to"] == 0
    assert (folder / (lines[0]["record"] + ".flac")).is_file() and lines[0]["record"].startswith("episodes/run-test-")
    config = json.loads((folder / "config.json").read_text())
    assert config["agent"]["name"] == "silent" and folder.name == config_key(config)
    # A rerun with more seeds only runs the new ones.
    before = (folder / "episodes.jsonl").read_text()
    again = run(SilentAgent(), scenes=[SC], seeds=[0, 1, 2], out=tmp_path, progress=False)
    assert again == folder
    text = (folder / "episodes.jsonl").read_text()
    assert text.startswith(before) and len(read_episodes(folder)) == 3


def test_a_torn_last_line_is_dropped_and_the_run_goes_on(tmp_path):
    folder = run(SilentAgent(), scenes=[SC], seeds=[0], out=tmp_path, progress=False)
    with open(folder / "episodes.jsonl", "a") as f:
        f.write('{"scene_id": "run-test", "se')  # killed mid-write
    torn = (folder / "episodes.jsonl").read_bytes()
    assert len(read_episodes(folder)) == 1
    assert (folder / "episodes.jsonl").read_bytes() == torn  # readers (reports) never cut the file
    run(SilentAgent(), scenes=[SC], seeds=[0, 1], out=tmp_path, progress=False)  # the runner repairs it
    assert [ln["seed"] for ln in read_episodes(folder)] == [0, 1]


def test_a_corrupt_middle_line_is_an_error_not_a_loss(tmp_path):
    folder = run(SilentAgent(), scenes=[SC], seeds=[0, 1], out=tmp_path, progress=False)
    lines = (folder / "episodes.jsonl").read_text().splitlines()
    (folder / "episodes.jsonl").write_text(lines[0] + "\nnot json\n" + lines[1] + "\n")
    with pytest.raises(ValueError, match="line 2"):
        read_episodes(folder)


def test_different_agents_and_knobs_get_different_folders(tmp_path):
    a = run(SilentAgent(), scenes=[SC], out=tmp_path, progress=False)
    b = run(ScriptedAgent([(1.0, tone(0.5))]), scenes=[SC], out=tmp_path, progress=False)
    c = run(SilentAgent(), scenes=[SC], out=tmp_path, progress=False, scheduler={"tail_s": 3.0})
    assert len({a, b, c}) == 3


def test_saved_record_round_trips(tmp_path):
    rec, _ = rollout(RoomEnv(scene=SC), ScriptedAgent([(5.0, tone(1.0))]))
    rec.save(tmp_path / "ep")
    back = EpisodeRecord.load(tmp_path / "ep")
    assert back.turns == rec.turns and back.clips == rec.clips and back.scene == rec.scene
    assert back.n_frames == rec.n_frames and back.sample_rate == 16000
    assert np.max(np.abs(back.assistant - rec.assistant)) < 1e-4  # 16-bit FLAC
    assert np.max(np.abs(back.mic0 - rec.mic0)) < 1e-4


def test_privileged_agents_get_labels_others_do_not(tmp_path):
    seen = []
    agent = ScriptedAgent(on_labels=lambda a, labels: seen.append(labels["frame"]))
    run(agent, scenes=[SC], out=tmp_path, progress=False)
    assert seen[:3] == [0, 1, 2]
    folder = run(make_agent("oracle"), scenes=[SC], out=tmp_path, progress=False)
    assert read_episodes(folder)[0]["privileged"] is True
    assert load_records(folder)[0].privileged


def test_unknown_agent():
    with pytest.raises(ValueError, match="valid agents"):
        make_agent("orcale")


def test_a_live_model_failure_is_noted_and_the_run_goes_on(tmp_path):
    from fdenv_agents.realtime import RemoteAgentError

    class Flaky(SilentAgent):
        name = "flaky"

        def __init__(self):
            self.calls = 0

        def act(self, observation, labels=None):
            self.calls += 1
            if self.calls == 10:
                raise RemoteAgentError("server closed the connection")
            return super().act(observation, labels)

        def stats(self):
            return {"late_frames": 0, "calls": self.calls}

    folder = run(Flaky(), scenes=[SC], seeds=[0, 1], out=tmp_path, progress=False)
    failures = [json.loads(x) for x in (folder / "failures.jsonl").read_text().splitlines()]
    assert failures == [{"scene_id": "run-test", "seed": 0, "error": "RemoteAgentError: server closed the connection"}]
    lines = read_episodes(folder)
    assert [ln["seed"] for ln in lines] == [1] and lines[0]["agent_stats"]["late_frames"] == 0


def test_the_run_config_names_the_library_versions(tmp_path):
    import json

    folder = run(SilentAgent(), scenes=[SC], out=tmp_path, progress=False)
    versions = json.loads((folder / "config.json").read_text())["versions"]
    assert versions["silero-vad"] and versions["faster-whisper"] and versions["torch"].startswith("2.")
