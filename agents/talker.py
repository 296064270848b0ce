"""The talker: talks all the time, one unbroken stream of voiced speech.

TTS sentences with every silence longer than 50 ms cut out, looped, so a voice activity detector
sees a single segment from the first frame to the last. Upper bound for presence, lower bound for
silence and yielding.
"""

from __future__ import annotations

import numpy as np

from .base import Agent

TEXT = (
    "Let me tell you everything I know about this, because there is a lot to say. "
    "First of all, the weather has been lovely, and the garden is growing fast. "
    "Then there is the question of dinner, which we should really settle soon. "
    "And of course I have opinions about trains, timetables and the best seats."
)
MAX_SILENCE_S = 0.05


def remove_silences(audio: np.ndarray, sample_rate: int, max_silence_s: float = MAX_SILENCE_S,
                    threshold_dbfs: float = -40.0) -> np.ndarray:
    """Cut every stretch quieter than ``threshold_dbfs`` (5 ms windows) longer than the limit."""
    win = max(1, int(sample_rate * 0.005))
    n = len(audio) // win
    frames = audio[: n * win].reshape(n, win)
    loud = np.sqrt((frames.astype(np.float64) ** 2).mean(axis=1) + 1e-20) > 10 ** (threshold_dbfs / 20)
    keep = np.ones(n, bool)
    max_run = int(max_silence_s / 0.005)
    i = 0
    while i < n:
        if not loud[i]:
            j = i
            while j < n and not loud[j]:
                j += 1
            if j - i > max_run:
                keep[i + max_run // 2 : j - max_run // 2] = False
            i = j
        else:
            i += 1
    return frames[keep].reshape(-1)


class TalkerAgent(Agent):
    name = "talker"

    def __init__(self, tts: str = "espeak", text: str = TEXT):
        self.tts, self.text = tts, text
        self._loops: dict[int, np.ndarray] = {}

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        if sample_rate not in self._loops:
            from fdenv.render import Renderer

            r = Renderer(backend=self.tts, sample_rate=sample_rate)
            voice = r.voices[0]
            parts = [r.clip(s.strip() + ".", voice) for s in self.text.split(".") if s.strip()]
            self._loops[sample_rate] = remove_silences(np.concatenate(parts), sample_rate)
        self._loop = self._loops[sample_rate]
        self._pos = 0

    def act(self, observation, labels=None):
        N, loop = self.frame_samples, self._loop
        idx = (self._pos + np.arange(N)) % len(loop)
        self._pos = (self._pos + N) % len(loop)
        return loop[idx]

    def config(self):
        return {"tts": self.tts, "text": self.text}
