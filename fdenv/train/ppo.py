"""Behaviour cloning from the oracle's decisions, then PPO, for a streaming GRU policy.

``train(cfg, out)`` runs both phases under one wall-clock budget and writes into ``out``:
``policy.pt`` (last), ``best.pt`` (best greedy validation return among the evaluations where the
trained policy speaks; ``selection_key``), ``bc.pt`` (at the
end of behaviour cloning), ``metrics.jsonl`` (one line per update and per evaluation) and
``learning_curve.png``.

The policy is recurrent (``TurnPolicy(recurrent=True)``): while collecting it carries each env's
GRU state from frame to frame, reading only the newest feature row, so one decision is one GRU
step. Updates unroll it over ``chunk`` consecutive frames from the state it had at the chunk's
start (stored during collection), resetting it where an episode starts.

1. **Behaviour cloning** (DAgger-style): the envs report the oracle's decision for every frame
   (``OracleTeacher``, from the labels). The behaviour policy follows the teacher with probability
   ``beta`` (from ``beta_start`` down to ``beta_end``) and the student otherwise; the student
   learns the teacher's decisions on every visited frame (cross-entropy; frames where the teacher
   changes what plays weigh ``change_weight``). The critic learns the behaviour's returns.
2. **PPO** (clipped surrogate, GAE, entropy bonus) on the reward wrappers' dense rewards; the
   first ``critic_warmup`` updates train the critic only; the epochs over a batch stop early
   when the approximate KL divergence from the collecting policy passes ``target_kl``. With
   ``ref_kl`` > 0 the loss adds ``ref_kl`` x KL(reference || policy) on every visited frame, the
   reference being the policy as PPO starts (the cloned one, or ``init``), frozen: PPO may move
   away from the cloned decisions only where the rewards pay for it. The reference carries its
   own GRU state through the rollouts, so its decisions are the ones it would have made.

Greedy evaluation every ``eval.every_s`` seconds on fixed validation episodes (``eval.per_set``
scenes of each set) gives the learning curve; a greedy policy that never leaves silence there is
reported as collapsed.
"""

from __future__ import annotations

import copy
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

ACTIONS = {"names": ["silent", "backchannel", "speak"]}
DEFAULTS = {
    "env": {"sets": ["pause", "backchannel", "turn_taking", "interruption", "mpe"], "split": "train", "room": None,
            "tts": "espeak", "sample_rate": 16000, "content": "gold", "scheduler": None, "balance": "kind",
            "randomize": {"tts": ["espeak", "kokoro"]}},
    "rewards": dict(DEFAULT_WEIGHTS),
    "reward_params": {},
    "takeover_s": 0.72,
    "features": {"history": 1, "n_mels": 32, "sub_frames": 4, "context": [1.0, 4.0], "normalise": "floor",
                 "playback": True},
    "policy": {"hidden": 64},
    "workers": 0,
    "envs": 8,
    "chunk": 32,
    "context": None,
    "seed": 0,
    "threads": 1,
    "time_limit_min": 28.0,
    "init": None,
    "bc": {"frames": 400_000, "rollout": 128, "epochs": 4, "minibatch": 8, "lr": 1e-3, "beta_start": 1.0,
           "beta_end": 0.2, "change_weight": 4.0, "response_delay_s": 1.6, "backchannels": True, "answer_all": True},
    "ppo": {"frames": 2_000_000, "rollout": 128, "epochs": 8, "minibatch": 8, "lr": 3e-4, "gamma": 0.99,
            "lam": 0.95, "clip": 0.2, "ent_coef": 0.003, "vf_coef": 0.5, "max_grad_norm": 0.5, "critic_warmup": 4,
            "target_kl": 0.02, "ref_kl": 0.0},
    "eval": {"every_s": 90.0, "split": "val", "per_set": 4},
}


def merge(base: dict, over: dict | None) -> dict:
    out = dict(base)
    for k, v in (over or {}).items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def env_kwargs(cfg: dict, split: str | None = None, teacher=None, lean_info: bool = True,
               randomize: bool = True) -> dict:
    e = cfg["env"]
    return {"scene_sets": list(e["sets"]), "split": split or e["split"], "room": e.get("room"), "tts": e["tts"],
            "sample_rate": e["sample_rate"], "scheduler": e.get("scheduler"), "rewards": dict(cfg["rewards"]),
            "reward_params": dict(cfg.get("reward_params") or {}), "takeover_s": cfg["takeover_s"],
            "content": e["content"], "features": dict(cfg["features"]), "teacher": teacher, "lean_info": lean_info,
            "balance": e.get("balance", "kind"), "randomize": e.get("randomize") if randomize else None}


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


def selection_key(res: dict) -> tuple[bool, float]:
    """How ``best.pt`` is chosen among validation results: a trained policy that speaks beats any
    that never does (always-silent earns a fair return on scenes where holding is right, and would
    otherwise be picked whenever cloning starts slow), then the greedy validation return."""
    return (res["frames"] > 0 and not res["collapsed"], res["val_return"])


class Evaluator:
    """Greedy episodes on fixed validation scenes (and, with domain randomisation, a fixed room
    per episode drawn from the validation seed), in this process."""

    def __init__(self, cfg: dict):
        ev = cfg["eval"]
        scenes = []
        for name in cfg["env"]["sets"]:
            scenes.extend(load_scenes([name], ev["split"])[: int(ev["per_set"])])
        self.ids = [s.id for s in scenes]
        kw = env_kwargs(cfg, split=ev["split"], teacher=None, lean_info=True)
        kw.pop("scene_sets"), kw.pop("split")
        self.env = TurnTakingEnv(scenes=scenes, **kw)

    def __call__(self, policy: TurnPolicy, threshold: float | None = None) -> dict:
        returns, by_kind, terms = [], {}, {}
        frames, talking = 0, 0
        for i, sid in enumerate(self.ids):
            obs, _ = self.env.reset(seed=1000 + i, options={"scene": sid})
            state = None
            while True:
                with one_thread():
                    a, state = policy.act_stream(obs, state, deterministic=True, threshold=threshold)
                obs, _, term, trunc, info = self.env.step(int(a))
                frames += 1
                talking += int(a) != SILENT
                if term or trunc:
                    break
            ep = info["turn_episode"]
            returns.append(ep["return"])
            by_kind.setdefault(ep["kind"], []).append(ep["return"])
            for k, v in ep["terms"].items():
                terms.setdefault(k, []).append(v)
        return {"val_return": float(np.mean(returns)), "val_frames": frames, "val_talk_frames": talking,
                "val_by_kind": {k: float(np.mean(v)) for k, v in by_kind.items()},
                "val_terms": {k: float(np.mean(v)) for k, v in terms.items()}}


def calibrate_threshold(checkpoint: str | Path, thresholds=(None, 0.1, 0.2, 0.3, 0.4, 0.5), cfg: dict | None = None,
                        log=print) -> dict:
    """The speak threshold with the best greedy return on the validation episodes (``cfg``'s
    ``eval`` settings and envs), written into the checkpoint (``actions["threshold"]``; None:
    argmax), where the ``policy`` agent takes it as its default. Returns the returns by threshold."""
    pol, meta = policy_io.load(checkpoint)
    feats = {k: v for k, v in meta["features"].items() if k != "sample_rate"}
    cfg = merge(DEFAULTS, merge({"features": feats, "env": {"sample_rate": meta["features"].get("sample_rate", 16000)}},
                                cfg))
    evaluator = Evaluator(cfg)
    scores = {}
    for th in thresholds:
        res = evaluator(pol, threshold=th)
        scores[th] = res["val_return"]
        log(f"[calibrate] threshold {th}: val return {res['val_return']:.3f} "
            + " ".join(f"{k}={v:.2f}" for k, v in res["val_by_kind"].items()))
    best = max(scores, key=lambda t: scores[t])
    blob = torch.load(checkpoint, map_location="cpu", weights_only=True)
    policy_io.save(pol, checkpoint, blob["features"], {**blob["actions"], "threshold": best},
                   {**blob["train"], "threshold_returns": {str(k): v for k, v in scores.items()}})
    return {"threshold": best, "val_returns": scores}


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


def noop_action(obs: np.ndarray, n_context: int) -> np.ndarray:
    """For observations ``(..., history, n_features)``: the action that changes nothing, silent when
    nothing plays, speak (go on) when an utterance or a backchannel goes on (own[0], own[1] of the
    newest row)."""
    own = obs[..., -1, own_columns(obs.shape[-1], OWN_DIM, n_context)]
    playing = (own[..., 0] > 0.5) | (own[..., 1] > 0.5)
    return np.where(playing, SPEAK, SILENT)


class Rollout:
    """``T`` frames of ``E`` envs: the newest feature row of each observation, whether it starts
    an episode, the GRU state before it, and per-frame arrays the phases add."""

    def __init__(self, T: int, E: int, F: int, hidden: int):
        self.T, self.E = T, E
        self.rows = np.zeros((T, E, F), np.float32)
        self.starts = np.zeros((T, E), bool)
        self.state = torch.zeros(T, 2, E, hidden)
        self.actions = np.zeros((T, E), np.int64)
        self.rewards = np.zeros((T, E), np.float32)
        self.dones = np.zeros((T, E), np.float32)
        self.greedy_talk = 0  # frames where the greedy action is not silent
        self.ref_state: torch.Tensor | None = None  # the reference policy's GRU state, when it has one

    def chunk_states(self, L: int, state: torch.Tensor) -> torch.Tensor:
        """The states ``(T, 2, E, H)`` at the start of every ``L``-frame chunk: ``(2, N, H)``."""
        n = self.T // L
        h0 = state[0 : n * L : L]  # (n, 2, E, H)
        return h0.permute(1, 0, 2, 3).reshape(2, n * self.E, -1)

    def chunks(self, L: int, *arrays: np.ndarray):
        """Sequences of ``L`` frames: rows ``(N, L, F)``, starts ``(N, L)``, initial states
        ``(2, N, H)``, and each of ``arrays`` (``(T, E)``) as ``(N, L)``; N = T / L * E."""
        T, E = self.T, self.E
        n = T // L

        def seq(a):  # (T, E, ...) -> (n * E, L, ...), sequence index = chunk * E + env
            a = a[: n * L]
            return a.reshape(n, L, E, *a.shape[2:]).swapaxes(1, 2).reshape(n * E, L, *a.shape[2:])

        h0 = self.chunk_states(L, self.state)
        out = [torch.as_tensor(seq(self.rows)), torch.as_tensor(seq(self.starts)), h0]
        out += [torch.as_tensor(seq(a)) for a in arrays]
        return out


class Collector:
    """Steps the vector env with the policy, carrying each env's GRU state."""

    def __init__(self, envs, policy: TurnPolicy, seed: int):
        self.envs, self.policy = envs, policy
        self.obs, info = envs.reset(seed=seed)
        self.info = info
        self.E = envs.num_envs
        self.state = policy.initial_state(self.E)
        self.starts = np.ones(self.E, bool)
        self.gen = torch.Generator().manual_seed(seed)
        self.episodes: list[dict] = []
        self.reference: TurnPolicy | None = None  # see ``follow``
        self.ref_state: torch.Tensor | None = None

    def follow(self, reference: TurnPolicy) -> None:
        """Carry ``reference``'s GRU state too from now on (a frozen copy of the policy as it is
        now: its state so far is the policy's)."""
        self.reference = reference
        self.ref_state = self.state.clone()

    def run(self, T: int, choose) -> Rollout:
        """``choose(t, logits) -> actions`` picks the behaviour's actions (``(E,)`` int64)."""
        pol, E = self.policy, self.E
        ro = Rollout(T, E, self.obs.shape[-1], pol.hidden)
        ro.logp = np.zeros((T, E), np.float32)
        ro.values = np.zeros((T, E), np.float32)
        ref = self.reference
        if ref is not None:
            ro.ref_state = torch.zeros_like(ro.state)
        for t in range(T):
            ro.rows[t], ro.starts[t], ro.state[t] = self.obs[:, -1], self.starts, self.state
            with torch.no_grad(), one_thread():
                if ref is not None:
                    ro.ref_state[t] = self.ref_state
                    _, _, self.ref_state = ref.step(torch.as_tensor(self.obs), self.ref_state, critic=False)
                logits, value, self.state = pol.step(torch.as_tensor(self.obs), self.state)
                a = choose(t, logits)
                ro.logp[t] = torch.log_softmax(logits, -1).gather(1, torch.as_tensor(a)[:, None])[:, 0].numpy()
                ro.greedy_talk += int((logits.argmax(-1) != SILENT).sum())
            ro.values[t] = value.numpy()
            ro.actions[t] = a
            self.obs, rew, term, trunc, self.info = self.envs.step(a)
            done = np.logical_or(term, trunc)
            ro.rewards[t], ro.dones[t] = rew, done
            self.starts = done  # same-step autoreset: the next observation starts an episode
            if done.any():
                keep = torch.as_tensor(~done, dtype=torch.float32)[None, :, None]
                self.state = self.state * keep
                if ref is not None:
                    self.ref_state = self.ref_state * keep
                self.episodes.extend(_episodes(self.info))
        with torch.no_grad(), one_thread():
            _, ro.last_value, _ = pol.step(torch.as_tensor(self.obs), self.state)
        ro.last_value = ro.last_value.numpy()
        return ro

    def sample(self, logits: torch.Tensor) -> np.ndarray:
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen)[:, 0].numpy()

    def take_episodes(self) -> list[dict]:
        out, self.episodes = self.episodes, []
        return out


def _clock(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Progress:
    """Progress lines with the budget: frames done of the planned total, time used of the
    wall-clock budget, and an estimate of the time left (whichever ends first)."""

    def __init__(self, total_frames: int, budget_s: float):
        self.total, self.budget, self.t0 = int(total_frames), float(budget_s), time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def __call__(self, frames: int) -> str:
        el = self.elapsed()
        rate = frames / max(el, 1e-9)
        left = min(self.budget - el, (self.total - frames) / rate if rate > 0 else math.inf)
        pct = 100.0 * frames / max(1, self.total)
        return (f"frames {frames:,}/{self.total:,} ({pct:.0f}%), {rate:.0f}/s | {_clock(el)} of {_clock(self.budget)}, "
                f"about {_clock(max(0.0, left))} left")


def _returns(episodes: list[dict]) -> str:
    """The mean return of finished episodes, or a plain word when none finished (never "nan")."""
    if not episodes:
        return "return - (no episode ended)"
    return f"return {np.mean([e['return'] for e in episodes]):.3f} ({len(episodes)} ep)"


def _train_stats(episodes: list[dict]) -> dict:
    if not episodes:
        return {"train_episodes": 0}
    return {"train_episodes": len(episodes), "train_return": float(np.mean([e["return"] for e in episodes])),
            "train_terms": {k: float(np.mean([e["terms"].get(k, 0.0) for e in episodes])) for k in episodes[0]["terms"]}}


def _minibatches(rng, n: int, size: int):
    idx = rng.permutation(n)
    for k in range(0, n, max(1, size)):
        yield torch.as_tensor(idx[k : k + size])


def train(cfg: dict | None = None, out: str | Path = "runs/train", log=print) -> dict:
    cfg = merge(DEFAULTS, cfg)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train_config.json").write_text(json.dumps(cfg, indent=1, sort_keys=True))
    torch.manual_seed(cfg["seed"])
    rng = np.random.default_rng(cfg["seed"])
    torch.set_num_threads(max(1, int(cfg["threads"])))
    bc, ppo = cfg["bc"], cfg["ppo"]
    budget_s = 60.0 * float(cfg["time_limit_min"])
    progress = Progress(int(bc["frames"]) + int(ppo["frames"]), budget_s)
    deadline = progress.t0 + budget_s
    teacher = {"response_delay_s": bc["response_delay_s"], "backchannels": bc["backchannels"],
               "answer_all": bc["answer_all"]}
    workers = int(cfg["workers"])
    E = workers if workers > 0 else int(cfg["envs"])
    envs = make_vec(E, context=cfg.get("context"), processes=workers > 0, **env_kwargs(cfg, teacher=teacher))
    F = envs.single_observation_space.shape[-1]
    n_context = len(cfg["features"].get("context") or ())
    pol = TurnPolicy(F, recurrent=True, **cfg["policy"])
    if cfg.get("init"):  # go on from a checkpoint (e.g. PPO from a run's bc.pt with bc.frames=0)
        start, meta = policy_io.load(cfg["init"])
        if not start.recurrent or start.model_config() != pol.model_config():
            raise ValueError(f"init={cfg['init']!r}: its model {start.model_config()} is not this run's "
                             f"{pol.model_config()}; use the same features and policy settings")
        pol.load_state_dict(start.state_dict())
    L = int(cfg["chunk"])
    evaluator = Evaluator(cfg)
    logger = _Log(out / "metrics.jsonl", log)
    features = {"sample_rate": cfg["env"]["sample_rate"], **cfg["features"]}
    best = {"val_return": -math.inf, "frames": 0, "collapsed": True}
    frames, update, last_eval = 0, 0, -math.inf
    collapsed_said = False

    def evaluate(phase: str) -> None:
        nonlocal last_eval, best, collapsed_said
        t = time.perf_counter()
        pol.eval()
        res = evaluator(pol)
        pol.train()
        res.update(kind="eval", phase=phase, frames=frames, update=update, time_s=round(progress.elapsed(), 1),
                   eval_s=round(time.perf_counter() - t, 1), collapsed=res["val_talk_frames"] == 0)
        logger(res, f"[eval {phase}] {progress(frames)} | val return {res['val_return']:.3f} "
                    + " ".join(f"{k}={v:.2f}" for k, v in res["val_by_kind"].items()))
        if res["collapsed"] and frames > 0:
            logger({"kind": "warning", "frames": frames, "collapsed": True},
                   f"[warning] the policy has collapsed to always-silent: its greedy decisions on "
                   f"{res['val_frames']} validation frames never leave silence")
            collapsed_said = True
        if selection_key(res) > selection_key(best):
            best = res
            policy_io.save(pol, out / "best.pt", features, ACTIONS,
                           {"frames": frames, "phase": phase, "val_return": res["val_return"]})
        last_eval = time.perf_counter()

    collector = Collector(envs, pol, int(cfg["seed"]))
    try:
        # ---------------- behaviour cloning ----------------
        opt = torch.optim.Adam(pol.parameters(), lr=bc["lr"])
        T = int(bc["rollout"])
        evaluate("start")
        while frames < bc["frames"] and time.perf_counter() < deadline:
            frac = min(1.0, frames / max(1, bc["frames"]))
            beta = bc["beta_start"] + (bc["beta_end"] - bc["beta_start"]) * frac
            targets = np.zeros((T, E), np.int64)

            def choose(t, logits):
                # the teacher's decision for this frame came with the previous step's info
                targets[t] = _teacher(collector.info, E)
                student = collector.sample(logits)
                return np.where(rng.random(E) < beta, targets[t], student)

            ro = collector.run(T, choose)
            frames += T * E
            weights = np.where(targets != noop_action(ro.rows[:, :, None, :], n_context),
                               float(bc["change_weight"]), 1.0).astype(np.float32)
            _, ret = _gae(ro.rewards, ro.values, ro.dones, ro.last_value, ppo["gamma"], ppo["lam"])
            rows, starts, h0, tgt, w, r = ro.chunks(L, targets, weights, ret.astype(np.float32))
            losses, accs, vls = [], [], []
            with one_thread():
                for _ in range(int(bc["epochs"])):
                    for b in _minibatches(rng, len(rows), int(bc["minibatch"])):
                        logits, values, _ = pol.unroll(rows[b], h0[:, b], starts[b])
                        ce = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[b].reshape(-1),
                                                         reduction="none")
                        wb = w[b].reshape(-1)
                        ce = (ce * wb).sum() / wb.sum()
                        vl = 0.5 * (values - r[b]).pow(2).mean()
                        opt.zero_grad()
                        (ce + ppo["vf_coef"] * vl).backward()
                        nn.utils.clip_grad_norm_(pol.parameters(), 1.0)
                        opt.step()
                        losses.append(float(ce.detach()))
                        vls.append(float(vl.detach()))
                        accs.append(float((logits.argmax(-1) == tgt[b]).float().mean()))
            update += 1
            eps = collector.take_episodes()
            row = {"kind": "update", "phase": "bc", "update": update, "frames": frames,
                   "time_s": round(progress.elapsed(), 1), "cpu_s": round(time.process_time(), 2),
                   "beta": round(beta, 3), "bc_loss": float(np.mean(losses)),
                   "bc_acc": float(np.mean(accs)), "v_loss": float(np.mean(vls)),
                   "greedy_talk": ro.greedy_talk / (T * E), **_train_stats(eps)}
            logger(row, f"[bc] {progress(frames)} | loss {row['bc_loss']:.3f} acc {row['bc_acc']:.3f} "
                        f"| behaviour {_returns(eps)}")
            if time.perf_counter() - last_eval > cfg["eval"]["every_s"]:
                evaluate("bc")
        if frames > 0:
            evaluate("bc_end")
            policy_io.save(pol, out / "bc.pt", features, ACTIONS, {"frames": frames, "phase": "bc"})
        bc_frames = frames
        # ---------------- PPO ----------------
        opt = torch.optim.Adam(pol.parameters(), lr=ppo["lr"], eps=1e-5)
        T = int(ppo["rollout"])
        ppo_updates = 0
        ref_kl = float(ppo.get("ref_kl") or 0.0)
        if ref_kl > 0:
            reference = copy.deepcopy(pol).eval().requires_grad_(False)
            collector.follow(reference)
        while frames < bc_frames + ppo["frames"] and time.perf_counter() < deadline:
            ro = collector.run(T, lambda t, logits: collector.sample(logits))
            frames += T * E
            adv, ret = _gae(ro.rewards, ro.values, ro.dones, ro.last_value, ppo["gamma"], ppo["lam"])
            rows, starts, h0, act, logp_old, b_adv, b_ret = ro.chunks(L, ro.actions, ro.logp, adv.astype(np.float32),
                                                                      ret.astype(np.float32))
            b_adv = (b_adv - b_adv.mean()) / (b_adv.std() + 1e-8)
            if ref_kl > 0:
                with torch.no_grad(), one_thread():
                    ref_logits, _, _ = reference.unroll(rows, ro.chunk_states(L, ro.ref_state), starts, critic=False)
                    ref_logp = torch.log_softmax(ref_logits, -1)
            warm = ppo_updates < int(ppo["critic_warmup"])
            stats = {"pi_loss": [], "v_loss": [], "entropy": [], "kl": [], "clipfrac": [], "ref_kl": []}
            epochs_done, stopped = 0, False
            with one_thread():
                for _ in range(int(ppo["epochs"])):
                    for b in _minibatches(rng, len(rows), int(ppo["minibatch"])):
                        logits, values, _ = pol.unroll(rows[b], h0[:, b], starts[b])
                        v_loss = 0.5 * (values - b_ret[b]).pow(2).mean()
                        if warm:
                            loss = ppo["vf_coef"] * v_loss
                            pi_loss = ent = kl = cf = to_ref = torch.zeros(())
                        else:
                            logp_all = torch.log_softmax(logits, -1)
                            logp = logp_all.gather(-1, act[b][..., None])[..., 0]
                            ratio = (logp - logp_old[b]).exp()
                            s1 = ratio * b_adv[b]
                            s2 = ratio.clamp(1 - ppo["clip"], 1 + ppo["clip"]) * b_adv[b]
                            pi_loss = -torch.min(s1, s2).mean()
                            ent = -(logp_all.exp() * logp_all).sum(-1).mean()
                            loss = pi_loss + ppo["vf_coef"] * v_loss - ppo["ent_coef"] * ent
                            to_ref = torch.zeros(())
                            if ref_kl > 0:  # KL(reference || policy), per frame
                                to_ref = nn.functional.kl_div(logp_all, ref_logp[b], reduction="none",
                                                              log_target=True).sum(-1).mean()
                                loss = loss + ref_kl * to_ref
                            with torch.no_grad():
                                kl = ((ratio - 1) - (logp - logp_old[b])).mean()  # the low-variance estimator
                                cf = ((ratio - 1).abs() > ppo["clip"]).float().mean()
                        opt.zero_grad()
                        loss.backward()
                        nn.utils.clip_grad_norm_(pol.parameters(), ppo["max_grad_norm"])
                        opt.step()
                        for key, val in zip(stats, (pi_loss, v_loss, ent, kl, cf, to_ref)):
                            stats[key].append(float(val.detach()))
                    epochs_done += 1
                    if not warm and ppo.get("target_kl") and np.mean(stats["kl"][-len(rows):]) > 1.5 * ppo["target_kl"]:
                        stopped = True
                        break
            update += 1
            ppo_updates += 1
            eps = collector.take_episodes()
            row = {"kind": "update", "phase": "ppo" if not warm else "ppo_critic", "update": update, "frames": frames,
                   "time_s": round(progress.elapsed(), 1), "cpu_s": round(time.process_time(), 2),
                   **{k: float(np.mean(v)) for k, v in stats.items()},
                   "epochs": epochs_done, "kl_stop": stopped, "greedy_talk": ro.greedy_talk / (T * E),
                   **_train_stats(eps)}
            logger(row, f"[ppo] {progress(frames)} | {_returns(eps)} | kl {row['kl']:.4f} "
                        f"clip {row['clipfrac']:.2f} ent {row['entropy']:.3f} epochs {epochs_done}"
                        + (f" | to reference {row['ref_kl']:.4f}" if ref_kl > 0 else "")
                        + (" (KL stop)" if stopped else ""))
            if time.perf_counter() - last_eval > cfg["eval"]["every_s"]:
                evaluate("ppo")
        evaluate("end")
    finally:
        envs.close()
    el = progress.elapsed()
    summary = {"frames": frames, "bc_frames": bc_frames, "updates": update, "wall_s": round(el, 1),
               "frames_per_s": round(frames / max(1e-9, el), 1), "best_val_return": best["val_return"],
               "best_frames": best.get("frames"), "workers": workers, "envs": E,
               "collapsed": bool(logger.rows[-1].get("collapsed")) if logger.rows else False}
    policy_io.save(pol, out / "policy.pt", features, ACTIONS, summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    if summary["collapsed"]:
        log("[done] the last policy is always-silent; best.pt keeps the best validation checkpoint")
    try:
        plot(out / "metrics.jsonl", out / "learning_curve.png")
    except Exception as e:  # a plot must not lose a finished run
        log(f"learning curve not drawn: {e}")
    return summary


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
