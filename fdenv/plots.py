"""Pictures: an episode timeline (humans, assistant, labels, scored windows) and per-metric bar
charts with intervals across runs. Reads records and run summaries only (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .record import EpisodeRecord
from .windows import played_windows

COLORS = {"ctx": "#9aa5b1", "pause": "#f0a202", "monologue": "#7cb518", "final": "#2364aa", "interrupt": "#d7263d",
          "duty": "#6c757d", "T": "#2364aa", "N1": "#8e44ad", "N2": "#8e44ad", "N3": "#8e44ad", "N4Q": "#16a085",
          "N4R": "#e67e22"}
# What each colour means (the picture's legend, the README's and the episode browser's).
MEANINGS = {"ctx": "context", "pause": "turn with a pause", "monologue": "monologue", "final": "final turn (answer it)",
            "interrupt": "barge-in", "duty": "duty (instructions)", "T": "request to the assistant",
            "N1": "talk not for the assistant (N1-N3)", "N4Q": "question to the assistant", "N4R": "human resolves it"}


def _figure(width_in: float, height_in: float):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width_in, height_in), dpi=100)


def scored_windows(record: EpisodeRecord) -> list[tuple[float, float, str]]:
    """The windows the measures look at (SPEC 6, 7, ``fdenv.windows``), as (start, end, label of
    the turn that opens them)."""
    return [(w.start, w.end, w.label) for w in played_windows(record.turns)]


def episode_title(record: EpisodeRecord, line: dict | None = None, run_label: str | None = None) -> str:
    """``scene (kind) | agent | room | headline score``: what a picture needs to stand on its own."""
    room = (record.config or {}).get("room") or {}
    parts = [f"{record.scene.id} ({record.scene.kind})"]
    if run_label:
        parts.append(run_label)
    parts.append(f"room {room.get('preset', 'custom') if isinstance(room, dict) and room else 'anechoic'}")
    if line is not None:
        score = headline_score(line)
        if score:
            parts.append(score)
    return " | ".join(parts)


def headline_score(line: dict) -> str:
    """An episode's main scores in a few words (paper profile), from its run-folder line."""
    fdb = (line.get("fdb") or {}).get("paper")
    if fdb:
        keys = [("to", "TO"), ("latency_s", "latency"), ("stop_latency_s", "stop"), ("relevance", "relevance"),
                ("freq_hz", "freq/s")]
        return ", ".join(f"{name} {fdb[k]:.2f}" if isinstance(fdb[k], float) else f"{name} {fdb[k]}"
                         for k, name in keys if fdb.get(k) is not None)
    mpe = line.get("mpe")
    if mpe:
        return (f"presence {mpe['presence']}/{mpe['requests']}, silence {mpe['silence_preserved']}/"
                f"{mpe['silence_windows']}, yielded {mpe['yielded']}/{mpe['yield_eligible']}")
    return ""


def lanes(record: EpisodeRecord) -> dict[str, int]:
    """The picture's lanes, top to bottom: each human who spoke, then the assistant (y values)."""
    names = [s.name for s in record.scene.speakers if any(c.speaker == s.name for c in record.clips)] + ["assistant"]
    return {name: len(names) - 1 - i for i, name in enumerate(names)}


def episode_figure(record: EpisodeRecord, title: str | None = None):
    """A matplotlib figure of one episode, with a legend of the colours it uses."""
    y = lanes(record)
    names = list(y)
    fig, ax = _figure(max(8.0, record.duration / 2.5), 0.55 * len(names) + 2.0)
    label_of = {t.id: t.label for t in record.turns}
    for start, end, name in scored_windows(record):
        ax.axvspan(start, end, color=COLORS.get(name, "#cccccc"), alpha=0.08, lw=0)
    for c in record.clips:
        ax.broken_barh([(c.start, c.end - c.start)], (y[c.speaker] - 0.35, 0.7),
                       color=COLORS.get(label_of.get(c.turn_id, ""), "#999999"))
    for t in record.turns:
        ax.text(t.start, y[t.speaker] + 0.4, t.label, fontsize=7, va="bottom")
        for x in t.trps:
            ax.plot([x, x], [y[t.speaker] - 0.45, y[t.speaker] + 0.45], color="k", lw=0.8)
    sr = record.sample_rate
    hop = max(1, sr // 100)
    a = record.assistant[: len(record.assistant) // hop * hop].reshape(-1, hop)
    env = np.sqrt((a.astype(np.float64) ** 2).mean(axis=1))
    env = np.clip(20 * np.log10(env + 1e-9), -60, 0)
    level = (env + 60) / 60  # 0..1
    times = np.arange(len(level)) * hop / sr
    ax.fill_between(times, y["assistant"] - 0.4 * level, y["assistant"] + 0.4 * level, color="#111111", lw=0)
    ax.set_yticks([y[n] for n in names], names)
    ax.set_xlim(0, record.duration)
    ax.set_ylim(-0.8, len(names) - 0.2)
    ax.set_xlabel("time (s, microphone 0)")
    ax.set_title(title or f"{record.scene.id} ({record.scene.kind})", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    _legend(ax, {label_of.get(c.turn_id, "") for c in record.clips}, bool(scored_windows(record)))
    fig.tight_layout()
    return fig


def _legend(ax, labels: set, shaded: bool) -> None:
    from matplotlib.patches import Patch

    handles, seen = [], set()
    for label, meaning in MEANINGS.items():
        if label in labels or (label == "N1" and labels & {"N2", "N3"}):
            if meaning not in seen:
                seen.add(meaning)
                handles.append(Patch(color=COLORS[label], label=meaning))
    handles.append(Patch(color="#111111", label="assistant level"))
    if shaded:
        handles.append(Patch(color="#2364aa", alpha=0.15, label="shaded: scored window"))
    handles.append(ax.plot([], [], color="k", lw=0.8, label="transition-relevance place (TRP)")[0])
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=min(len(handles), 5),
              fontsize=7, frameon=False)


def episode_rgb(record: EpisodeRecord) -> np.ndarray:
    """The timeline as an ``(H, W, 3)`` uint8 image (what ``render_mode="rgb_array"`` returns)."""
    import matplotlib.pyplot as plt

    fig = episode_figure(record)
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return img


def episode_png(record: EpisodeRecord, path: str | Path, title: str | None = None) -> Path:
    import matplotlib.pyplot as plt

    fig = episode_figure(record, title)
    fig.savefig(path)
    plt.close(fig)
    return Path(path)


def metric_bars(summaries: list[dict], path: str | Path, profile: str = "paper") -> Path:
    """Bars per agent for each (dimension, metric), with 95% intervals; ``summaries`` from
    ``fdenv.report.run_summary``."""
    import matplotlib.pyplot as plt

    from .report import HEADLINE, MPE_HEADLINE, label_runs, mpe_values

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
