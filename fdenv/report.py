"""Run folders side by side: one compact table, one row per (agent, dimension).

Reads only run folders (``config.json`` + ``episodes.jsonl``); numbers come from
``fdenv.score.aggregate`` (bootstrap 95% intervals over scenes).
"""

from __future__ import annotations

import json
from pathlib import Path

from .score import stats

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


def run_summary(folder: str | Path, n_resamples: int = stats.N_RESAMPLES) -> dict:
    """Agent, scene set and the aggregate table of one run folder."""
    from .run import read_episodes
    from .score import aggregate

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    lines = read_episodes(folder)
    fdb_lines = [ln for ln in lines if ln.get("fdb")]
    table = aggregate(fdb_lines, n_resamples=n_resamples) if fdb_lines else {"dimensions": {}}
    mpe = None
    if any(ln.get("mpe") for ln in lines):
        try:
            from .score.mpe import aggregate_mpe
        except ImportError:
            aggregate_mpe = None
        if aggregate_mpe is not None:
            mpe = aggregate_mpe([ln for ln in lines if ln.get("mpe")], n_resamples=n_resamples)
    return {"folder": str(folder), "agent": config["agent"]["name"], "set": config["scenes"].get("set"),
            "privileged": any(ln.get("privileged") for ln in lines), "episodes": len(lines), "fdb": table, "mpe": mpe}


def _cell(e: dict | None) -> str:
    if e and e.get("reported") is False:  # MPE's yield: a rate only from 30 eligible events on
        return f"- ({e.get('eligible', 0)} eligible < 30)"
    if not e or e.get("value") is None:
        return "-"
    v, lo, hi = e["value"], e.get("lo"), e.get("hi")
    if lo is None or hi is None or lo == hi:
        return f"{v:.2f}"
    return f"{v:.2f} [{lo:.2f},{hi:.2f}]"


def format_runs(summaries: list[dict]) -> str:
    """One row per (agent, dimension); the paper profile, with 95% bootstrap intervals."""
    rows = [("agent", "dimension", "n", "metrics (paper profile, 95% CI over scenes)")]
    for s in summaries:
        name = s["agent"] + (" *" if s["privileged"] else "")
        for dim, entry in s["fdb"].get("dimensions", {}).items():
            metrics = entry.get("paper", {})
            cells = [f"{label} {_cell(metrics.get(key))}" for key, label in HEADLINE.get(dim, [])]
            rows.append((name, dim, str(entry["n"]), "   ".join(cells)))
        if s.get("mpe"):
            both = s["mpe"]["conditions"].get("all", {})
            cells = [f"{label} {_cell(both.get(key))}" for key, label in MPE_HEADLINE]
            rows.append((name, "multi-party", str(s["mpe"]["n_episodes"]), "   ".join(cells)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    out = []
    for i, r in enumerate(rows):
        out.append("  ".join(r[c].ljust(widths[c]) for c in range(3)) + "  " + r[3])
        if i == 0:
            out.append("-" * (sum(widths) + 6 + max(len(x[3]) for x in rows)))
    if any(s["privileged"] for s in summaries):
        out.append("* privileged agent (saw the scene and the labels): an upper bound, not a model")
    return "\n".join(out)


def print_runs(folders: list[str | Path]) -> None:
    print(format_runs([run_summary(f) for f in folders]))
