"""The GRU policy, its checkpoints, the ``policy`` agent, a tiny training run and the CLI config."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from fdenv.sim.env import RoomEnv
from fdenv.train import TurnActions
from fdenv.train.actions import OWN_DIM
from fdenv.train.features import LogMelFeatures
from fdenv.train.policy import TurnPolicy, load, save
from tests.helpers import scene

FINAL = scene([{"id": "t0", "speaker": "Ann", "label": "ctx", "text": "I am writing a card."},
               {"id": "t1", "speaker": "Ann", "label": "final", "addressee": "Aria",
                "text": "Aria, how do you spell library?", "gold_answer": "It is spelled L I B R A R Y."}],
              kind="turn_taking")
FEATURES = {"sample_rate": 16000, "history": 6, "n_mels": 8, "sub_frames": 4, "context": [1.0, 4.0]}
N_FEATURES = 4 * 8 + OWN_DIM + 4


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    pol = TurnPolicy(N_FEATURES, hidden=16)
    with torch.no_grad():
        pol.pi.bias.copy_(torch.tensor([0.0, -3.0, 0.2]))  # talks now and then, so that both paths run
    return save(pol, tmp_path_factory.mktemp("ckpt") / "p.pt", FEATURES, {"names": ["silent", "backchannel", "speak"]})


def test_checkpoint_round_trip(checkpoint):
    pol, meta = load(checkpoint)
    assert meta["features"]["history"] == 6 and pol.hidden == 16
    x = np.random.default_rng(0).standard_normal((3, 6, N_FEATURES)).astype(np.float32)
    assert pol.act(x).shape == (3,) and pol.act(x[0]).shape == ()
    with pytest.raises(FileNotFoundError, match="fdenv-train"):
        load(checkpoint.parent / "missing.pt")


def test_policy_agent_sees_what_the_training_env_shows(checkpoint):
    """The agent in fdenv-run and the wrappers in training build the same observations."""
    from fdenv.run import run_episode
    from fdenv_agents import make_agent

    voice = "en-us+f4"
    agent = make_agent("policy", checkpoint=str(checkpoint), voice=voice)
    seen = []
    push = None

    result = None
    env = RoomEnv(scene=FINAL)
    # record the agent's feature windows
    orig_reset = agent.reset

    def reset(*a, **k):
        nonlocal push
        orig_reset(*a, **k)
        push = agent.history.push

        def spy(audio, own=None):
            out = push(audio, own)
            seen.append(out)
            return out

        agent.history.push = spy

    agent.reset = reset
    result = run_episode(env, agent, seed=0)
    assert not result.record.privileged
    pol, meta = load(checkpoint)
    wrapped = LogMelFeatures(TurnActions(RoomEnv(scene=FINAL), content="fitting", voice=voice), history=6, n_mels=8,
                             context=(1.0, 4.0))
    obs, _ = wrapped.reset(seed=0)
    for k, feats in enumerate(seen):
        np.testing.assert_allclose(obs, feats, atol=1e-5, err_msg=f"frame {k}")
        obs, _, term, _, _ = wrapped.step(int(pol.act(obs)))
        if term:
            break
    assert k == len(seen) - 1
    assert agent.stats()["decisions"]["speak"] > 0
    assert result.record.assistant.any()


def test_policy_agent_config_and_gold_content(checkpoint):
    from fdenv_agents import AGENTS, make_agent

    assert "policy" in AGENTS
    a = make_agent("policy", checkpoint=str(checkpoint))
    assert a.privileged is False and len(a.config()["checkpoint_sha"]) == 12
    g = make_agent("policy", checkpoint=str(checkpoint), content="gold")
    assert g.privileged is True
    with pytest.raises(ValueError, match="content"):
        make_agent("policy", checkpoint=str(checkpoint), content="script")


def test_a_tiny_training_run_writes_checkpoints_and_a_curve(tmp_path):
    from fdenv.train.ppo import train

    cfg = {"env": {"sets": ["turn_taking"], "split": "val"}, "features": {"history": 4, "n_mels": 8},
           "policy": {"hidden": 8}, "workers": 1, "time_limit_min": 3,
           "bc": {"frames": 64, "rollout": 32, "buffer": 256, "minibatch": 32},
           "ppo": {"frames": 64, "rollout": 32, "minibatch": 32, "critic_warmup": 1},
           "eval": {"per_set": 1, "every_s": 1e9}}
    summary = train(cfg, out=tmp_path, log=lambda s: None)
    assert summary["frames"] == 128
    for name in ("policy.pt", "best.pt", "bc.pt", "learning_curve.png", "metrics.jsonl", "summary.json"):
        assert (tmp_path / name).is_file(), name
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert {r["phase"] for r in rows} >= {"start", "bc", "bc_end", "ppo_critic", "ppo", "end"}
    pol, meta = load(tmp_path / "policy.pt")
    assert meta["features"]["history"] == 4 and meta["train"]["frames"] == 128


def test_train_config_loads_and_is_checked():
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from fdenv.cli.train import ConfigError, check_config
    from fdenv.paths import CONF_DIR
    from fdenv.train.ppo import DEFAULTS

    with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
        cfg = OmegaConf.to_container(compose(config_name="train", overrides=["workers=1", "rewards.pause=2.0"]),
                                     resolve=True)
    check_config(cfg)
    assert cfg["rewards"]["pause"] == 2.0
    for key in DEFAULTS:  # the yaml spells out every default
        assert key in cfg, key
    bad = dict(cfg, env=dict(cfg["env"], sets=["pauses"]))
    with pytest.raises(ConfigError, match="pauses"):
        check_config(bad)


def test_the_shipped_checkpoint_loads_with_the_default_features():
    from fdenv_agents import make_agent

    agent = make_agent("policy")  # conf/agent/policy.yaml: checkpoint null -> the shipped one
    assert agent.config()["checkpoint"] == "shipped:turn_policy.pt"
    agent.reset("", 16000, 1280)
    out = agent.act(np.zeros((1, 1280), np.float32))
    assert out.shape == (1280,) and out.dtype == np.float32


def test_noop_action_reads_the_own_state_columns_of_real_observations():
    """The no-op (what behaviour cloning weighs targets against) is "go on" exactly while a clip
    plays, read from the own-state columns, not from the context averages after them."""
    from fdenv.train import TurnTakingEnv
    from fdenv.train.actions import BACKCHANNEL, SILENT, SPEAK
    from fdenv.train.ppo import noop_action

    env = TurnTakingEnv(scenes=[FINAL], features={"history": 4, "n_mels": 8, "context": [1.0, 4.0]}, teacher=False)
    obs, _ = env.reset(seed=0)
    # speak early and hold "speak" long after the clip ends (the decision holds, nothing plays),
    # then a backchannel, then silence while the user talks (the mic level average rises)
    script = [SILENT] * 3 + [SPEAK] * 70 + [SILENT] + [BACKCHANNEL] * 6 + [SILENT] * 200
    got, want = [], []
    for a in script:
        obs, _, term, trunc, info = env.step(a)
        got.append(int(noop_action(obs[None], n_context=2)[0]))
        ta = info["turn_action"]
        want.append(SPEAK if ta["utterance"] or ta["backchannel"] else SILENT)
        if term or trunc:
            break
    assert got == want
    assert SPEAK in want and want.count(SILENT) > 50
