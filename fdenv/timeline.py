"""Pictures of one episode, from its record only: a text timeline (``timeline_text``) and a
matplotlib figure (``episode_figure``: humans, assistant, labels and the scored windows of
``fdenv.windows``; the env's ``render()`` draws it).

A text timeline has a lane per human and one for the assistant:

    turn_taking-0007 (12.6 s, one column = 0.2 s)
      Maya      cccccccccccc   ffffffffff
      assistant                           ########
      labels: c ctx, p pause, m monologue, f final, i interrupt, ...

A human column shows the label letter of the turn being spoken ('.' inside a turn's own silences:
pauses, TRP gaps); the assistant column is '#' where the assistant track is above -45 dBFS.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .record import EpisodeRecord
from .windows import played_windows

LETTERS = {"ctx": "c", "pause": "p", "monologue": "m", "final": "f", "interrupt": "i", "duty": "d",
           "T": "T", "N1": "1", "N2": "2", "N3": "3", "N4Q": "Q", "N4R": "R",
           "bc": "b", "false_start": "x", "repair": "!", "reask": "a", "side": "s", "background": "t"}
LEGEND = "c ctx, p pause, m monologue, f final, i interrupt, d duty, T request, 1/2/3 N1-N3, Q N4Q, R N4R, b backchannel, x false start, ! repair, a re-ask, # assistant"


def timeline_text(record: EpisodeRecord, step_s: float | None = None, name_width: int = 10, max_columns: int = 110) -> str:
    if step_s is None:  # 0.2 s a column, coarser for long episodes so a line fits a terminal
        step_s = max(0.2, float(np.ceil(record.duration / max_columns * 10) / 10))
    n = int(np.ceil(record.duration / step_s))
    lanes: dict[str, list[str]] = {}
    for s in record.scene.speakers:
        lanes[s.name] = [" "] * n
    label_of = {t.id: t.label for t in record.turns}
    for t in record.turns:
        for c in range(int(t.start / step_s), min(n, int(np.ceil(t.end / step_s)))):
            if lanes[t.speaker][c] == " ":
                lanes[t.speaker][c] = "."
    for clip in record.clips:
        ch = LETTERS.get(label_of.get(clip.turn_id, ""), "?")
        for c in range(int(clip.start / step_s), min(n, int(np.ceil(clip.end / step_s)))):
            lanes[clip.speaker][c] = ch
    lanes = {k: v for k, v in lanes.items() if any(ch != " " for ch in v)}
    sr = record.sample_rate
    hop = int(round(step_s * sr))
    x = record.assistant[: n * hop]
    x = np.pad(x, (0, n * hop - len(x)))
    rms = np.sqrt((x.reshape(n, hop).astype(np.float64) ** 2).mean(axis=1))
    lanes["assistant"] = ["#" if v > 10 ** (-45 / 20) else " " for v in rms]
    head = f"{record.scene.id} ({record.duration:.1f} s, one column = {step_s:g} s)"
    rows = [f"  {name[:name_width]:<{name_width}} {''.join(lane).rstrip()}" for name, lane in lanes.items()]
    return "\n".join([head, *rows])


COLORS = {"ctx": "#9aa5b1", "pause": "#f0a202", "monologue": "#7cb518", "final": "#2364aa", "interrupt": "#d7263d",
          "duty": "#6c757d", "T": "#2364aa", "N1": "#8e44ad", "N2": "#8e44ad", "N3": "#8e44ad", "N4Q": "#16a085",
          "N4R": "#e67e22", "side": "#b5838d", "background": "#6d6875"}
# What each colour means (the picture's legend, the README's and the episode browser's).
MEANINGS = {"ctx": "context", "pause": "turn with a pause", "monologue": "monologue", "final": "final turn (answer it)",
            "interrupt": "barge-in", "duty": "duty (instructions)", "T": "request to the assistant",
            "N1": "talk not for the assistant (N1-N3)", "N4Q": "question to the assistant", "N4R": "human resolves it",
            "side": "side conversation (hold the floor)", "background": "TV or radio (hold the floor)"}


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
