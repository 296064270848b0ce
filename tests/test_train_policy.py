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


STREAM_FEATURES = {**FEATURES, "history": 1, "normalise": "floor", "playback": True}
STREAM_N_FEATURES = 4 * 8 + 8 + 1 + OWN_DIM + 4


def _save(path, n_features, features, recurrent):
    torch.manual_seed(0)
    pol = TurnPolicy(n_features, hidden=16, recurrent=recurrent)
    with torch.no_grad():
        pol.pi.bias.copy_(torch.tensor([0.0, -3.0, 0.2]))  # talks now and then, so that both paths run
    return save(pol, path, features, {"names": ["silent", "backchannel", "speak"]})


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return _save(tmp_path_factory.mktemp("ckpt") / "p.pt", N_FEATURES, FEATURES, recurrent=False)


@pytest.fixture(scope="module")
def stream_checkpoint(tmp_path_factory):
    return _save(tmp_path_factory.mktemp("ckpt") / "s.pt", STREAM_N_FEATURES, STREAM_FEATURES, recurrent=True)


def test_checkpoint_round_trip(checkpoint):
    pol, meta = load(checkpoint)
    assert meta["features"]["history"] == 6 and pol.hidden == 16
    x = np.random.default_rng(0).standard_normal((3, 6, N_FEATURES)).astype(np.float32)
    assert pol.act(x).shape == (3,) and pol.act(x[0]).shape == ()
    with pytest.raises(FileNotFoundError, match="fdenv-train"):
        load(checkpoint.parent / "missing.pt")


@pytest.mark.parametrize("kind", ["window", "stream"])
def test_policy_agent_sees_what_the_training_env_shows(kind, checkpoint, stream_checkpoint):
    """The agent in fdenv-run and the wrappers in training build the same observations (with an
    echo, for the streaming policy's playback features) and take the same decisions."""
    from fdenv.run import run_episode
    from fdenv_agents import make_agent

    voice = "en-us+f4"
    ckpt = checkpoint if kind == "window" else stream_checkpoint
    room = None if kind == "window" else {"preset": "anechoic", "echo_gain": 0.5, "noise": "pink", "snr_db": 30.0}
    agent = make_agent("policy", checkpoint=str(ckpt), voice=voice)
    seen = []
    push = None

    result = None
    # record the agent's feature windows
    orig_reset = agent.reset

    def reset(*a, **k):
        nonlocal push
        orig_reset(*a, **k)
        push = agent.history.push

        def spy(*args):
            out = push(*args)
            seen.append(out)
            return out

        agent.history.push = spy

    agent.reset = reset
    env = RoomEnv(scene=FINAL, room=room)
    result = run_episode(env, agent, seed=0)
    assert not result.record.privileged
    pol, meta = load(ckpt)
    f = {k: v for k, v in meta["features"].items() if k != "sample_rate"}
    wrapped = LogMelFeatures(TurnActions(RoomEnv(scene=FINAL, room=room), content="fitting", voice=voice), **f)
    obs, _ = wrapped.reset(seed=0)
    state = None
    for k, feats in enumerate(seen):
        np.testing.assert_allclose(obs, feats, atol=1e-5, err_msg=f"frame {k}")
        a, state = pol.act_stream(obs, state)
        obs, _, term, _, _ = wrapped.step(int(a))
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

    cfg = {"env": {"sets": ["turn_taking"], "split": "val", "randomize": True}, "features": {"n_mels": 8},
           "policy": {"hidden": 8}, "workers": 0, "envs": 2, "chunk": 16, "time_limit_min": 3,
           "bc": {"frames": 64, "rollout": 32, "minibatch": 2},
           "ppo": {"frames": 128, "rollout": 32, "minibatch": 2, "critic_warmup": 1},
           "eval": {"per_set": 1, "every_s": 1e9}}
    said = []
    summary = train(cfg, out=tmp_path, log=said.append)
    assert summary["frames"] == 192
    for name in ("policy.pt", "best.pt", "bc.pt", "learning_curve.png", "metrics.jsonl", "summary.json"):
        assert (tmp_path / name).is_file(), name
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert {r["phase"] for r in rows if "phase" in r} >= {"start", "bc", "bc_end", "ppo_critic", "ppo", "end"}
    pol, meta = load(tmp_path / "policy.pt")
    assert pol.recurrent and meta["features"]["normalise"] == "floor" and meta["train"]["frames"] == 192
    # progress: the budget and the time left on every update line, and no "nan" for a return
    updates = [x for x in said if x.startswith(("[bc]", "[ppo]"))]
    assert len(updates) == 3 and all("of 3:00" in x and "left" in x for x in updates)
    assert not any("nan" in x for x in said)
    assert all("no episode ended" in x for x in updates)  # 32 frames per env: no episode ends


def test_training_says_when_the_policy_collapsed_to_silence(tmp_path, monkeypatch):
    """A policy whose greedy decision is always silent is reported as collapsed."""
    from fdenv.train import ppo

    real = ppo.TurnPolicy

    def silent_policy(*a, **k):
        pol = real(*a, **k)
        with torch.no_grad():
            pol.pi.bias.copy_(torch.tensor([50.0, -50.0, -50.0]))
            pol.pi.weight.zero_()
        return pol

    monkeypatch.setattr(ppo, "TurnPolicy", silent_policy)
    cfg = {"env": {"sets": ["turn_taking"], "split": "val", "randomize": True}, "features": {"n_mels": 8},
           "policy": {"hidden": 8},
           "workers": 0, "envs": 1, "chunk": 16, "time_limit_min": 3, "bc": {"frames": 0},
           "ppo": {"frames": 32, "rollout": 32, "minibatch": 2, "critic_warmup": 4},
           "eval": {"per_set": 1, "every_s": 1e9}}
    said = []
    summary = ppo.train(cfg, out=tmp_path, log=said.append)
    assert summary["collapsed"] is True
    assert any("collapsed to always-silent" in x for x in said)


def test_best_checkpoint_is_a_trained_policy_that_speaks_when_there_is_one(tmp_path, monkeypatch):
    """Always-silent earns a fair validation return (holding is right on many frames), so the
    return alone picked an early silent checkpoint; ``best.pt`` is now the best-returning trained
    policy that speaks, and the best return only when none does."""
    from fdenv.train import ppo

    # the evaluations' results in order: the untrained start speaks (random), cloning then goes
    # silent with a better return, then speaks with a worse one, then silent again
    script = [(-0.88, 40), (-0.50, 0), (-0.70, 12), (-0.30, 0), (-0.90, 0)]

    class Scripted:
        def __init__(self, cfg):
            self.calls = 0

        def __call__(self, policy, threshold=None):
            ret, talk = script[min(self.calls, len(script) - 1)]
            self.calls += 1
            return {"val_return": ret, "val_talk_frames": talk, "val_frames": 100,
                    "val_by_kind": {"turn_taking": ret}, "val_terms": {"latency": ret}}

    monkeypatch.setattr(ppo, "Evaluator", Scripted)
    cfg = {"env": {"sets": ["turn_taking"], "split": "val", "randomize": True}, "features": {"n_mels": 8},
           "policy": {"hidden": 8}, "workers": 0, "envs": 1, "chunk": 16, "time_limit_min": 3,
           "bc": {"frames": 96, "rollout": 32, "minibatch": 2},
           "ppo": {"frames": 0}, "eval": {"per_set": 1, "every_s": 0}}
    ppo.train(cfg, out=tmp_path, log=lambda _: None)
    evals = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in evals if r.get("kind") == "eval"]
    assert [r["val_return"] for r in evals][:4] == [-0.88, -0.50, -0.70, -0.30]
    _, meta = load(tmp_path / "best.pt")
    assert meta["train"]["val_return"] == -0.70 and meta["train"]["frames"] == evals[2]["frames"] > 0

    key = ppo.selection_key
    start = {"frames": 0, "collapsed": False, "val_return": -0.88}
    silent = {"frames": 10, "collapsed": True, "val_return": -0.50}
    assert key(silent) > key(start)  # the untrained start is not a trained policy that speaks
    assert key({"frames": 20, "collapsed": False, "val_return": -0.95}) > key(silent)


def test_streaming_gru_matches_the_unrolled_sequence():
    """Stepping frame by frame with the carried state gives what training's unroll computes over
    the same frames, including an episode that starts in the middle of the chunk."""
    torch.manual_seed(0)
    pol = TurnPolicy(N_FEATURES, hidden=16, recurrent=True)
    rows = torch.randn(3, 20, N_FEATURES)
    starts = torch.zeros(3, 20, dtype=torch.bool)
    starts[1, 7] = starts[2, 13] = True
    h0 = torch.randn(2, 3, 16)
    logits, values, last = pol.unroll(rows, h0, starts)
    state = h0.clone()
    for t in range(20):
        state = state * (~starts[:, t]).float()[None, :, None]
        lg, v, state = pol.step(rows[:, t][:, None], state)
        torch.testing.assert_close(lg, logits[:, t], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(v, values[:, t], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(state, last, atol=1e-5, rtol=1e-5)
    # the state matters: from a zero state the same rows give other logits
    other, _, _ = pol.unroll(rows, torch.zeros_like(h0))
    assert not torch.allclose(other[0, :5], logits[0, :5], atol=1e-4)


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
    from fdenv.train.envs import RANDOMIZE

    # the yaml spells out the env's draws, with both voice back ends drawn (the trainer's default)
    assert cfg["env"]["randomize"] == {**RANDOMIZE, **DEFAULTS["env"]["randomize"]}
    assert DEFAULTS["env"]["randomize"]["tts"] == ["espeak", "kokoro"]
    bad = dict(cfg, env=dict(cfg["env"], sets=["pauses"]))
    with pytest.raises(ConfigError, match="pauses"):
        check_config(bad)
    for weight in (-1.0, "high", float("nan")):
        with pytest.raises(ConfigError, match="ppo.ref_kl"):
            check_config(dict(cfg, ppo=dict(cfg["ppo"], ref_kl=weight)))


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


def test_policy_agent_takes_the_checkpoints_calibrated_threshold(tmp_path):
    from fdenv_agents import make_agent

    torch.manual_seed(0)
    pol = TurnPolicy(STREAM_N_FEATURES, hidden=8, recurrent=True)
    path = save(pol, tmp_path / "t.pt", STREAM_FEATURES, {"names": ["silent", "backchannel", "speak"], "threshold": 0.3})
    assert make_agent("policy", checkpoint=str(path)).threshold == 0.3
    assert make_agent("policy", checkpoint=str(path), threshold=0.6).config()["threshold"] == 0.6
    plain = save(pol, tmp_path / "p.pt", STREAM_FEATURES, {"names": ["silent", "backchannel", "speak"]})
    assert make_agent("policy", checkpoint=str(plain)).threshold is None
    with pytest.raises(ValueError, match="threshold"):
        make_agent("policy", checkpoint=str(plain), threshold=1.5)
    from fdenv_agents.policy import default_checkpoint

    assert load(default_checkpoint())[1]["actions"]["threshold"] == 0.4  # the shipped one, chosen on validation


def _tiny_ppo(tmp_path, init, ref_kl):
    from fdenv.train.ppo import train

    cfg = {"env": {"sets": ["turn_taking"], "split": "val", "randomize": True}, "features": {"n_mels": 8},
           "policy": {"hidden": 8}, "workers": 0, "envs": 2, "chunk": 16, "time_limit_min": 3, "init": str(init),
           "bc": {"frames": 0}, "ppo": {"frames": 192, "rollout": 32, "minibatch": 2, "critic_warmup": 1,
                                        "lr": 0.03, "target_kl": None, "ref_kl": ref_kl},
           "eval": {"per_set": 1, "every_s": 1e9}}
    train(cfg, out=tmp_path, log=lambda s: None)
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    return load(tmp_path / "policy.pt")[0], [r for r in rows if r.get("phase") == "ppo"]


def test_ppo_with_a_reference_stays_nearer_the_policy_it_started_from(tmp_path):
    """``ppo.ref_kl`` adds KL(start || policy) to the loss: from the same start, on the same
    episodes, a large weight leaves the policy's decisions nearer the start's than no weight does,
    and the logged distance to the reference is a finite KL (>= 0)."""
    from fdenv.train.ppo import DEFAULTS

    torch.manual_seed(1)
    n = 4 * 8 + 8 + 1 + OWN_DIM + 4
    start = save(TurnPolicy(n, hidden=8, recurrent=True), tmp_path / "start.pt",
                 {**DEFAULTS["features"], "sample_rate": 16000, "n_mels": 8}, {"names": ["silent", "backchannel", "speak"]})
    ref, _ = load(start)
    free, free_rows = _tiny_ppo(tmp_path / "free", start, 0.0)
    held, held_rows = _tiny_ppo(tmp_path / "held", start, 100.0)
    assert free_rows and held_rows and all(r["ref_kl"] == 0.0 for r in free_rows)
    assert all(np.isfinite(r["ref_kl"]) and r["ref_kl"] >= 0 for r in held_rows)
    rows = torch.randn(4, 40, n)

    def distance(pol):  # mean KL(start || pol) over the same frames
        with torch.no_grad():
            p = torch.log_softmax(ref.unroll(rows, ref.initial_state(4), critic=False)[0], -1)
            q = torch.log_softmax(pol.unroll(rows, pol.initial_state(4), critic=False)[0], -1)
        return float((p.exp() * (p - q)).sum(-1).mean())

    assert distance(held) < 0.5 * distance(free)


def test_the_reference_carries_its_own_state_through_the_rollouts():
    """The collector steps the reference on the same observations with its own GRU state, reset
    where an episode starts: the same states as stepping a copy of it by hand over the rollout."""
    import copy

    from fdenv.train.envs import make_vec
    from fdenv.train.ppo import DEFAULTS, Collector, env_kwargs, merge

    cfg = merge(DEFAULTS, {"env": {"sets": ["turn_taking"], "split": "val", "randomize": True},
                           "features": {"n_mels": 8}})
    envs = make_vec(2, processes=False, **env_kwargs(cfg))
    torch.manual_seed(0)
    pol = TurnPolicy(envs.single_observation_space.shape[-1], hidden=8, recurrent=True)
    col = Collector(envs, pol, seed=0)
    col.run(8, lambda t, logits: col.sample(logits))
    ref = copy.deepcopy(pol).requires_grad_(False)
    col.follow(ref)
    ro = col.run(16, lambda t, logits: col.sample(logits))
    torch.testing.assert_close(ro.ref_state[:, 0], ro.state[:, 0], rtol=0, atol=0)  # an unchanged copy agrees
    with torch.no_grad():
        pol.pi.bias.add_(torch.tensor([-2.0, 0.0, 2.0]))
        for w in pol.actor.gru.parameters():
            w.mul_(1.5)
    ro = col.run(300, lambda t, logits: col.sample(logits))
    assert ro.starts[1:].any(), "an episode should end inside the rollout"
    state = ro.ref_state[0].clone()
    for t in range(ro.T):
        state = state * torch.as_tensor(~ro.starts[t], dtype=torch.float32)[None, :, None]
        torch.testing.assert_close(ro.ref_state[t, 0], state[0], rtol=0, atol=1e-6)
        _, _, state = ref.step(torch.as_tensor(ro.rows[t])[:, None], state, critic=False)
    assert not torch.allclose(ro.ref_state[:, 0], ro.state[:, 0])
    envs.close()


def test_fdenv_train_says_when_kokoro_clips_are_not_cached_yet(tmp_path, monkeypatch):
    """Kokoro drawn with a cold clip cache: one log line with how many clips are missing and the
    command that renders them; espeak alone, or a warm cache: nothing."""
    from fdenv.cli.scenes import uncached
    from fdenv.cli.train import cold_clips_note

    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    env = {"sets": ["turn_taking"], "split": "val", "tts": "espeak", "sample_rate": 16000,
           "randomize": {"tts": ["espeak", "kokoro"]}}
    missing, total = uncached("kokoro", ["turn_taking"], "val")
    assert missing == total > 100
    note = cold_clips_note({"env": env})
    assert f"{total:,} of the {total:,} Kokoro clips" in note
    assert "fdenv-scenes render <set> --split val --tts kokoro" in note and "turn_taking" in note
    assert cold_clips_note({"env": {**env, "randomize": {"tts": None}}}) is None
    assert cold_clips_note({"env": {**env, "randomize": True}}) is None
    monkeypatch.setattr("fdenv.cli.scenes.uncached", lambda *a, **k: (0, total))  # a warm cache
    assert cold_clips_note({"env": env}) is None
