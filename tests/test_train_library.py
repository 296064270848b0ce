"""The training env with RL libraries as their users call them: Stable-Baselines3's
``make_vec_env`` and PPO, gymnasium's ``RecordEpisodeStatistics``, and a CleanRL-style loop."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import fdenv.train  # noqa: F401  (registers fdenv/WhenToSpeak-v0)
from fdenv.train import ENV_ID, SILENT, SPEAK
from fdenv.train.features import one_thread
from tests.helpers import scene

SHORT = scene([{"id": "t1", "speaker": "Ann", "label": "final", "addressee": "Aria",
                "text": "Aria, how do you spell library?", "gold_answer": "It is spelled L I B R A R Y."}],
              kind="turn_taking")
KW = {"scenes": [SHORT], "features": {"history": 6, "n_mels": 8}, "teacher": False, "lean_info": True}


def test_record_episode_statistics_counts_the_env_return():
    env = gym.wrappers.RecordEpisodeStatistics(gym.make(ENV_ID, **KW))
    env.reset(seed=0)
    total, n = 0.0, 0
    while True:
        _, r, term, trunc, info = env.step(SPEAK if 10 <= n < 20 else SILENT)
        total, n = total + r, n + 1
        if term or trunc:
            break
    assert info["episode"]["l"] == n == info["turn_episode"]["length"]
    assert info["episode"]["r"] == pytest.approx(total, abs=1e-5)
    assert info["turn_episode"]["return"] == pytest.approx(total, abs=1e-5)
    assert total != 0.0  # talking into the user's request costs: the count is of something


def test_rgb_array_render_shows_the_feature_window():
    env = gym.make(ENV_ID, render_mode="rgb_array", **KW)
    obs, _ = env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.shape == (obs.shape[1] * 4, obs.shape[0] * 4, 3)
    with pytest.raises(ValueError, match="render_mode='human'"):
        fdenv.train.TurnTakingEnv(render_mode="human", **KW)


def test_stable_baselines3_make_vec_env_and_ppo():
    sb3 = pytest.importorskip("stable_baselines3", reason="the test extra installs stable-baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(ENV_ID, n_envs=2, seed=0, env_kwargs=KW)  # asks for render_mode="rgb_array"
    assert venv.render_mode == "rgb_array"
    model = sb3.PPO("MlpPolicy", venv, n_steps=320, batch_size=160, n_epochs=1, seed=0, device="cpu",
                    policy_kwargs={"net_arch": [16]})
    before = [p.detach().clone() for p in model.policy.parameters()]
    with one_thread():  # tiny nets: a second intra-op thread only contends on a busy machine
        model.learn(total_timesteps=640)
    assert model.num_timesteps == 640
    assert len(model.ep_info_buffer) >= 2  # Monitor saw whole episodes end (153 frames and more: talking extends them)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters()))
    obs = venv.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (2,) and set(action.tolist()) <= {0, 1, 2}
    venv.close()


def test_cleanrl_style_loop():
    """A CleanRL-shaped PPO step: vector env of wrapped envs, episode stats from ``infos``."""

    def make_env():
        return gym.wrappers.RecordEpisodeStatistics(gym.make(ENV_ID, **KW))

    envs = gym.vector.SyncVectorEnv([make_env for _ in range(2)])
    n_obs = int(np.prod(envs.single_observation_space.shape))
    torch.manual_seed(0)
    actor = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(n_obs, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    obs, _ = envs.reset(seed=1)
    steps, returns, running = 320, [], np.zeros(2)
    b_obs, b_act, b_rew = [], [], []
    for _ in range(steps):
        x = torch.as_tensor(obs)
        with torch.no_grad(), one_thread():
            a = torch.distributions.Categorical(logits=actor(x)).sample()
        obs, r, term, trunc, infos = envs.step(a.numpy())
        b_obs.append(x), b_act.append(a), b_rew.append(torch.as_tensor(r, dtype=torch.float32))
        running += r
        if "episode" in infos:
            for i in np.flatnonzero(infos["_episode"]):
                returns.append(float(infos["episode"]["r"][i]))
                assert returns[-1] == pytest.approx(running[i], abs=1e-4)
        running[np.logical_or(term, trunc)] = 0.0  # next-step autoreset: the next step is a reset
    envs.close()
    assert len(returns) >= 2
    # one REINFORCE-style gradient step on the batch (the loop's update)
    logp = torch.distributions.Categorical(logits=actor(torch.cat(b_obs))).log_prob(torch.cat(b_act))
    loss = -(logp * torch.cat(b_rew)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
