"""Training throughput of fdenv-train in environment frames per second (1 frame = 80 ms of audio),
with 1, 2 and 4 async workers (``gymnasium.vector.AsyncVectorEnv``, one process per env).

    python benchmarks/bench_train.py [--workers 1 2 4] [--frames 6000] [--json out.json]

Three numbers per worker count:
- ``env``: the vector env alone (room, rewards, TurnActions, log-mel features in the workers),
  random actions;
- ``rollout``: plus the GRU policy deciding every frame in the main process (what collecting
  experience costs);
- ``train``: PPO as ``fdenv-train`` runs it (rollouts and updates, 3 epochs per rollout),
  measured between its first and last update.
All scenes of the five train sets; the worker start-up and the first resets are not timed.
On a machine with fewer cores than workers, processes share the cores: say so with the result.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np


def env_rate(workers: int, frames: int, with_policy: bool) -> float:
    import torch

    from fdenv.train.envs import make_vec
    from fdenv.train.features import one_thread
    from fdenv.train.policy import TurnPolicy

    envs = make_vec(workers, lean_info=True, teacher=None)
    try:
        obs, _ = envs.reset(seed=0)
        pol = TurnPolicy(envs.single_observation_space.shape[1]) if with_policy else None
        rng = np.random.default_rng(0)
        gen = torch.Generator().manual_seed(0)
        for _ in range(50):  # warm up: clip caches, first resets
            obs, *_ = envs.step(rng.integers(0, 3, workers))
        n, t = 0, time.perf_counter()
        while n < frames:
            if pol is not None:
                with one_thread():
                    a = pol.act(obs, deterministic=False, generator=gen)
            else:
                a = rng.integers(0, 3, workers)
            obs, *_ = envs.step(a)
            n += workers
        return n / (time.perf_counter() - t)
    finally:
        envs.close()


def train_rate(workers: int, frames: int) -> float:
    from fdenv.train.ppo import train

    out = tempfile.mkdtemp(prefix="fdenv-bench-train-")
    cfg = {"workers": workers, "bc": {"frames": 0}, "ppo": {"frames": frames, "critic_warmup": 0},
           "eval": {"per_set": 1, "every_s": 1e9}, "time_limit_min": 30}
    train(cfg, out=out, log=lambda s: None)
    rows = [json.loads(x) for x in open(os.path.join(out, "metrics.jsonl")) if '"update"' in x]
    rows = [r for r in rows if r.get("kind") == "update"]
    if len(rows) < 2:
        return float("nan")
    return (rows[-1]["frames"] - rows[0]["frames"]) / max(1e-9, rows[-1]["time_s"] - rows[0]["time_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--frames", type=int, default=6000, help="frames per measurement")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    os.environ.setdefault("FDENV_CACHE_DIR", tempfile.mkdtemp(prefix="fdenv-bench-"))
    print(f"cores: {os.cpu_count()}  (torch: 1 thread per process)")
    print(f"{'workers':>8} {'env fps':>10} {'rollout fps':>12} {'train fps':>10}")
    results = []
    for w in args.workers:
        e = env_rate(w, args.frames, with_policy=False)
        r = env_rate(w, args.frames, with_policy=True)
        tr = train_rate(w, args.frames)
        results.append({"workers": w, "env_fps": round(e), "rollout_fps": round(r), "train_fps": round(tr)})
        print(f"{w:>8} {e:>10.0f} {r:>12.0f} {tr:>10.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": os.cpu_count(), "frames": args.frames, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
