"""The random agent: seeded on/off speech, deterministic per (seed, reset count)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv_agents import AGENTS, RandomAgent, make_agent  # noqa: E402

from .helpers import rollout, scene  # noqa: E402

SR, N = 16000, 1280
OBS = np.zeros((1, N), np.float32)


def episode(agent, frames=300, sr=SR):
    n = int(0.08 * sr)
    agent.reset("", sr, n)
    return np.stack([agent.act(np.zeros((1, n), np.float32)) for _ in range(frames)])


def test_registered():
    assert AGENTS["random"] is RandomAgent
    assert isinstance(make_agent("random", seed=3), RandomAgent)


def test_same_seed_same_episodes_and_episodes_differ():
    a, b = RandomAgent(seed=7), RandomAgent(seed=7)
    a1, a2 = episode(a), episode(a)
    b1, b2 = episode(b), episode(b)
    assert np.array_equal(a1, b1) and np.array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # the reset count enters the seed
    assert not np.array_equal(episode(RandomAgent(seed=8)), a1)


def test_on_off_durations_follow_the_means():
    agent = RandomAgent(seed=1, mean_speech_s=0.8, mean_silence_s=1.6)
    frames = episode(agent, frames=6000)
    on = np.abs(frames).max(axis=1) > 0
    assert 0.25 < on.mean() < 0.42  # expected 1/3
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], on.astype(int), [0]]))))[::2]
    assert 6 < runs.mean() < 14  # mean speech run of 10 frames
    assert np.abs(frames).max() <= 1.0 and frames.dtype == np.float32


def test_config_and_bad_values():
    cfg = RandomAgent(seed=2, mean_speech_s=1.0).config()
    assert cfg["seed"] == 2 and cfg["mean_speech_s"] == 1.0 and "mean_silence_s" in cfg
    with pytest.raises(ValueError, match="mean_silence_s"):
        RandomAgent(mean_silence_s=0)


def test_in_an_episode_at_24k():
    from fdenv.sim.env import RoomEnv

    sc = scene([{"speaker": "Ann", "text": "Hello there, how are you today?", "label": "final"}], kind="turn_taking")
    rec, frames = rollout(RoomEnv(scene=sc, sample_rate=24000), RandomAgent(seed=0, mean_silence_s=0.5))
    assert len(frames) > 20 and np.abs(rec.assistant).max() > 0.01
