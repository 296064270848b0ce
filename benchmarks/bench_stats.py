"""Costs of fdenv's statistics (SPEC 7's uncertainty) at MPE's scale.

    python benchmarks/bench_stats.py [--scenes 2000] [--resamples 10000]

Prints seconds for:
- one rate over 2,000 scenes, 10,000 resamples (the target: under 2 s), grouped by scene and by pair;
- ten rates at once over the same draw (``bootstrap_ratios``);
- a paired difference between two runs on the same scenes (``bootstrap_ratio_diff``);
- exact McNemar over 1,000 pairs;
- ``aggregate_mpe`` (MPE's whole table) over 2,000 synthetic episodes (1,000 pairs).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fdenv.score import stats
from fdenv.score.mpe import COUNT_KEYS
from fdenv.score.mpe_aggregate import aggregate_mpe
from fdenv.score.mpe_table import format_mpe


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return time.perf_counter() - t, out


def synthetic_episodes(n_pairs: int, rng) -> list[dict]:
    out = []
    for i in range(n_pairs):
        pos = float(rng.uniform(0.25, 0.95))
        for cond, p in (("explicit", 0.9), ("implicit", 0.85)):
            d = {k: 0 for k in COUNT_KEYS}
            presence = int(rng.random() < p)
            windows = int(rng.integers(4, 9))
            n4 = int(rng.random() < 0.9)
            eligible = n4 * int(rng.random() < 0.7)
            d.update(requests=1, presence=presence, fresh_onset=presence * int(rng.random() < 0.9), answered=presence,
                     correct=presence * int(rng.random() < 0.5), silence_windows=windows, silence_judged=windows,
                     silence_preserved=int(rng.binomial(windows, 0.8)), n4_events=n4, window_response=n4,
                     yield_eligible=eligible, yield_judged=eligible, yielded=eligible * int(rng.random() < 0.6),
                     condition=cond, pair_id=f"p{i}", scene_id=f"p{i}-{cond}", seed=0, t_position=pos)
            out.append(d)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=stats.N_RESAMPLES)
    args = ap.parse_args(argv)
    n, r = args.scenes, args.resamples
    rng = np.random.default_rng(0)
    v = (rng.random(n) < 0.3).astype(float)
    stats.bootstrap_mean(v[:100], n_resamples=100)  # warm up (and the scipy.stats import)
    stats.mcnemar_exact([1, 0], [0, 1])
    s, e = timed(stats.bootstrap_mean, v, [f"s{i}" for i in range(n)], n_resamples=r)
    print(f"one rate, {n} scenes, {r} resamples:            {s:6.3f} s  ({e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}], width {e.hi - e.lo:.4f})")
    s, e = timed(stats.bootstrap_mean, v, [f"p{i // 2}" for i in range(n)], n_resamples=r)
    print(f"one rate, {n // 2} pairs kept together:              {s:6.3f} s  ({e.value:.3f} [{e.lo:.3f}, {e.hi:.3f}])")
    metrics = {f"m{k}": ((rng.random(n) < 0.1 * (k + 1)).astype(float), np.ones(n)) for k in range(10)}
    s, _ = timed(stats.bootstrap_ratios, metrics, [f"p{i // 2}" for i in range(n)], n_resamples=r)
    print(f"ten rates over one draw:                        {s:6.3f} s")
    b = np.where(rng.random(n) < 0.1, 1.0, v)
    groups = [f"s{i}" for i in range(n)]
    s, d = timed(stats.bootstrap_ratio_diff, v, np.ones(n), groups, b, np.ones(n), groups, n_resamples=r)
    print(f"paired difference of two runs:                  {s:6.3f} s  ({d.value:+.3f} [{d.lo:+.3f}, {d.hi:+.3f}])")
    s, m = timed(stats.mcnemar_exact, list(v[: n // 2]), list(b[: n // 2]))
    print(f"exact McNemar, {n // 2} pairs:                      {s:6.3f} s  (p = {m['p']:.3g})")
    eps = synthetic_episodes(n // 2, rng)
    aggregate_mpe(eps[:20], n_resamples=100)  # warm up (imports)
    s, agg = timed(aggregate_mpe, eps, n_resamples=r)
    print(f"aggregate_mpe, {len(eps)} episodes:               {s:6.3f} s")
    print()
    print(format_mpe(agg))


if __name__ == "__main__":
    main()
