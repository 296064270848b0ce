"""Gymnasium API conformance for every registered id (Done-when 2 of the foundation), through
the checks fdenv ships for others (``fdenv.testing``)."""

import gymnasium as gym
import numpy as np
import pytest

import fdenv  # noqa: F401  (registers the ids)
from fdenv.sim import ALL_IDS
from fdenv.testing import agent_check, api_check, determinism_check, rollout, scene_set_check
from fdenv_agents import AGENTS, make_agent

# The training env registers itself when fdenv.train is imported (its own tests cover it); which
# other test module ran first must not change what this file checks.
TRAINING_IDS = {"fdenv/WhenToSpeak-v0"}
IDS = [env_id for env_id in gym.registry if env_id.startswith("fdenv/") and env_id not in TRAINING_IDS]


def test_every_id_is_registered():
    assert sorted(IDS) == sorted(ALL_IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_and_pickling(env_id):
    api_check(env_id)


@pytest.mark.parametrize("env_id", IDS)
def test_50_step_rollout_is_bit_identical(env_id):
    determinism_check(env_id, steps=50)
    frames, _ = rollout(env_id, 50)
    assert np.abs(frames).max() > 0.01, "no speech in the first 4 s"


def test_seed_picks_the_scene():
    env = gym.make("fdenv/TurnTaking-v0")
    ids = {env.reset(seed=s)[1]["scene_id"] for s in range(8)}
    assert len(ids) > 1
    assert env.reset(seed=3)[1]["scene_id"] == env.reset(seed=3)[1]["scene_id"]
    first = env.unwrapped.scenes[5].id
    assert env.reset(seed=0, options={"scene": 5})[1]["scene_id"] == first
    assert env.reset(options={"scene": first})[1]["scene_id"] == first


@pytest.mark.parametrize("split", ["train", "val", "test", "all"])
def test_splits(split):
    env = gym.make("fdenv/PauseHandling-v0", split=split)
    n = len(env.unwrapped.scenes)
    assert n > 0
    if split != "all":
        assert n < len(gym.make("fdenv/PauseHandling-v0").unwrapped.scenes)


def test_room_env_without_a_scene_takes_the_first_turn_taking_scene_of_its_split():
    from fdenv.scene import load_set

    for split in ("train", "test"):
        assert gym.make("fdenv/Room-v0", split=split).unwrapped.scenes == load_set("turn_taking", split)[:1]
    with pytest.raises(ValueError, match="split 'bogus'"):
        gym.make("fdenv/Room-v0", split="bogus")


def test_async_vector_env_100_steps():
    envs = gym.make_vec("fdenv/TurnTaking-v0", num_envs=4, vectorization_mode="async")
    obs, info = envs.reset(seed=0)
    assert obs.shape == (4, 1, 1280)
    for _ in range(100):
        obs, r, term, trunc, info = envs.step(np.zeros((4, 1280), np.float32))
    assert obs.shape == (4, 1, 1280) and np.isfinite(obs).all()
    envs.close()


def test_24khz_moshi_frames():
    env = gym.make("fdenv/TurnTaking-v0", sample_rate=24000)
    obs, info = env.reset(seed=0)
    assert obs.shape == (1, 1920) and info["frame_samples"] == 1920
    obs, *_ = env.step(np.zeros(1920, np.float64))
    assert obs.dtype == np.float32


@pytest.mark.parametrize("name", ["silent", "talker", "oracle"])
def test_baseline_agents_give_valid_frames(name):
    record = agent_check(make_agent(name), "fdenv/Interruption-v0")
    assert record.n_frames > 50
    assert name in AGENTS


@pytest.mark.parametrize("name", ["pause", "backchannel", "turn_taking", "interruption", "mpe"])
def test_shipped_sets(name):
    scene_set_check(name)
