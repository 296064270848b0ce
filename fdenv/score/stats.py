"""Bootstrap over scenes (SPEC 7): 10,000 resamples by default, a fixed seed, 95% percentile
intervals, vectorised with numpy.

Resampling units are *groups*: by default a scene id; pass a pair id (MPE) to keep the two
conditions of a pair together. Each resample draws groups with replacement and recomputes the
statistic over every observation in the drawn groups, so a scene played with several seeds counts
once per draw with all its episodes.

``bootstrap_mean`` (means of per-episode values; rates are means of 0/1), ``bootstrap_ratio``
(sum of numerators / sum of denominators, e.g. counts over eligible events), ``bootstrap_diff``
(difference of two runs on the same groups, paired by group). All return an ``Estimate``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Hashable, Sequence

import numpy as np

N_RESAMPLES = 10_000
SEED = 0
LEVEL = 0.95
_CHUNK_CELLS = 4_000_000  # resamples x groups per chunk (memory bound)


@dataclass(frozen=True)
class Estimate:
    value: float | None
    lo: float | None
    hi: float | None
    n: int  # observations
    n_groups: int

    def as_dict(self) -> dict:
        return asdict(self)


def _group_index(groups: Sequence[Hashable] | None, n: int) -> tuple[np.ndarray, int]:
    if groups is None:
        return np.arange(n), n
    if len(groups) != n:
        raise ValueError(f"{len(groups)} group labels for {n} values")
    keys: dict = {}
    idx = np.empty(n, dtype=np.int64)
    for i, g in enumerate(groups):
        idx[i] = keys.setdefault(g, len(keys))
    return idx, len(keys)


def resample_counts(n_groups: int, n_resamples: int = N_RESAMPLES, seed: int = SEED):
    """Yield chunks of shape (k, n_groups): how often each group is drawn in each resample."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // max(1, n_groups))
    done = 0
    while done < n_resamples:
        k = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_groups, size=(k, n_groups))
        flat = (np.arange(k)[:, None] * n_groups + draws).ravel()
        yield np.bincount(flat, minlength=k * n_groups).reshape(k, n_groups).astype(float)
        done += k


def _ratio_boot(num_g: np.ndarray, den_g: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    out = []
    for counts in resample_counts(len(num_g), n_resamples, seed):
        num = counts @ num_g
        den = counts @ den_g
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(num / den)
    return np.concatenate(out)


def _interval(boot: np.ndarray, level: float) -> tuple[float | None, float | None]:
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return None, None
    a = (1 - level) / 2 * 100
    lo, hi = np.percentile(boot, [a, 100 - a])
    return float(lo), float(hi)


def bootstrap_ratio(num: Sequence[float], den: Sequence[float], groups: Sequence[Hashable] | None = None,
                    n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """sum(num) / sum(den) with a percentile interval from resampling groups."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    n = len(num)
    idx, g = _group_index(groups, n)
    if n == 0 or den.sum() <= 0:
        return Estimate(None, None, None, n, g)
    num_g = np.bincount(idx, weights=num, minlength=g)
    den_g = np.bincount(idx, weights=den, minlength=g)
    value = float(num.sum() / den.sum())
    lo, hi = _interval(_ratio_boot(num_g, den_g, n_resamples, seed), level)
    return Estimate(value, lo, hi, n, g)


def bootstrap_mean(values: Sequence[float | None], groups: Sequence[Hashable] | None = None,
                   n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """Mean of the values (``None`` entries are left out) with a group bootstrap interval."""
    keep = [i for i, v in enumerate(values) if v is not None and np.isfinite(float(v))]
    vals = [float(values[i]) for i in keep]
    grp = None if groups is None else [groups[i] for i in keep]
    return bootstrap_ratio(vals, [1.0] * len(vals), grp, n_resamples, seed, level)


def bootstrap_diff(values_a: Sequence[float | None], groups_a: Sequence[Hashable],
                   values_b: Sequence[float | None], groups_b: Sequence[Hashable],
                   n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """mean(b) - mean(a) over the groups both runs have, resampling groups jointly (paired)."""

    def per_group(values, groups):
        s: dict = {}
        for v, gk in zip(values, groups):
            if v is None or not np.isfinite(float(v)):
                continue
            acc = s.setdefault(gk, [0.0, 0])
            acc[0] += float(v)
            acc[1] += 1
        return s

    a, b = per_group(values_a, groups_a), per_group(values_b, groups_b)
    common = [k for k in a if k in b]
    if not common:
        return Estimate(None, None, None, 0, 0)
    sa = np.array([a[k][0] for k in common])
    na = np.array([a[k][1] for k in common], dtype=float)
    sb = np.array([b[k][0] for k in common])
    nb = np.array([b[k][1] for k in common], dtype=float)
    value = float(sb.sum() / nb.sum() - sa.sum() / na.sum())
    boots = []
    for counts in resample_counts(len(common), n_resamples, seed):
        boots.append(counts @ sb / (counts @ nb) - counts @ sa / (counts @ na))
    lo, hi = _interval(np.concatenate(boots), level)
    return Estimate(value, lo, hi, int(na.sum() + nb.sum()), len(common))


def quantiles(values: Sequence[float | None]) -> dict:
    """Point mean, median and p90 of the values that are not ``None``."""
    v = np.array([float(x) for x in values if x is not None], dtype=float)
    if v.size == 0:
        return {"mean": None, "median": None, "p90": None, "n": 0}
    return {"mean": float(v.mean()), "median": float(np.median(v)), "p90": float(np.percentile(v, 90)), "n": int(v.size)}
