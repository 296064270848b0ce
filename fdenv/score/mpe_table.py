"""Duplex-MPE's per-run table as text (``format_mpe``) and as rows (``mpe_rows``)."""

from __future__ import annotations

from . import stats
from .mpe_aggregate import CAPABILITIES, DIAGNOSTICS, aggregate_mpe


def _fmt_rate(e: dict | None) -> str:
    if not e:
        return "-"
    frac = f"{e.get('num', 0)}/{e.get('den', e.get('n', 0))}"
    if e.get("value") is None:
        return f"- ({frac})" + (" <30 eligible" if e.get("reported") is False else "")
    ci = f" [{e['lo']:.3f}, {e['hi']:.3f}]" if e.get("lo") is not None else ""
    return f"{e['value']:.3f}{ci} ({frac})"


def _fmt_diff(p: dict | None) -> str:
    if not p or p.get("diff", {}).get("value") is None:
        return "-"
    d = p["diff"]
    s = f"{d['value']:+.3f}"
    if d.get("lo") is not None:
        s += f" [{d['lo']:+.3f}, {d['hi']:+.3f}]"
    if "mcnemar" in p and p["mcnemar"]["p"] is not None:
        s += f" p={p['mcnemar']['p']:.3g}"
    return s


def mpe_rows(agg: dict) -> list[dict]:
    """MPE's table as rows: capability, denominator, explicit, implicit, difference, p value."""
    rows = []
    for key, label, _, _, den_label in CAPABILITIES + DIAGNOSTICS:
        p = agg.get("paired", {}).get(key)
        rows.append({
            "key": key, "capability": label, "denominator": den_label,
            "explicit": agg["conditions"].get("explicit", {}).get(key),
            "implicit": agg["conditions"].get("implicit", {}).get(key),
            "all": agg["conditions"].get("all", {}).get(key),
            "diff": None if p is None else p["diff"],
            "p": None if p is None or "mcnemar" not in p else p["mcnemar"]["p"],
        })
    return rows


def format_mpe(agg: dict) -> str:
    """MPE's per-run table as text: each capability with its denominator and 95% interval,
    explicit and implicit side by side, the paired difference (implicit - explicit) with its
    exact McNemar p value (presence, fresh onset); then failure kinds, coverage and the
    request-position groups."""
    b = agg["bootstrap"]
    lines = [f"MPE: {agg['n_episodes']} episodes; 95% bootstrap intervals over pairs ({b['n_resamples']} resamples, "
             f"seed {b['seed']}); judge {', '.join(agg['judge']) or '-'}; min_speech_ms {agg['min_speech_ms']}"]
    head = ("capability", "denominator", "explicit", "implicit", "implicit - explicit")
    table = [head]
    for r in mpe_rows(agg):
        ex, im = r["explicit"], r["implicit"]
        if ex is None and im is None:
            ex = r["all"]
        table.append((r["capability"], r["denominator"], _fmt_rate(ex), _fmt_rate(im),
                      _fmt_diff(agg.get("paired", {}).get(r["key"]))))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for i, row in enumerate(table):
        lines.append("  ".join(c.ljust(widths[j]) for j, c in enumerate(row)).rstrip())
        if i == 0:
            lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    for cond, f in agg["failures"].items():
        if cond == "all" and len(agg["failures"]) > 1:
            continue
        cov = agg["coverage"][cond]
        lines.append(f"{cond}: yield failures: still speaking at r+2 s {f['still_speaking']}, stopped then spoke again "
                     f"{f['spoke_again']} (of {f['eligible']} eligible, {f['n4_events']} N4 events, "
                     f"{f['window_response']} with window response); coverage: accuracy {cov['accuracy']['judged']}/"
                     f"{cov['accuracy']['of']}, silence {cov['silence']['judged']}/{cov['silence']['of']}, "
                     f"yield {cov['yield']['judged']}/{cov['yield']['of']}")
        if cov.get("missing"):  # verdicts the judge could not give, and why
            lines.append(f"{cond}: missing verdicts: " + ", ".join(f"{n} x {why}" for why, n in sorted(cov["missing"].items())))
    cuts = agg["positions"].get("cuts")
    if cuts:
        lines.append("request position quartiles (relative index cut at " + ", ".join(f"{c:.2f}" for c in cuts) + "):")
        for cond in ("explicit", "implicit", "all"):
            if cond not in agg["positions"] or (cond == "all" and len(agg["failures"]) > 1):
                continue
            cells = []
            for g in agg["positions"][cond]:
                if not g.get("n"):
                    cells.append(f"Q{g['group']} -")
                    continue
                cells.append(f"Q{g['group']} presence {_short(g['presence'])} fresh {_short(g['fresh_onset'])} "
                             f"acc {_short(g['accuracy'])}")
            lines.append(f"  {cond}: " + " | ".join(cells))
    return "\n".join(lines)


def _short(e: dict) -> str:
    return "-" if e.get("value") is None else f"{e['value']:.2f}"


def mpe_summary(source, n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED) -> str:
    """``format_mpe(aggregate_mpe(source))``: the table of a run folder, lines or records."""
    return format_mpe(aggregate_mpe(source, n_resamples=n_resamples, seed=seed))
