"""Gymnasium API conformance for every registered id (Done-when 2 of the foundation)."""

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import fdenv  # noqa: F401  (registers the ids)
from fdenv.sim import ALL_IDS

IDS = [env_id for env_id in gym.registry if env_id.startswith("fdenv/")]


def test_every_id_is_registered():
    assert sorted(IDS) == sorted(ALL_IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_with_warnings_as_errors(env_id):
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


def rollout_50(env_id, seed=0, **kwargs):
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs]
    labels = [info["labels"]]
    for _ in range(50):
        a = rng.uniform(-0.3, 0.3, env.action_space.shape).astype(np.float32)
        obs, r, term, trunc, info = env.step(a)
        out.append(obs)
        labels.append(info["labels"])
        if term or trunc:
            break
    return np.stack(out), labels, info


@pytest.mark.parametrize("env_id", IDS)
def test_50_step_rollout_is_bit_identical(env_id):
    a, la, _ = rollout_50(env_id)
    b, lb, _ = rollout_50(env_id)
    assert a.dtype == np.float32 and a.tobytes() == b.tobytes()
    assert la == lb
    assert np.abs(a).max() > 0.01, "no speech in the first 4 s"


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


@pytest.mark.parametrize("env_id", IDS)
def test_env_pickles_mid_episode(env_id):
    env = gym.make(env_id)
    env.reset(seed=1)
    for _ in range(5):
        env.step(np.zeros(env.action_space.shape, np.float32))
    clone = pickle.loads(pickle.dumps(env))
    a = np.full(env.action_space.shape, 0.1, np.float32)
    o1, *_ = env.step(a)
    o2, *_ = clone.step(a)
    assert o1.tobytes() == o2.tobytes()


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
