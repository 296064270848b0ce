"""Pictures across runs: per-metric bar charts with intervals (matplotlib, Agg). The picture of one
episode (humans, assistant, labels, scored windows) lives in ``fdenv.timeline``, below the env
that draws it too; it is importable from here."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .timeline import (  # noqa: F401  (the pictures of one episode, importable from here)
    COLORS, MEANINGS, episode_figure, episode_png, episode_rgb, episode_title, headline_score, lanes, scored_windows,
)

def metric_bars(summaries: list[dict], path: str | Path, profile: str = "paper") -> Path:
    """Bars per agent for each (dimension, metric), with 95% intervals; ``summaries`` from
    ``fdenv.report.run_summary``."""
    import matplotlib.pyplot as plt

    from .report import label_runs
    from .score.summary import HEADLINE, MPE_HEADLINE, mpe_values

    label_runs(summaries)  # every bar names what differs between the runs
    panels: dict[tuple[str, str], list[tuple[str, dict]]] = {}
    for s in summaries:
        for dim, entry in s["fdb"].get("dimensions", {}).items():
            for key, label in HEADLINE.get(dim, []):
                e = entry.get(profile, {}).get(key)
                if e and e.get("value") is not None:
                    panels.setdefault((dim, label), []).append((s["label"], e))
        values = mpe_values(s)
        for key, label in MPE_HEADLINE:
            e = values.get(key)
            if e and e.get("value") is not None:
                panels.setdefault(("multi-party", label), []).append((s["label"], e))
    if not panels:
        raise ValueError("no scored metrics in these runs to plot")
    n = len(panels)
    cols = min(4, n)
    rows = -(-n // cols)
    import matplotlib

    matplotlib.use("Agg")
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), dpi=100, squeeze=False)
    for ax, ((dim, label), bars) in zip(axes.flat, panels.items()):
        names = [b[0] for b in bars]
        vals = np.array([b[1]["value"] for b in bars])
        lo = np.array([b[1].get("lo", b[1]["value"]) if b[1].get("lo") is not None else b[1]["value"] for b in bars])
        hi = np.array([b[1].get("hi", b[1]["value"]) if b[1].get("hi") is not None else b[1]["value"] for b in bars])
        ax.bar(range(len(bars)), vals, yerr=[vals - lo, hi - vals], capsize=3, color="#2364aa")
        ax.set_xticks(range(len(bars)), names, rotation=30, ha="right", fontsize=7)
        ax.set_title(f"{dim}: {label}", fontsize=9)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
