"""The episode object: the env is a thin Gymnasium surface over it, live and replay alike."""

import numpy as np

from fdenv.render import Renderer
from fdenv.sim.env import RoomEnv
from fdenv.sim.episode import Episode
from fdenv.sim.replay import FixedSchedule
from fdenv.sim.scheduler import SchedulerConfig

from .helpers import scene, tone

SC = scene([
    {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, how much did we spend?", "label": "T", "gold_answer": "48"},
])


def test_an_episode_plays_alone_exactly_as_the_env_plays_it():
    env = RoomEnv(scene=SC)
    obs, info = env.reset(seed=3)
    ep = Episode.live(SC, Renderer(sample_rate=16000), None, SchedulerConfig(), 16000, 1280, 1, env.episode.seed,
                      {"config": {}, "versions": {}}, behaviour=env.behaviour)
    obs2, labels = ep.start()
    assert np.array_equal(obs, obs2) and labels == info["labels"]
    answer = tone(3.2).reshape(-1, 1280)  # an answer from frame 40 on (40 frames), so the humans react
    k, done = 0, False
    while not done:
        a = answer[k - 40] if 40 <= k < 40 + len(answer) else np.zeros(1280, np.float32)
        o1, _, done, _, i1 = env.step(a)
        o2, l2, done2 = ep.play(a)
        assert np.array_equal(o1, o2) and i1["labels"] == l2 and done == done2
        k += 1
    rec, rec2 = i1["record"], ep.record()
    assert rec.turns == rec2.turns and rec.clips == rec2.clips and np.array_equal(rec.assistant, rec2.assistant)
    assert rec.n_frames == rec2.n_frames == k + 1


def test_fixed_schedules_share_no_state():
    a, b = FixedSchedule(10), FixedSchedule(20)
    a.clips.append("x")
    assert b.clips == [] and a.turns is not b.turns
