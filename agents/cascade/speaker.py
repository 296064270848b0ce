"""Streaming TTS: a response is rendered sentence by sentence, just ahead of playback.

``say(text, at)`` queues a response (or a backchannel) to start at output sample ``at``; each
``frame(m)`` returns output frame ``m`` and renders the next sentence only when the audio
already rendered runs out within two frames, so a barge-in (``stop()``) also stops the
rendering of the rest of the answer.
"""

from __future__ import annotations

import re

import numpy as np

SENTENCE_GAP_S = 0.15


def sentences(text: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=[.!?;])\s+", text.strip()) if p.strip()]
    return [p for p in parts if re.search(r"\w", p)]


class Speaker:
    def __init__(self, renderer, voice: str, frame_samples: int):
        self.renderer, self.voice, self.N = renderer, voice, frame_samples
        self.gap = np.zeros(int(SENTENCE_GAP_S * renderer.sample_rate), np.float32)
        self.reset()

    def reset(self) -> None:
        self.buf = np.zeros(0, np.float32)
        self.start = 0  # output sample where buf[0] plays
        self.pending: list[str] = []
        self.kind: str | None = None  # "response" or "backchannel" while busy
        self.text = ""  # the text of the current utterance
        self.spoken_s = 0.0  # seconds of it played so far
        self.rendered = 0

    def say(self, text: str, at: int, kind: str = "response") -> None:
        """Queue ``text`` to start at output sample ``at`` (after what is already queued)."""
        parts = sentences(text)
        if not parts:
            return
        if self.busy():
            self.pending.extend(parts)  # after the current utterance, e.g. an answer after a backchannel
            self.text += " " + text
            self.kind = "response" if kind == "response" else self.kind
            return
        self.buf = np.zeros(0, np.float32)
        self.start = at
        self.pending = parts
        self.kind, self.text, self.spoken_s = kind, text, 0.0

    def stop(self) -> None:
        self.buf = np.zeros(0, np.float32)
        self.pending = []
        self.kind = None

    def busy(self) -> bool:
        return bool(self.pending) or len(self.buf) > 0

    def frame(self, m: int) -> np.ndarray:
        N = self.N
        lo = m * N
        out = np.zeros(N, np.float32)
        if not self.busy():
            return out
        if lo < self.start:  # the utterance starts inside or after this frame
            if self.start >= lo + N:
                return out
            off = self.start - lo
        else:
            off = 0
            skip = lo - self.start  # frames missed (should not happen): drop their audio
            if skip > 0:
                self._ensure(skip)
                self.buf = self.buf[skip:]
                self.start = lo
        need = N - off
        self._ensure(need + 2 * N)
        take = self.buf[:need]
        out[off : off + len(take)] = take
        self.buf = self.buf[len(take):]
        self.start = lo + N
        self.spoken_s += len(take) / self.renderer.sample_rate
        if not self.busy():
            self.kind = None
        return out

    def _ensure(self, n: int) -> None:
        while len(self.buf) < n and self.pending:
            text = self.pending.pop(0)
            audio = self.renderer.clip(text, self.voice)
            self.rendered += 1
            tail = self.gap if self.pending else np.zeros(0, np.float32)
            self.buf = np.concatenate([self.buf, audio, tail])
