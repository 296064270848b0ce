"""Uncertainty and paired statistics (SPEC 7): bootstrap over scenes (10,000 resamples by default,
a fixed seed, 95% percentile intervals, vectorised with numpy), exact McNemar, Spearman, and the
``min_speech_ms`` sensitivity sweep over saved runs.

Resampling units are *groups*: by default a scene id; pass a pair id (MPE) to keep the two
conditions of a pair together. Each resample draws groups with replacement and recomputes the
statistic over every observation in the drawn groups, so a scene played with several seeds counts
once per draw with all its episodes.

``bootstrap_mean`` (means of per-episode values; rates are means of 0/1), ``bootstrap_ratio``
(sum of numerators / sum of denominators, e.g. counts over eligible events), ``bootstrap_diff``
(difference of two runs on the same groups, paired by group). All return an ``Estimate``.

For several metrics over the same episodes, ``bootstrap_ratios`` draws the resamples once and
applies them to every metric (one matrix product per chunk), so ten metrics cost about what one
does; ``bootstrap_ratio_diff`` is the paired difference of two ratios (two runs, or the explicit
and implicit members of MPE pairs, grouped by pair id). ``mcnemar_exact`` is the exact McNemar
test (scipy's two-sided binomial test on the discordant pairs), and ``spearman`` the rank
correlation between two rankings of runs (MPE's sensitivity sweep is ``fdenv.score.rescore``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Hashable, Mapping, Sequence

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


def bootstrap_quantile(values: Sequence[float | None], groups: Sequence[Hashable] | None = None, q: float = 0.5,
                       n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """The ``q`` quantile of the values (numpy's linear interpolation; ``None`` left out) with a
    group bootstrap interval: each resample's quantile is taken over the drawn groups' values."""
    keep = [i for i, v in enumerate(values) if v is not None and np.isfinite(float(v))]
    vals = np.array([float(values[i]) for i in keep])
    idx, g = _group_index(None if groups is None else [groups[i] for i in keep], len(vals))
    if vals.size == 0:
        return Estimate(None, None, None, 0, g)
    order = np.argsort(vals, kind="stable")
    v, gi = vals[order], idx[order]
    boots = []
    rows = max(1, _CHUNK_CELLS // v.size)
    for chunk in resample_counts(g, n_resamples, seed):
        for counts in np.array_split(chunk, max(1, -(-len(chunk) // rows))):
            cw = np.cumsum(counts[:, gi], axis=1)  # copies of the sorted values drawn, cumulated
            total = cw[:, -1]
            h = (total - 1) * q  # the linear-interpolation position in the expanded sample
            r0 = np.floor(h)
            i0 = (cw > r0[:, None]).argmax(axis=1)
            i1 = np.where(r0 + 1 <= total - 1, (cw > (r0 + 1)[:, None]).argmax(axis=1), i0)
            boots.append(v[i0] + (h - r0) * (v[i1] - v[i0]))
    lo, hi = _interval(np.concatenate(boots), level)
    return Estimate(float(np.percentile(vals, 100 * q)), lo, hi, int(vals.size), g)


# ------------------------------------------------------------------------------ many metrics at once


def bootstrap_ratios(metrics: Mapping[str, tuple[Sequence[float], Sequence[float]]],
                     groups: Sequence[Hashable] | None = None, n_resamples: int = N_RESAMPLES, seed: int = SEED,
                     level: float = LEVEL) -> dict[str, Estimate]:
    """``{name: (num, den)}`` -> ``{name: Estimate of sum(num) / sum(den)}`` with one shared draw.

    Every metric is over the same observations (one entry per episode, in the same order as
    ``groups``), so resampling groups once and multiplying the (resamples x groups) count matrix
    with a (groups x metrics) matrix gives every metric's bootstrap distribution. Intervals equal
    ``bootstrap_ratio``'s for each metric with the same seed. A metric whose denominator sums to 0
    has value ``None``; resamples with a zero denominator are left out of its interval.
    """
    names = list(metrics)
    if not names:
        return {}
    n = len(metrics[names[0]][0])
    num = np.zeros((n, len(names)))
    den = np.zeros((n, len(names)))
    for j, name in enumerate(names):
        a, b = metrics[name]
        if len(a) != n or len(b) != n:
            raise ValueError(f"metric {name!r}: {len(a)} numerators and {len(b)} denominators for {n} observations")
        num[:, j] = np.asarray(a, dtype=float)
        den[:, j] = np.asarray(b, dtype=float)
    idx, g = _group_index(groups, n)
    out: dict[str, Estimate] = {}
    if n == 0:
        return {name: Estimate(None, None, None, 0, 0) for name in names}
    num_g = np.zeros((g, len(names)))
    den_g = np.zeros((g, len(names)))
    np.add.at(num_g, idx, num)
    np.add.at(den_g, idx, den)
    live = den.sum(axis=0) > 0
    boots = []
    if live.any():
        for counts in resample_counts(g, n_resamples, seed):
            with np.errstate(invalid="ignore", divide="ignore"):
                boots.append((counts @ num_g[:, live]) / (counts @ den_g[:, live]))
    boot = np.concatenate(boots) if boots else None
    k = 0
    for j, name in enumerate(names):
        n_obs = int(np.count_nonzero(den[:, j]))
        if not live[j]:
            out[name] = Estimate(None, None, None, n_obs, g)
            continue
        lo, hi = _interval(boot[:, k], level)
        k += 1
        out[name] = Estimate(float(num[:, j].sum() / den[:, j].sum()), lo, hi, n_obs, g)
    return out


def bootstrap_ratio_diff(num_a: Sequence[float], den_a: Sequence[float], groups_a: Sequence[Hashable],
                         num_b: Sequence[float], den_b: Sequence[float], groups_b: Sequence[Hashable],
                         n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Estimate:
    """ratio(b) - ratio(a) (ratio = sum(num) / sum(den)) over the groups both sides have, resampling
    those groups jointly: the interval of a paired difference (two runs on the same scenes, or the
    implicit minus the explicit member of each MPE pair, grouped by pair id)."""
    return bootstrap_ratio_diffs({"d": (num_a, den_a)}, groups_a, {"d": (num_b, den_b)}, groups_b,
                                 n_resamples, seed, level)["d"]


def bootstrap_ratio_diffs(metrics_a: Mapping[str, tuple[Sequence[float], Sequence[float]]], groups_a: Sequence[Hashable],
                          metrics_b: Mapping[str, tuple[Sequence[float], Sequence[float]]], groups_b: Sequence[Hashable],
                          n_resamples: int = N_RESAMPLES, seed: int = SEED, level: float = LEVEL) -> dict[str, Estimate]:
    """``bootstrap_ratio_diff`` for several metrics (the same names on both sides) with one shared
    draw of the groups both sides have. ``None`` entries are left out."""
    names = list(metrics_a)

    def per_group(num, den, groups):
        out: dict = {}
        for a, b, key in zip(num, den, groups):
            acc = out.setdefault(key, [0.0, 0.0])
            if a is None or b is None:
                continue
            acc[0] += float(a)
            acc[1] += float(b)
        return out

    side_a = {k: per_group(*metrics_a[k], groups_a) for k in names}
    side_b = {k: per_group(*metrics_b[k], groups_b) for k in names}
    keys_a = list(dict.fromkeys(groups_a))
    keys_b = set(groups_b)
    common = [k for k in keys_a if k in keys_b]
    out: dict[str, Estimate] = {}
    if not common:
        return {k: Estimate(None, None, None, 0, 0) for k in names}
    mats = {}
    for k in names:
        na = np.array([side_a[k][g][0] for g in common])
        da = np.array([side_a[k][g][1] for g in common])
        nb = np.array([side_b[k][g][0] for g in common])
        db = np.array([side_b[k][g][1] for g in common])
        mats[k] = (na, da, nb, db)
    live = [k for k in names if mats[k][1].sum() > 0 and mats[k][3].sum() > 0]
    boots: dict[str, list] = {k: [] for k in live}
    if live:
        stack = np.stack([np.stack(mats[k]) for k in live])  # (metrics, 4, groups)
        flat = stack.reshape(-1, len(common)).T  # (groups, metrics * 4)
        for counts in resample_counts(len(common), n_resamples, seed):
            sums = (counts @ flat).reshape(len(counts), len(live), 4)
            with np.errstate(invalid="ignore", divide="ignore"):
                d = sums[:, :, 2] / sums[:, :, 3] - sums[:, :, 0] / sums[:, :, 1]
            for j, k in enumerate(live):
                boots[k].append(d[:, j])
    for k in names:
        na, da, nb, db = mats[k]
        n_obs = int(np.count_nonzero(da) + np.count_nonzero(db))
        if k not in boots:
            out[k] = Estimate(None, None, None, n_obs, len(common))
            continue
        lo, hi = _interval(np.concatenate(boots[k]), level)
        out[k] = Estimate(float(nb.sum() / db.sum() - na.sum() / da.sum()), lo, hi, n_obs, len(common))
    return out


# ------------------------------------------------------------------------------ paired tests, ranks


def mcnemar_exact(a: Sequence[bool | int | None], b: Sequence[bool | int | None]) -> dict:
    """Exact McNemar test on paired binary outcomes ``a[i]``, ``b[i]`` (pairs with a ``None`` on
    either side are left out): scipy's two-sided binomial test of the discordant pairs against
    p = 0.5. ``b10`` = pairs with a = 1 and b = 0, ``b01`` the reverse; ``p`` is 1.0 when no pair
    is discordant, ``None`` when there is no pair at all."""
    from scipy.stats import binomtest

    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} outcomes: McNemar needs pairs")
    pairs = [(int(bool(x)), int(bool(y))) for x, y in zip(a, b) if x is not None and y is not None]
    b10 = sum(1 for x, y in pairs if x == 1 and y == 0)
    b01 = sum(1 for x, y in pairs if x == 0 and y == 1)
    n_disc = b10 + b01
    if not pairs:  # nothing matched (e.g. the conditions ran with different seeds): no test
        p = None
    else:
        p = 1.0 if n_disc == 0 else float(binomtest(b10, n_disc, 0.5, alternative="two-sided").pvalue)
    return {"n_pairs": len(pairs), "b10": b10, "b01": b01, "discordant": n_disc, "p": p,
            "test": "exact McNemar (scipy.stats.binomtest on discordant pairs, two-sided)"}


def ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (1 = smallest; ties share the mean rank), as Spearman uses them."""
    from scipy.stats import rankdata

    return [float(r) for r in rankdata(np.asarray(values, dtype=float))]


def spearman(x: Sequence[float | None], y: Sequence[float | None]) -> float | None:
    """Spearman's rank correlation between two rankings of the same runs (e.g. the runs ordered by
    fresh-onset rate and by presence). Entries with a ``None`` on either side are left out;
    ``None`` with fewer than two runs left or a constant side."""
    from scipy.stats import spearmanr

    pairs = [(float(a), float(b)) for a, b in zip(x, y) if a is not None and b is not None]
    if len(pairs) < 2:
        return None
    xs, ys = zip(*pairs)
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    rho = spearmanr(xs, ys).statistic
    return None if not np.isfinite(rho) else float(rho)
