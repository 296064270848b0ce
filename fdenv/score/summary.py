"""Per-dimension tables over many episodes (SPEC 6, 7): means with bootstrap 95% intervals and
counts. ``aggregate`` accepts EpisodeRecords, per-episode FDB results (``info["fdb"]``), run-folder
lines, or a run folder (SPEC 9: ``episodes.jsonl`` next to the saved records)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from . import stats
from .fdb import DIMENSIONS, PROFILES, FDBScorer


def _items(source, scorer_kwargs: dict) -> list[tuple[object, dict]]:
    """(group, fdb result) pairs from any accepted source."""
    scorer = None

    def score(rec):
        nonlocal scorer
        if scorer is None:
            scorer = FDBScorer(**scorer_kwargs)
        return scorer.score(rec)

    if isinstance(source, (str, Path)):
        return _run_dir_items(Path(source), score)
    if not isinstance(source, (list, tuple)) and not hasattr(source, "__iter__") or isinstance(source, dict):
        source = [source]
    out = []
    for i, item in enumerate(source):
        if isinstance(item, dict):
            if "dimension" in item:  # an info["fdb"] result, optionally with scene_id
                out.append((item.get("scene_id", f"#{i}"), item))
            elif "fdb" in item:  # a run-folder line
                if item["fdb"] is not None:
                    out.append((item.get("scene_id", f"#{i}"), item["fdb"]))
            else:
                raise ValueError(f"item {i}: a dict must be an FDB result (with 'dimension') or a run line (with 'fdb')")
        elif hasattr(item, "assistant") and hasattr(item, "turns"):
            r = score(item)
            if r is not None:
                out.append((item.scene.id, r))
        else:
            raise TypeError(f"item {i}: expected an EpisodeRecord or a dict, got {type(item).__name__}")
    return out


def _run_dir_items(run_dir: Path, score) -> list[tuple[object, dict]]:
    from ..record import EpisodeRecord
    from ..runs import read_run

    out = []
    for n, row in enumerate(read_run(run_dir), 1):
        group = row.get("scene_id", f"#{n}")
        if row.get("fdb") is not None:
            out.append((group, row["fdb"]))
            continue
        stem = row.get("record")
        if not stem:
            continue
        r = score(EpisodeRecord.load(run_dir / stem))
        if r is not None:
            out.append((group, r))
    return out


def aggregate(source, profiles: Iterable[str] = PROFILES, asr="tiny.en", judge="offline", min_speech_ms: int = 250,
              n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED) -> dict:
    """Per-dimension, per-profile table: ``{"n_episodes", "dimensions": {dim: {"n", "n_scenes",
    profile: {metric: {"value", "lo", "hi", "n", "n_groups"}, ...}}}}``.

    Metrics: ``tor``; backchannel ``freq_hz``, ``jsd`` (paper: over TO = 0 episodes; fdb_code: over
    all, as the scripts do) and ``bc_share`` (episodes with >= 1 backchannel); turn-taking
    ``latency_s`` (over TO = 1) with ``latency_median`` / ``latency_p90`` and ``overlapping`` (share
    of TO = 1 with latency < 0, paper); interruption ``latency_s``, ``stop_latency_s``,
    ``did_not_stop`` (share of episodes where the assistant spoke at the interrupt), ``relevance``
    (over TO = 1, with ``relevance_coverage``).
    """
    profiles = tuple(profiles)
    items = _items(source, {"profiles": profiles, "asr": asr, "judge": judge, "min_speech_ms": min_speech_ms})
    boot = {"n_resamples": n_resamples, "seed": seed}
    table = {"n_episodes": len(items), "bootstrap": {**boot, "level": stats.LEVEL, "unit": "scene"}, "dimensions": {}}
    for dim in DIMENSIONS:
        rows = [(g, r) for g, r in items if r.get("dimension") == dim]
        if not rows:
            continue
        entry = {"n": len(rows), "n_scenes": len({g for g, _ in rows})}
        for prof in profiles:
            rs = [(g, r.get(prof)) for g, r in rows if r.get(prof)]
            if rs:
                entry[prof] = _metrics(dim, prof, rs, boot)
        table["dimensions"][dim] = entry
    return table


def _est(values, groups, boot) -> dict:
    return stats.bootstrap_mean(values, groups, **boot).as_dict()


def _metrics(dim: str, prof: str, rs: list[tuple[object, dict]], boot: dict) -> dict:
    groups = [g for g, _ in rs]
    res = [r for _, r in rs]
    m = {"tor": _est([r.get("to") for r in res], groups, boot)}

    def subset(cond, key):
        pairs = [(g, r.get(key)) for g, r in rs if cond(r) and r.get(key) is not None]
        return [v for _, v in pairs], [g for g, _ in pairs]

    if dim == "backchannel":
        cond = (lambda r: r.get("to") == 0) if prof == "paper" else (lambda r: True)
        for key in ("freq_hz", "jsd"):
            v, g = subset(cond, key)
            m[key] = _est(v, g, boot)
        v, g = subset(lambda r: True, "n_backchannels")
        m["bc_share"] = _est([1.0 if x >= 1 else 0.0 for x in v], g, boot)
    elif dim == "turn_taking":
        v, g = subset(lambda r: r.get("to") == 1, "latency_s")
        m["latency_s"] = _est(v, g, boot)
        m["latency_median"] = stats.bootstrap_quantile(v, g, 0.5, **boot).as_dict()
        m["latency_p90"] = stats.bootstrap_quantile(v, g, 0.9, **boot).as_dict()
        if prof == "paper":
            m["overlapping"] = _est([1.0 if x < 0 else 0.0 for x in v], g, boot)
    elif dim == "interruption":
        v, g = subset(lambda r: r.get("to") == 1, "latency_s")
        m["latency_s"] = _est(v, g, boot)
        if prof == "paper":
            v, g = subset(lambda r: True, "stop_latency_s")
            m["stop_latency_s"] = _est(v, g, boot)
            v, g = subset(lambda r: bool(r.get("spoke_at_interrupt")), "did_not_stop")
            m["did_not_stop"] = _est([1.0 if x else 0.0 for x in v], g, boot)
        eligible = [r for r in res if r.get("to") == 1]
        v, g = subset(lambda r: r.get("to") == 1, "relevance")
        m["relevance"] = _est(v, g, boot)
        missing: dict = {}
        for r in eligible:
            if r.get("relevance") is None:
                why = r.get("judge_failure") or "no verdict"
                missing[why] = missing.get(why, 0) + 1
        m["relevance_coverage"] = {"answered": len(v), "eligible": len(eligible),
                                   "judge": sorted({r.get("judge") for r in eligible if r.get("judge")}),
                                   "missing": missing}
    return m


def format_table(table: dict) -> str:
    """A plain-text rendering of ``aggregate``'s table."""

    def fmt(e):
        if e is None:
            return "-"
        if isinstance(e, (int, float)):
            return f"{e:.3f}"
        if isinstance(e, dict) and "value" in e:
            if e["value"] is None:
                return f"- (n={e['n']})"
            return f"{e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}] (n={e['n']}, scenes={e['n_groups']})"
        if isinstance(e, dict):
            return ", ".join(f"{k}={v}" for k, v in e.items())
        return str(e)

    lines = [f"episodes: {table['n_episodes']}  (bootstrap over scenes, {table['bootstrap']['n_resamples']} resamples, "
             f"seed {table['bootstrap']['seed']}, 95% percentile intervals)"]
    for dim, entry in table["dimensions"].items():
        lines.append(f"{dim}: {entry['n']} episodes, {entry['n_scenes']} scenes")
        for prof in PROFILES:
            if prof not in entry:
                continue
            for metric, e in entry[prof].items():
                lines.append(f"  {prof:8s} {metric:20s} {fmt(e)}")
    return "\n".join(lines)


# The headline metrics per dimension, in the paper profile (SPEC 6), and how to print them.
HEADLINE = {
    "pause_handling": [("tor", "TOR")],
    "backchannel": [("tor", "TOR"), ("freq_hz", "freq/s"), ("jsd", "JSD")],
    "turn_taking": [("tor", "TOR"), ("latency_s", "latency s")],
    "interruption": [("tor", "TOR"), ("stop_latency_s", "stop s"), ("latency_s", "latency s"), ("relevance", "relevance")],
}


# Multi-party capabilities (SPEC 7), explicit and implicit together; ``--mpe`` in fdenv-report
# prints them per condition with the paired difference.
MPE_HEADLINE = [("presence", "presence"), ("fresh_onset", "fresh onset"), ("accuracy", "accuracy"),
                ("silence_preservation", "silence"), ("yield", "yield")]


def mpe_values(summary: dict) -> dict[str, dict]:
    """``{"<metric>": estimate, "<metric>.<condition>": estimate}`` of a run summary's MPE table."""
    out = {}
    for cond, rates in ((summary.get("mpe") or {}).get("conditions") or {}).items():
        for key, e in rates.items():
            out[key if cond == "all" else f"{key}.{cond}"] = e
    return out
