"""Behaviour cloning from the oracle's decisions, then PPO, on async vector envs.

``train(cfg, out)`` runs both phases under one wall-clock budget and writes into ``out``:
``policy.pt`` (last), ``best.pt`` (best greedy return on the validation episodes), ``bc.pt`` (at the
end of behaviour cloning), ``metrics.jsonl``
(one line per update and per evaluation) and ``learning_curve.png``.

1. **Behaviour cloning** (DAgger-style): the envs report the oracle's decision for every frame
   (``OracleTeacher``, from the labels). The behaviour policy follows the teacher with probability
   ``beta`` (from ``beta_start`` down to ``beta_end``) and the student otherwise; the student
   learns the teacher's decisions on every visited frame (cross-entropy; frames where the teacher
   changes what plays weigh ``change_weight``). The critic learns the behaviour's returns.
2. **PPO** (clipped surrogate, GAE, entropy bonus) on the reward wrappers' dense rewards; the
   first ``critic_warmup`` updates train the critic only.

Greedy evaluation every ``eval.every_s`` seconds on fixed validation episodes (``eval.per_set``
scenes of each set) gives the learning curve.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import policy as policy_io
from .actions import OWN_DIM, SILENT, SPEAK
from .envs import TurnTakingEnv, load_scenes, make_vec
from .features import one_thread, own_columns
from .policy import TurnPolicy
from .rewards import DEFAULT_WEIGHTS

DEFAULTS = {
    "env": {"sets": ["pause", "backchannel", "turn_taking", "interruption", "mpe"], "split": "train", "room": None,
            "tts": "espeak", "sample_rate": 16000, "content": "gold", "scheduler": None, "balance": "kind"},
    "rewards": dict(DEFAULT_WEIGHTS),
    "reward_params": {},
    "takeover_s": 0.72,
    "features": {"history": 24, "n_mels": 32, "sub_frames": 4, "context": [1.0, 4.0]},
    "policy": {"hidden": 64},
    "workers": 2,
    "context": None,
    "seed": 0,
    "threads": 1,
    "time_limit_min": 28.0,
    "bc": {"frames": 400_000, "rollout": 256, "epochs": 2, "minibatch": 512, "lr": 1e-3, "beta_start": 1.0,
           "beta_end": 0.2, "change_weight": 4.0, "buffer": 16384, "response_delay_s": 1.6, "backchannels": True,
           "answer_all": True},
    "ppo": {"frames": 2_000_000, "rollout": 256, "epochs": 3, "minibatch": 512, "lr": 2e-4, "gamma": 0.99,
            "lam": 0.95, "clip": 0.2, "ent_coef": 0.003, "vf_coef": 0.5, "max_grad_norm": 0.5, "critic_warmup": 4},
    "eval": {"every_s": 90.0, "split": "val", "per_set": 4},
}


def merge(base: dict, over: dict | None) -> dict:
    out = dict(base)
    for k, v in (over or {}).items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def env_kwargs(cfg: dict, split: str | None = None, teacher=None, lean_info: bool = True) -> dict:
    e = cfg["env"]
    return {"scene_sets": list(e["sets"]), "split": split or e["split"], "room": e.get("room"), "tts": e["tts"],
            "sample_rate": e["sample_rate"], "scheduler": e.get("scheduler"), "rewards": dict(cfg["rewards"]),
            "reward_params": dict(cfg.get("reward_params") or {}), "takeover_s": cfg["takeover_s"],
            "content": e["content"], "features": dict(cfg["features"]), "teacher": teacher, "lean_info": lean_info,
            "balance": e.get("balance", "kind")}


class _Log:
    def __init__(self, path: Path, echo):
        self.path, self.echo = path, echo
        self.rows: list[dict] = []
        path.write_text("")

    def __call__(self, row: dict, say: str | None = None) -> None:
        self.rows.append(row)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        if say and self.echo:
            self.echo(say)


class Evaluator:
    """Greedy episodes on fixed validation scenes, in this process."""

    def __init__(self, cfg: dict):
        ev = cfg["eval"]
        scenes = []
        for name in cfg["env"]["sets"]:
            scenes.extend(load_scenes([name], ev["split"])[: int(ev["per_set"])])
        self.ids = [s.id for s in scenes]
        kw = env_kwargs(cfg, split=ev["split"], teacher=None, lean_info=True)
        kw.pop("scene_sets"), kw.pop("split")
        self.env = TurnTakingEnv(scenes=scenes, **kw)

    def __call__(self, policy: TurnPolicy) -> dict:
        returns, by_kind, terms = [], {}, {}
        frames = 0
        for sid in self.ids:
            obs, _ = self.env.reset(seed=0, options={"scene": sid})
            while True:
                with one_thread():
                    a = int(policy.act(obs, deterministic=True))
                obs, _, term, trunc, info = self.env.step(a)
                frames += 1
                if term or trunc:
                    break
            ep = info["turn_episode"]
            returns.append(ep["return"])
            by_kind.setdefault(ep["kind"], []).append(ep["return"])
            for k, v in ep["terms"].items():
                terms.setdefault(k, []).append(v)
        return {"val_return": float(np.mean(returns)), "val_frames": frames,
                "val_by_kind": {k: float(np.mean(v)) for k, v in by_kind.items()},
                "val_terms": {k: float(np.mean(v)) for k, v in terms.items()}}


def _episodes(info: dict) -> list[dict]:
    """Finished episodes' stats from a vector step's info (same-step autoreset)."""
    fin = info.get("final_info")
    if not fin or "turn_episode" not in fin:
        return []
    mask = fin.get("_turn_episode", np.zeros(0, bool))
    ep = fin["turn_episode"]
    out = []
    for i in np.flatnonzero(mask):
        out.append({"return": float(ep["return"][i]), "length": int(ep["length"][i]), "kind": str(ep["kind"][i]),
                    "terms": {k: float(v[i]) for k, v in ep["terms"].items() if not k.startswith("_")}})
    return out


def _teacher(info: dict, n: int) -> np.ndarray:
    t = info.get("teacher")
    if t is None:
        raise RuntimeError("behaviour cloning needs the envs' teacher decisions (teacher=True)")
    return np.asarray(t, dtype=np.int64).reshape(n)


def _gae(rewards, values, dones, last_value, gamma, lam):
    T = len(rewards)
    adv = np.zeros_like(rewards)
    nxt_adv = np.zeros(rewards.shape[1], np.float32)
    nxt_val = last_value
    for t in reversed(range(T)):
        nonterminal = 1.0 - dones[t]
        delta = rewards[t] + gamma * nxt_val * nonterminal - values[t]
        nxt_adv = delta + gamma * lam * nonterminal * nxt_adv
        adv[t] = nxt_adv
        nxt_val = values[t]
    return adv, adv + values


def _values(policy: TurnPolicy, obs: np.ndarray) -> np.ndarray:
    with torch.no_grad(), one_thread():
        return policy.value(torch.as_tensor(obs)).numpy()


def noop_action(obs: np.ndarray, n_context: int) -> np.ndarray:
    """For observations ``(..., history, n_features)``: the action that changes nothing, silent when
    nothing plays, speak (go on) when an utterance or a backchannel goes on (own[0], own[1] of the
    newest row)."""
    own = obs[..., -1, own_columns(obs.shape[-1], OWN_DIM, n_context)]
    playing = (own[..., 0] > 0.5) | (own[..., 1] > 0.5)
    return np.where(playing, SPEAK, SILENT)


def train(cfg: dict | None = None, out: str | Path = "runs/train", log=print) -> dict:
    cfg = merge(DEFAULTS, cfg)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train_config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
    torch.manual_seed(cfg["seed"])
    rng = np.random.default_rng(cfg["seed"])
    torch.set_num_threads(max(1, int(cfg["threads"])))
    t0 = time.perf_counter()
    deadline = t0 + 60.0 * float(cfg["time_limit_min"])
    bc, ppo = cfg["bc"], cfg["ppo"]
    teacher = {"response_delay_s": bc["response_delay_s"], "backchannels": bc["backchannels"],
               "answer_all": bc["answer_all"]}
    E = int(cfg["workers"])
    envs = make_vec(E, context=cfg.get("context"), **env_kwargs(cfg, teacher=teacher))
    H, F = envs.single_observation_space.shape
    n_context = len(cfg["features"].get("context") or ())
    pol = TurnPolicy(F, **cfg["policy"])
    evaluator = Evaluator(cfg)
    logger = _Log(out / "metrics.jsonl", log)
    features = {"sample_rate": cfg["env"]["sample_rate"], **cfg["features"]}
    best = {"val_return": -math.inf}
    frames, update, last_eval = 0, 0, -math.inf
    recent: list[dict] = []

    def evaluate(phase: str) -> None:
        nonlocal last_eval, best
        t = time.perf_counter()
        pol.eval()
        res = evaluator(pol)
        pol.train()
        res.update(kind="eval", phase=phase, frames=frames, update=update, time_s=round(time.perf_counter() - t0, 1),
                   eval_s=round(time.perf_counter() - t, 1))
        logger(res, f"[eval {phase}] frames {frames} val return {res['val_return']:.3f} "
                    + " ".join(f"{k}={v:.2f}" for k, v in res["val_by_kind"].items()))
        if res["val_return"] > best["val_return"]:
            best = res
            policy_io.save(pol, out / "best.pt", features, {"names": ["silent", "backchannel", "speak"]},
                           {"frames": frames, "phase": phase, "val_return": res["val_return"]})
        last_eval = time.perf_counter()

    obs, info = envs.reset(seed=int(cfg["seed"]))
    target = _teacher(info, E)
    try:
        # ---------------- behaviour cloning ----------------
        opt = torch.optim.Adam(pol.parameters(), lr=bc["lr"])
        buf_obs = np.zeros((int(bc["buffer"]), H, F), np.float16)
        buf_tgt = np.zeros(int(bc["buffer"]), np.int64)
        buf_w = np.zeros(int(bc["buffer"]), np.float32)
        buf_n, buf_i = 0, 0
        T = int(bc["rollout"])
        evaluate("start")
        while frames < bc["frames"] and time.perf_counter() < deadline:
            frac = min(1.0, frames / max(1, bc["frames"]))
            beta = bc["beta_start"] + (bc["beta_end"] - bc["beta_start"]) * frac
            r_obs = np.zeros((T, E, H, F), np.float32)
            r_tgt = np.zeros((T, E), np.int64)
            r_rew = np.zeros((T, E), np.float32)
            r_done = np.zeros((T, E), np.float32)
            for t in range(T):
                r_obs[t], r_tgt[t] = obs, target
                with one_thread():
                    student = pol.act(obs, deterministic=False)
                use_teacher = rng.random(E) < beta
                action = np.where(use_teacher, target, student)
                obs, rew, term, trunc, info = envs.step(action)
                r_rew[t], r_done[t] = rew, np.logical_or(term, trunc)
                target = _teacher(info, E)
                recent.extend(_episodes(info))
            frames += T * E
            # add to the replay buffer
            flat_obs = r_obs.reshape(T * E, H, F)
            flat_tgt = r_tgt.reshape(-1)
            w = np.where(flat_tgt != noop_action(flat_obs, n_context), float(bc["change_weight"]), 1.0).astype(np.float32)
            for j in range(T * E):
                buf_obs[buf_i], buf_tgt[buf_i], buf_w[buf_i] = flat_obs[j], flat_tgt[j], w[j]
                buf_i = (buf_i + 1) % len(buf_tgt)
                buf_n = min(buf_n + 1, len(buf_tgt))
            # critic targets: the behaviour's returns (GAE with the current critic)
            values = _values(pol, flat_obs).reshape(T, E)
            _, ret = _gae(r_rew, values, r_done, _values(pol, obs), ppo["gamma"], ppo["lam"])
            v_obs, v_ret = torch.as_tensor(flat_obs), torch.as_tensor(ret.reshape(-1))
            losses, accs, vls = [], [], []
            mb = int(bc["minibatch"])
            # ``epochs`` passes' worth of the new frames, drawn from the whole buffer
            for _ in range(max(1, int(round(bc["epochs"] * T * E / mb)))):
                b = rng.integers(0, buf_n, size=min(mb, buf_n))
                x = torch.as_tensor(buf_obs[b].astype(np.float32))
                y = torch.as_tensor(buf_tgt[b])
                wt = torch.as_tensor(buf_w[b])
                logits = pol.logits(x)
                ce = (nn.functional.cross_entropy(logits, y, reduction="none") * wt).sum() / wt.sum()
                vb = torch.as_tensor(rng.integers(0, len(v_ret), size=min(mb, len(v_ret))))
                vl = 0.5 * (pol.value(v_obs[vb]) - v_ret[vb]).pow(2).mean()
                opt.zero_grad()
                (ce + ppo["vf_coef"] * vl).backward()
                nn.utils.clip_grad_norm_(pol.parameters(), 1.0)
                opt.step()
                losses.append(float(ce.detach()))
                vls.append(float(vl.detach()))
                accs.append(float((logits.argmax(-1) == y).float().mean()))
            update += 1
            row = {"kind": "update", "phase": "bc", "update": update, "frames": frames,
                   "time_s": round(time.perf_counter() - t0, 1), "beta": round(beta, 3), "bc_loss": float(np.mean(losses)),
                   "bc_acc": float(np.mean(accs)), "v_loss": float(np.mean(vls)), **_train_stats(recent)}
            recent = []
            logger(row, f"[bc] frames {frames} loss {row['bc_loss']:.3f} acc {row['bc_acc']:.3f} "
                        f"train return {row.get('train_return', float('nan')):.3f} ({row['time_s']:.0f} s)")
            if time.perf_counter() - last_eval > cfg["eval"]["every_s"]:
                evaluate("bc")
        if frames > 0:
            evaluate("bc_end")
            policy_io.save(pol, out / "bc.pt", features, {"names": ["silent", "backchannel", "speak"]},
                           {"frames": frames, "phase": "bc"})
        bc_frames = frames
        # ---------------- PPO ----------------
        opt = torch.optim.Adam(pol.parameters(), lr=ppo["lr"], eps=1e-5)
        T = int(ppo["rollout"])
        ppo_updates = 0
        while frames < bc_frames + ppo["frames"] and time.perf_counter() < deadline:
            r_obs = np.zeros((T, E, H, F), np.float32)
            r_act = np.zeros((T, E), np.int64)
            r_logp = np.zeros((T, E), np.float32)
            r_val = np.zeros((T, E), np.float32)
            r_rew = np.zeros((T, E), np.float32)
            r_done = np.zeros((T, E), np.float32)
            for t in range(T):
                with torch.no_grad(), one_thread():
                    x = torch.as_tensor(obs)
                    logits, value = pol(x)
                    dist = torch.distributions.Categorical(logits=logits)
                    a = dist.sample()
                    r_logp[t] = dist.log_prob(a).numpy()
                r_obs[t], r_act[t], r_val[t] = obs, a.numpy(), value.numpy()
                obs, rew, term, trunc, info = envs.step(r_act[t])
                r_rew[t], r_done[t] = rew, np.logical_or(term, trunc)
                recent.extend(_episodes(info))
            frames += T * E
            adv, ret = _gae(r_rew, r_val, r_done, _values(pol, obs), ppo["gamma"], ppo["lam"])
            b_obs = torch.as_tensor(r_obs.reshape(T * E, H, F))
            b_act = torch.as_tensor(r_act.reshape(-1))
            b_logp = torch.as_tensor(r_logp.reshape(-1))
            b_adv = torch.as_tensor(adv.reshape(-1))
            b_ret = torch.as_tensor(ret.reshape(-1))
            b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
            warm = ppo_updates < int(ppo["critic_warmup"])
            stats = {"pi_loss": [], "v_loss": [], "entropy": [], "kl": [], "clipfrac": []}
            mb = int(ppo["minibatch"])
            n = T * E
            for _ in range(int(ppo["epochs"])):
                idx = torch.as_tensor(rng.permutation(n))
                for k in range(0, n, mb):
                    b = idx[k : k + mb]
                    value = pol.value(b_obs[b])
                    v_loss = 0.5 * (value - b_ret[b]).pow(2).mean()
                    if warm:
                        loss = ppo["vf_coef"] * v_loss
                        pi_loss = ent = kl = cf = torch.zeros(())
                    else:
                        logits = pol.logits(b_obs[b])
                        dist = torch.distributions.Categorical(logits=logits)
                        logp = dist.log_prob(b_act[b])
                        ratio = (logp - b_logp[b]).exp()
                        s1 = ratio * b_adv[b]
                        s2 = ratio.clamp(1 - ppo["clip"], 1 + ppo["clip"]) * b_adv[b]
                        pi_loss = -torch.min(s1, s2).mean()
                        ent = dist.entropy().mean()
                        loss = pi_loss + ppo["vf_coef"] * v_loss - ppo["ent_coef"] * ent
                        with torch.no_grad():
                            kl = (b_logp[b] - logp).mean()
                            cf = ((ratio - 1).abs() > ppo["clip"]).float().mean()
                    opt.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(pol.parameters(), ppo["max_grad_norm"])
                    opt.step()
                    for key, val in zip(stats, (pi_loss, v_loss, ent, kl, cf)):
                        stats[key].append(float(val.detach()))
            update += 1
            ppo_updates += 1
            row = {"kind": "update", "phase": "ppo" if not warm else "ppo_critic", "update": update, "frames": frames,
                   "time_s": round(time.perf_counter() - t0, 1), **{k: float(np.mean(v)) for k, v in stats.items()},
                   **_train_stats(recent)}
            recent = []
            logger(row, f"[ppo] frames {frames} return {row.get('train_return', float('nan')):.3f} "
                        f"kl {row['kl']:.4f} ent {row['entropy']:.3f} ({row['time_s']:.0f} s)")
            if time.perf_counter() - last_eval > cfg["eval"]["every_s"]:
                evaluate("ppo")
        evaluate("end")
    finally:
        envs.close()
    summary = {"frames": frames, "bc_frames": bc_frames, "updates": update, "wall_s": round(time.perf_counter() - t0, 1),
               "frames_per_s": round(frames / max(1e-9, time.perf_counter() - t0), 1),
               "best_val_return": best["val_return"], "best_frames": best.get("frames"), "workers": E}
    policy_io.save(pol, out / "policy.pt", features, {"names": ["silent", "backchannel", "speak"]}, summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    try:
        plot(out / "metrics.jsonl", out / "learning_curve.png")
    except Exception as e:  # a plot must not lose a finished run
        log(f"learning curve not drawn: {e}")
    return summary


def _train_stats(episodes: list[dict]) -> dict:
    if not episodes:
        return {"train_episodes": 0}
    return {"train_episodes": len(episodes), "train_return": float(np.mean([e["return"] for e in episodes])),
            "train_terms": {k: float(np.mean([e["terms"].get(k, 0.0) for e in episodes])) for k in episodes[0]["terms"]}}


def plot(metrics: str | Path, png: str | Path, title: str | None = None) -> Path:
    """The learning curve: greedy validation return (and the behaviour's training return) against
    environment frames, and the validation return's behaviour terms."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(x) for x in Path(metrics).read_text().splitlines() if x.strip()]
    ev = [r for r in rows if r.get("kind") == "eval"]
    up = [r for r in rows if r.get("kind") == "update" and "train_return" in r]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    if up:
        ax1.plot([r["frames"] / 1e6 for r in up], _smooth([r["train_return"] for r in up]), color="0.7",
                 label="training episodes (behaviour policy, smoothed)")
    ax1.plot([r["frames"] / 1e6 for r in ev], [r["val_return"] for r in ev], "o-", color="C0",
             label="validation, greedy policy")
    bc_end = [r["frames"] for r in rows if r.get("phase") == "bc_end"]
    for ax in (ax1, ax2):
        if bc_end:
            ax.axvline(bc_end[0] / 1e6, color="k", ls=":", lw=1)
        ax.set_xlabel("environment frames (millions; 1 frame = 80 ms)")
        ax.grid(alpha=0.3)
    ax1.set_ylabel("episode return")
    ax1.legend(fontsize=8)
    ax1.set_title(title or "behaviour cloning | PPO")
    names = sorted({k for r in ev for k in r.get("val_terms", {})})
    for i, k in enumerate(names):
        ax2.plot([r["frames"] / 1e6 for r in ev], [r["val_terms"].get(k, 0.0) for r in ev], "o-", ms=3, label=k, color=f"C{i}")
    ax2.set_ylabel("validation reward per episode, by behaviour")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return Path(png)


def _smooth(v, k: int = 10):
    v = np.asarray(v, dtype=float)
    if len(v) < 2:
        return v
    c = np.cumsum(np.insert(v, 0, 0.0))
    out = np.empty_like(v)
    for i in range(len(v)):
        lo = max(0, i - k + 1)
        out[i] = (c[i + 1] - c[lo]) / (i + 1 - lo)
    return out
