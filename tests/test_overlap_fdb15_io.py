"""The overlap set in Full-Duplex-Bench v1.5's folder layout: export a run's episodes, read them
back as replay scenes (``scene="fdb:PATH"``), score a model's ``output.wav`` there."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from fdenv.cli.export import export_fdb15, main as export_main
from fdenv.errors import FDBImportError
from fdenv.run import run_episode
from fdenv.scene import load_set
from fdenv.score.overlap import OverlapScorer, overlap_event
from fdenv.sim.env import RoomEnv
from fdenv.sim.replay_v15 import load_fdb15_task, sample_record
from fdenv_agents import ScriptedAgent

TASK_OF = {"interruption": "user_interruption", "backchannel": "user_backchannel",
           "side_conversation": "talking_to_other", "background": "background_speech"}


def _records(agent_events=()):
    out = []
    for event in TASK_OF:
        scene = next(s for s in load_set("overlap", "test") if s.attributes["event"] == event)
        out.append(run_episode(RoomEnv(scene=scene), ScriptedAgent(agent_events), seed=0).record)
    return out


def test_export_then_replay_each_task(tmp_path):
    records = _records()
    index = export_fdb15(records, tmp_path)
    assert sorted(index) == sorted(TASK_OF.values())
    for rec in records:
        event = overlap_event(rec)
        folder = tmp_path / TASK_OF[event.kind] / "0"
        meta = json.loads((folder / "metadata.json").read_text())
        assert meta["timestamps"] == [round(event.start, 3), round(event.end, 3)]
        assert meta["current_turn_text"] == event.text and meta["context_text"] == event.request
        x, sr = sf.read(folder / "input.wav")
        y, _ = sf.read(folder / "output.wav")
        assert sr == 16000 and len(x) == len(y) and np.abs(x).max() > 0.01
        scene, audio, gold = load_fdb15_task(folder)
        assert scene.kind == "overlap" and scene.attributes["event"] == event.kind
        e = next(t for t in gold["turns"] if t.id == "u1")
        assert (e.start, e.end) == pytest.approx((event.start, event.end), abs=1e-3)
        # the folder replays in the env (fixed input, no reactions), and scores
        env = RoomEnv(scene=f"fdb:{folder}")
        replayed = run_episode(env, ScriptedAgent(), seed=0).record
        assert replayed.replay and overlap_event(replayed).kind == event.kind
        res = OverlapScorer().score(replayed)
        assert res["event"] == event.kind and res["paper"]["met_speaking"] is False


def test_bad_v15_folders_name_the_fix(tmp_path):
    folder = tmp_path / "somewhere" / "1"
    folder.mkdir(parents=True)
    sf.write(folder / "input.wav", np.zeros(16000, np.float32), 16000)
    (folder / "metadata.json").write_text(json.dumps({"timestamps": [0.2, 0.5]}))
    with pytest.raises(FDBImportError, match="not a v1.5 task folder"):
        load_fdb15_task(folder)
    with pytest.raises(FDBImportError, match="no user speech before the overlap"):
        load_fdb15_task(folder, task="user_backchannel")
    (folder / "metadata.json").write_text(json.dumps({"timestamps": [0.8, 0.5]}))
    with pytest.raises(FDBImportError, match="end is before the start"):
        load_fdb15_task(folder, task="user_backchannel")
    with pytest.raises(FDBImportError, match="output.wav"):
        sample_record(folder, task="user_backchannel")


@pytest.mark.slow
def test_a_models_output_scores_the_same_after_the_round_trip(tmp_path):
    answer = ("The city began as a small settlement by the river, where people traded food and cloth, and over the "
              "centuries it grew into a busy town with walls, markets, churches and a railway.")
    records = _records([(0.0, answer), (12.0, answer)])
    export_fdb15(records, tmp_path)
    assert export_main(["fdb15", str(tmp_path / "nothing"), str(tmp_path / "x")]) == 2  # not a run folder
    for rec in records:
        event = overlap_event(rec)
        direct = OverlapScorer().score(rec)["paper"]
        again = OverlapScorer().score(sample_record(tmp_path / TASK_OF[event.kind] / "0"))["paper"]
        for key in ("met_speaking", "held", "did_not_stop", "category"):
            assert again[key] == direct[key], (event.kind, key)
        for key in ("stop_latency_s", "response_latency_s"):
            assert (again[key] is None) == (direct[key] is None)
            if direct[key] is not None:
                assert again[key] == pytest.approx(direct[key], abs=0.01)
