"""Tables over overlap episodes (``info["overlap"]``, run-folder lines or a run folder): per event
kind and over all four, shares and means with bootstrap 95% intervals over scenes (SPEC 7).

Metrics (``paper`` profile): ``met_speaking`` (share of events that met a speaking assistant),
``right`` (share whose category is the expected one: ``C_RESPOND`` after an interruption,
``C_RESUME`` after the others), the share of each v1.5 category, ``held`` (hold events that met
speech: still speaking at the event's end), ``stop_latency_s`` and ``did_not_stop`` (events that
met speech), ``response_latency_s`` (events with a new response), and the judge's coverage.
"""

from __future__ import annotations

from pathlib import Path

from . import stats
from .overlap import CATEGORIES, EVENTS

KINDS = tuple(EVENTS.values())
EXPECTED = {"interruption": "C_RESPOND"}  # the others: C_RESUME


def _items(source) -> list[tuple[object, dict]]:
    if isinstance(source, (str, Path)):
        from ..runs import read_run

        source = list(read_run(Path(source)))
    out = []
    for i, item in enumerate(source):
        if not isinstance(item, dict):
            raise TypeError(f"item {i}: expected an info['overlap'] result or a run line, got {type(item).__name__}")
        r = item.get("overlap") if "overlap" in item else item
        if r and "event" in r:
            out.append((r.get("scene_id", item.get("scene_id", f"#{i}")), r))
    return out


def aggregate_overlap(source, n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED) -> dict:
    """``{"n_episodes", "bootstrap", "events": {kind or "all": {"n", "n_scenes", metric: estimate,
    "categories": {tag: estimate}, "coverage": {...}}}}``."""
    items = _items(source)
    boot = {"n_resamples": n_resamples, "seed": seed}
    table = {"n_episodes": len(items), "bootstrap": {**boot, "level": stats.LEVEL, "unit": "scene"}, "events": {}}
    for kind in ("all",) + KINDS:
        rows = [(g, r) for g, r in items if kind == "all" or r["event"] == kind]
        if rows:
            table["events"][kind] = _metrics(rows, boot)
    return table


def _metrics(rows, boot) -> dict:
    def est(pairs):
        pairs = [(g, v) for g, v in pairs if v is not None]
        return stats.bootstrap_mean([float(v) for _, v in pairs], [g for g, _ in pairs], **boot).as_dict()

    p = [(g, r["event"], r.get("paper") or {}) for g, r in rows]
    out: dict = {"n": len(rows), "n_scenes": len({g for g, _ in rows})}
    out["met_speaking"] = est((g, m.get("met_speaking")) for g, _, m in p)
    judged = [(g, k, m) for g, k, m in p if m.get("category") is not None]
    out["right"] = est((g, m["category"] == EXPECTED.get(k, "C_RESUME")) for g, k, m in judged)
    out["categories"] = {tag: est((g, m["category"] == tag) for g, _, m in judged) for tag in CATEGORIES}
    out["held"] = est((g, m.get("held")) for g, k, m in p if k != "interruption" and m.get("met_speaking"))
    out["stop_latency_s"] = est((g, m.get("stop_latency_s")) for g, _, m in p)
    out["did_not_stop"] = est((g, m.get("did_not_stop")) for g, _, m in p if m.get("met_speaking"))
    out["response_latency_s"] = est((g, m.get("response_latency_s")) for g, _, m in p)
    missing: dict = {}
    for _, _, m in p:
        if m.get("category") is None:
            why = m.get("judge_failure") or "not judged"
            missing[why] = missing.get(why, 0) + 1
    out["coverage"] = {"judged": len(judged), "of": len(p), "judge": sorted({m.get("judge") for _, _, m in p if m.get("judge")}),
                       "missing": missing}
    return out


# The headline columns of a run's overlap rows (fdenv-report), paper profile.
HEADLINE = [("met_speaking", "met"), ("right", "right"), ("held", "held"), ("stop_latency_s", "stop s"),
            ("response_latency_s", "response s")]
