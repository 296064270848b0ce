"""A text picture of one episode: a lane per human, one for the assistant (reads a record only).

    turn_taking-0007 (12.6 s, one column = 0.2 s)
      Maya      cccccccccccc   ffffffffff
      assistant                           ########
      labels: c ctx, p pause, m monologue, f final, i interrupt, ...

A human column shows the label letter of the turn being spoken ('.' inside a turn's own silences:
pauses, TRP gaps); the assistant column is '#' where the assistant track is above -45 dBFS.
"""

from __future__ import annotations

import numpy as np

from .record import EpisodeRecord

LETTERS = {"ctx": "c", "pause": "p", "monologue": "m", "final": "f", "interrupt": "i", "duty": "d",
           "T": "T", "N1": "1", "N2": "2", "N3": "3", "N4Q": "Q", "N4R": "R",
           "bc": "b", "false_start": "x", "repair": "!", "reask": "a"}
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
