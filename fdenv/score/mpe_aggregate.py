"""Duplex-MPE's aggregation (SPEC 7): rates with bootstrap 95% intervals over scenes with pairs
kept together, explicit and implicit side by side, paired differences with exact McNemar p values,
failure kinds, request-position groups, window response, and the rank correlation of the
sensitivity analysis. Input: per-episode counts (``info["mpe"]``, run lines), records, or a run folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from . import stats
from .mpe import CONDITIONS, COUNT_KEYS, MIN_ELIGIBLE, MPEScorer


CAPABILITIES = (  # key, label, numerator, denominator, denominator label
    ("presence", "response presence", "presence", "requests", "requests"),
    ("fresh_onset", "fresh-onset response rate", "fresh_onset", "requests", "requests"),
    ("accuracy", "conditional answer accuracy", "correct", "answered", "judged requests with presence"),
    ("silence_preservation", "silence preservation", "silence_preserved", "silence_judged", "silence windows"),
    ("yield", "answering-window yield", "yielded", "yield_judged", "eligible N4 events"),
)
DIAGNOSTICS = (
    ("window_response", "N4 window response", "window_response", "n4_events", "N4 events"),
    ("yield_eligibility", "N4 yield eligibility", "yield_eligible", "n4_events", "N4 events"),
)
MCNEMAR_ON = ("presence", "fresh_onset")


def _items(source) -> list[dict]:
    """Per-episode MPE counts from run lines, ``info["mpe"]`` dicts, records, or a run folder."""
    if isinstance(source, (str, Path)):
        from ..runs import read_run

        source = read_run(source)
    out = []
    scorer = None
    for i, item in enumerate(source):
        if isinstance(item, dict) and "requests" in item:
            out.append(dict(item))
        elif isinstance(item, dict) and "mpe" in item:
            if item["mpe"]:
                d = dict(item["mpe"])
                for k in ("pair_id", "condition", "scene_id", "seed"):
                    if d.get(k) is None and item.get(k) is not None:
                        d[k] = item[k]
                out.append(d)
        elif isinstance(item, dict):
            continue  # a run line of another kind (FDB)
        elif hasattr(item, "assistant") and hasattr(item, "turns"):
            if scorer is None:
                scorer = MPEScorer()
            d = scorer.score(item)
            if d is not None:
                out.append(d)
        else:
            raise TypeError(f"item {i}: expected a run line, an info['mpe'] dict or an EpisodeRecord, got {type(item).__name__}")
    return out


def _sum_counts(dicts) -> dict:
    out: dict = {}
    for d in dicts:
        for k, n in d.items():
            out[k] = out.get(k, 0) + n
    return out


def _group(d: dict, i: int):
    return d.get("pair_id") or d.get("scene_id") or f"#{i}"


def _est(e: stats.Estimate, num: float, den: float, den_label: str) -> dict:
    return {"value": e.value, "lo": e.lo, "hi": e.hi, "n": int(round(den)), "num": int(round(num)),
            "den": int(round(den)), "den_label": den_label, "n_groups": e.n_groups}


def _rates(items: list[dict], groups: list, specs, boot: dict) -> dict:
    metrics = {key: ([d.get(num, 0) or 0 for d in items], [d.get(den, 0) or 0 for d in items]) for key, _, num, den, _ in specs}
    ests = stats.bootstrap_ratios(metrics, groups, **boot)
    out = {}
    for key, _, num, den, den_label in specs:
        out[key] = _est(ests[key], sum(metrics[key][0]), sum(metrics[key][1]), den_label)
    return out


def position_groups(items: list[dict]) -> tuple[list[float], list[int | None]]:
    """Quartile cut points of the requests' relative positions, and each item's group (1..4)."""
    pos = [d.get("t_position") for d in items]
    known = np.array([p for p in pos if p is not None], dtype=float)
    if known.size == 0:
        return [], [None] * len(items)
    cuts = [float(c) for c in np.quantile(known, [0.25, 0.5, 0.75])]
    return cuts, [None if p is None else 1 + int(np.searchsorted(cuts, p, side="left")) for p in pos]


def aggregate_mpe(source, n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED,
                  min_eligible: int = MIN_ELIGIBLE) -> dict:
    """MPE's per-run table from per-episode counts (run lines with ``"mpe"``, ``info["mpe"]``
    dicts, EpisodeRecords or a run folder).

    Returns ``{"n_episodes", "bootstrap", "conditions": {cond: {metric: estimate}}, "paired":
    {metric: {"diff": estimate (implicit - explicit), "mcnemar": {...} (presence, fresh onset)}},
    "failures": {cond: {...}}, "coverage": {cond: {...}}, "positions": {"cuts", cond: [...]},
    "headline": [(key, label, estimate), ...]}``. Estimates are dicts with ``value``, ``lo``,
    ``hi`` (95% bootstrap over scenes, pairs kept together), ``n`` (= ``den``, the denominator),
    ``num``. The yield rate is ``None`` (``"reported": False``) under ``min_eligible`` eligible
    events; its counts are always there.
    """
    items = _items(source)
    boot = {"n_resamples": n_resamples, "seed": seed}
    conds = [c for c in CONDITIONS if any(d.get("condition") == c for d in items)]
    subsets = {c: [d for d in items if d.get("condition") == c] for c in conds}
    subsets["all"] = items
    cuts, group_of = position_groups(items)
    out: dict = {
        "n_episodes": len(items),
        "bootstrap": {**boot, "level": stats.LEVEL, "unit": "pair (scene when no pair id)"},
        "min_eligible": min_eligible,
        "judge": sorted({d.get("judge") for d in items if d.get("judge")}),
        "min_speech_ms": sorted({d.get("min_speech_ms") for d in items if d.get("min_speech_ms") is not None}),
        "conditions": {}, "failures": {}, "coverage": {}, "positions": {"cuts": cuts}, "paired": {},
    }
    gidx = {id(d): g for d, g in zip(items, group_of)}
    for cond, sub in subsets.items():
        groups = [_group(d, i) for i, d in enumerate(sub)]
        rates = _rates(sub, groups, CAPABILITIES + DIAGNOSTICS, boot) if sub else {}
        if sub:
            y = rates["yield"]
            eligible = sum(d.get("yield_eligible", 0) for d in sub)
            y["eligible"] = eligible
            y["reported"] = eligible >= min_eligible
            if not y["reported"]:
                y.update(value=None, lo=None, hi=None, note=f"{eligible} eligible events (< {min_eligible}): rate not reported")
        out["conditions"][cond] = rates
        tot = {k: sum(d.get(k, 0) or 0 for d in sub) for k in COUNT_KEYS}
        out["failures"][cond] = {"eligible": tot["yield_eligible"], "yielded": tot["yielded"],
                                 "still_speaking": tot["fail_still_speaking"], "spoke_again": tot["fail_spoke_again"],
                                 "n4_events": tot["n4_events"], "window_response": tot["window_response"],
                                 "reasks": tot["reasks"], "answered_after_reask": tot["answered_after_reask"]}
        out["coverage"][cond] = {
            "accuracy": {"judged": tot["answered"], "of": tot["presence"]},
            "silence": {"judged": tot["silence_judged"], "of": tot["silence_windows"]},
            "yield": {"judged": tot["yield_judged"], "of": tot["yield_eligible"]},
            "missing": _sum_counts(d.get("judge_missing") or {} for d in sub),
        }
        out["positions"][cond] = _position_rates(sub, [gidx.get(id(d)) for d in sub], boot)
    if set(conds) == set(CONDITIONS):
        out["paired"] = _paired(subsets["explicit"], subsets["implicit"], boot, min_eligible)
    out["headline"] = _headline(out, conds or ["all"])
    return out


def _position_rates(items: list[dict], group_of: list, boot: dict) -> list[dict]:
    """Presence, fresh onset and accuracy per request-position group (1..4), from one draw over
    the condition's pairs (each metric counts only its group's requests)."""
    specs = CAPABILITIES[:3]
    metrics = {}
    for g in range(1, 5):
        inside = [1.0 if q == g else 0.0 for q in group_of]
        for key, _, num, den, _ in specs:
            metrics[(g, key)] = ([(d.get(num, 0) or 0) * w for d, w in zip(items, inside)],
                                 [(d.get(den, 0) or 0) * w for d, w in zip(items, inside)])
    ests = stats.bootstrap_ratios(metrics, [_group(d, i) for i, d in enumerate(items)], **boot) if items else {}
    out = []
    for g in range(1, 5):
        members = [d for d, q in zip(items, group_of) if q == g]
        if not members:
            out.append({"group": g, "n": 0})
            continue
        pos = [d["t_position"] for d in members]
        rates = {key: _est(ests[(g, key)], sum(metrics[(g, key)][0]), sum(metrics[(g, key)][1]), den_label)
                 for key, _, _, _, den_label in specs}
        out.append({"group": g, "n": len(members), "range": [min(pos), max(pos)], **rates})
    return out


def _paired(ex: list[dict], im: list[dict], boot: dict, min_eligible: int = MIN_ELIGIBLE) -> dict:
    specs = CAPABILITIES + DIAGNOSTICS
    side = lambda items: {key: ([d.get(num, 0) for d in items], [d.get(den, 0) for d in items])  # noqa: E731
                          for key, _, num, den, _ in specs}
    diffs = stats.bootstrap_ratio_diffs(side(ex), [_group(d, i) for i, d in enumerate(ex)],
                                        side(im), [_group(d, i) for i, d in enumerate(im)], **boot)
    out = {}
    for key, *_ in specs:
        e = diffs[key]
        out[key] = {"diff": {"value": e.value, "lo": e.lo, "hi": e.hi, "n": e.n_groups, "n_groups": e.n_groups}}
    # the yield rate is only reported from min_eligible events on, so is its difference
    eligible = min(sum(d.get("yield_eligible", 0) for d in side_) for side_ in (ex, im))
    if eligible < min_eligible:
        out["yield"]["diff"].update(value=None, lo=None, hi=None, reported=False,
                                    note=f"{eligible} eligible events in a condition (< {min_eligible}): not reported")
    # exact McNemar on presence and fresh onset: pairs matched by (pair id, seed)
    key_of = lambda d: (d.get("pair_id"), d.get("seed"))  # noqa: E731
    im_by = {key_of(d): d for d in im if d.get("pair_id")}
    matched = [(d, im_by[key_of(d)]) for d in ex if d.get("pair_id") and key_of(d) in im_by]
    for key in MCNEMAR_ON:
        a = [_all(d, key) for d, _ in matched]
        b = [_all(d, key) for _, d in matched]
        out[key]["mcnemar"] = stats.mcnemar_exact(a, b)
    return out


def _all(d: dict, key: str) -> int | None:
    """1 when every request of the episode had the outcome, 0 when not, None without requests."""
    n = d.get("requests", 0)
    return None if not n else int(d.get(key, 0) == n)


def _headline(agg: dict, conds: list[str]) -> list:
    rows = []
    for key, label, *_ in CAPABILITIES:
        for cond in conds:
            e = agg["conditions"].get(cond, {}).get(key)
            if e is not None:
                rows.append((f"{key}.{cond}", f"{label} ({cond})" if cond != "all" else label, e))
        if "explicit" in conds and "implicit" in conds and key in agg.get("paired", {}):
            p = agg["paired"][key]
            d = dict(p["diff"])
            if "mcnemar" in p:
                d["p"] = p["mcnemar"]["p"]
            rows.append((f"{key}.diff", f"{label} (implicit - explicit)", d))
    return rows


def rank_correlation(aggs: Sequence[dict], metric_a: str = "fresh_onset", metric_b: str = "presence",
                     conditions: Sequence[str] = CONDITIONS) -> float | None:
    """Spearman correlation between the rankings of runs' entries (one per run and condition, as in
    MPE's sensitivity analysis) by two metrics: ``aggs`` are ``aggregate_mpe`` results (several
    runs, or one run under several ``min_speech_ms`` values against another metric)."""
    xs, ys = [], []
    for agg in aggs:
        for cond in conditions:
            c = agg["conditions"].get(cond)
            if not c:  # a condition without episodes
                continue
            xs.append(c[metric_a]["value"])
            ys.append(c[metric_b]["value"])
    return stats.spearman(xs, ys)
