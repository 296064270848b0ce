"""Checks that people adding a scene set, a room or an agent can call from their own tests
(as ``pettingzoo.test`` does). fdenv's own tests use them too.

    from fdenv.testing import api_check, determinism_check, agent_check, scene_set_check
    api_check("fdenv/TurnTaking-v0", room="office")
    determinism_check("fdenv/TurnTaking-v0", steps=50)
    agent_check(MyAgent(), "fdenv/TurnTaking-v0")
    scene_set_check("my_set")
"""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np

import fdenv  # noqa: F401  (registers the ids)


def api_check(env_id: str, **kwargs) -> None:
    """Gymnasium's ``check_env`` with warnings as errors, plus pickling mid-episode."""
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    env.reset(seed=1)
    zeros = np.zeros(env.action_space.shape, np.float32)
    for _ in range(5):
        env.step(zeros)
    clone = pickle.loads(pickle.dumps(env))
    a = np.full(env.action_space.shape, 0.1, np.float32)
    if env.step(a)[0].tobytes() != clone.step(a)[0].tobytes():
        raise AssertionError(f"{env_id}: a pickled copy does not continue identically")
    env.close()


def rollout(env_id: str, steps: int = 50, seed: int = 0, **kwargs) -> tuple[np.ndarray, list[dict]]:
    """Observations and labels of ``steps`` steps with seeded random actions."""
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames, labels = [obs], [info["labels"]]
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(rng.uniform(-0.3, 0.3, env.action_space.shape).astype(np.float32))
        frames.append(obs)
        labels.append(info["labels"])
        if terminated or truncated:
            break
    env.close()
    return np.stack(frames), labels


def determinism_check(env_id: str, steps: int = 50, seed: int = 0, **kwargs) -> None:
    """Two envs, same seed and actions: bit-identical observations and identical labels."""
    a, la = rollout(env_id, steps, seed, **kwargs)
    b, lb = rollout(env_id, steps, seed, **kwargs)
    if a.dtype != np.float32 or a.tobytes() != b.tobytes():
        raise AssertionError(f"{env_id}: observations differ between two runs with seed {seed}")
    if la != lb:
        raise AssertionError(f"{env_id}: labels differ between two runs with seed {seed}")


def agent_check(agent, env_id: str = "fdenv/TurnTaking-v0", seed: int = 0, **kwargs):
    """One full episode through the runner: every action is one valid frame. Returns the record."""
    from .run import run_episode

    env = gym.make(env_id, **kwargs)
    original_step = env.step
    frame_samples = env.action_space.shape

    def checked_step(action):
        a = np.asarray(action)
        if a.shape != frame_samples or a.dtype.kind != "f" or not np.isfinite(a).all():
            raise AssertionError(f"{type(agent).__name__}.act returned {a.dtype} {a.shape}; expected finite float {frame_samples}")
        return original_step(action)

    env.step = checked_step
    record = run_episode(env, agent, seed=seed).record
    env.close()
    return record


def scene_set_check(name: str) -> None:
    """Every scene of a set loads and plays one frame; the manifest's splits cover the set."""
    from .scene import load_set, scene_ids

    all_ids = scene_ids(name, "all")
    split_ids = [i for split in ("train", "val", "test") for i in scene_ids(name, split)]
    if sorted(all_ids) != sorted(split_ids) or len(set(split_ids)) != len(split_ids):
        raise AssertionError(f"{name}: train/val/test do not partition the set")
    from .sim.env import RoomEnv

    env = RoomEnv(scene=load_set(name, "all"))
    for i in range(len(env.scenes)):
        obs, info = env.reset(seed=0, options={"scene": i})
        if obs.shape != env.observation_space.shape:
            raise AssertionError(f"{name}: scene {info['scene_id']} gives an observation of shape {obs.shape}")
