"""FDB interop through the env: a run exported to FDB's folders replays as fixed-input scenes
(``scene="fdb:PATH"``) and scores the same under the ``fdb_code`` profile."""

import json

import pytest

from fdenv.cli.export import export_fdb
from fdenv.run import run
from fdenv.runs import load_records, read_episodes
from fdenv.scene import load_set
from fdenv.sim.env import RoomEnv
from fdenv.wrappers import FDBScore
from fdenv_agents import OracleAgent, ScriptedAgent

from .helpers import rollout


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    scenes = load_set("turn_taking", "test")[:2] + load_set("interruption", "test")[:2]
    folder = run(OracleAgent(), scenes=scenes, out=tmp / "runs", progress=False)
    export_fdb(folder, tmp / "fdb")
    return folder, tmp / "fdb"


@pytest.mark.parametrize("task", ["smooth_turn_taking", "user_interruption"])
def test_replay_scores_like_the_original(exported, task):
    folder, fdb = exported
    original = {ln["scene_id"]: ln for ln in read_episodes(folder)}
    records = {r.scene.id: r for r in load_records(folder)}
    env = RoomEnv(scene=f"fdb:{fdb / task}")
    assert len(env.scenes) == 2
    for i, sc in enumerate(env.scenes):
        obs, info = env.reset(options={"scene": i})
        assert info["scene_id"] == sc.id
        index = json.loads((fdb / "index.json").read_text())[task]
        source = records[index[sc.attributes["sample"]]["scene_id"]]
        agent = ScriptedAgent([(0.0, source.assistant)])
        rec, frames = rollout(FDBScore(env, profiles=("fdb_code",)), agent, scene=i)
        assert rec.replay
        # The microphone plays the exported input; labels carry its gold turns.
        assert any(lab["turn"]["label"] == "final" for _, lab in frames)
        score = FDBScore(env, profiles=("fdb_code",)).scorer.score(rec)
        want = original[source.scene.id]["fdb"]["fdb_code"]
        assert score["fdb_code"]["to"] == want["to"]
        if want["latency_s"] is not None:
            assert score["fdb_code"]["latency_s"] == pytest.approx(want["latency_s"], abs=0.02)


def test_replay_needs_an_anechoic_room(exported):
    _, fdb = exported
    env = RoomEnv(scene=f"fdb:{fdb / 'smooth_turn_taking'}", room="office")
    with pytest.raises(ValueError, match="anechoic"):
        env.reset()


def test_missing_fdb_folder():
    with pytest.raises(ValueError, match="no such folder"):
        RoomEnv(scene="fdb:/nonexistent/fdb/task")
