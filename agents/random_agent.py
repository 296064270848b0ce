"""The random agent: seeded on/off speech, blind to what it hears.

Speech and silence alternate with geometric durations (in 80 ms frames, means ``mean_speech_s``
and ``mean_silence_s``); speech is TTS audio read on from a looped text, faded in and out over
5 ms. The generator is seeded from ``(seed, number of resets so far)``, so a fresh agent replays
the same sequence of episodes, and every episode differs from the previous one (so a run that
resumes half-way, with a fresh agent, gives its remaining episodes other draws than an
uninterrupted run would). A chance-level baseline for timing metrics.
"""

from __future__ import annotations

import numpy as np

from .base import Agent
from .talker import TEXT, remove_silences

FADE_S = 0.005


class RandomAgent(Agent):
    name = "random"

    def __init__(self, seed: int = 0, mean_speech_s: float = 1.5, mean_silence_s: float = 3.0,
                 tts: str = "espeak", text: str = TEXT):
        for field, v in (("mean_speech_s", mean_speech_s), ("mean_silence_s", mean_silence_s)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.08 <= v <= 600:
                raise ValueError(f"random: {field}={v!r}; expected seconds in [0.08, 600]")
        self.seed, self.mean_speech_s, self.mean_silence_s = int(seed), float(mean_speech_s), float(mean_silence_s)
        self.tts, self.text = tts, text
        self._loops: dict[int, np.ndarray] = {}
        self._resets = 0

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        if sample_rate not in self._loops:
            from fdenv.render import Renderer

            r = Renderer(backend=self.tts, sample_rate=sample_rate)
            parts = [r.clip(s.strip() + ".", r.voices[0]) for s in self.text.split(".") if s.strip()]
            self._loops[sample_rate] = remove_silences(np.concatenate(parts), sample_rate)
        self._loop = self._loops[sample_rate]
        self._rng = np.random.default_rng([self.seed, self._resets])
        self._resets += 1
        self._pos = 0
        self._speaking = False
        self._left = self._draw(self.mean_silence_s)
        self._fade = np.linspace(0.0, 1.0, max(1, int(FADE_S * sample_rate)), dtype=np.float32)

    def _draw(self, mean_s: float) -> int:
        """Frames in the next state: geometric with mean ``mean_s / 0.08`` frames (at least 1)."""
        mean_frames = max(1.0, mean_s / 0.08)
        return int(self._rng.geometric(1.0 / mean_frames))

    def act(self, observation, labels=None):
        N = self.frame_samples
        if self._left == 0:
            self._speaking = not self._speaking
            self._left = self._draw(self.mean_speech_s if self._speaking else self.mean_silence_s)
            self._first = True
        self._left -= 1
        if not self._speaking:
            return np.zeros(N, np.float32)
        idx = (self._pos + np.arange(N)) % len(self._loop)
        self._pos = (self._pos + N) % len(self._loop)
        out = self._loop[idx].copy()
        f = len(self._fade)
        if self._first:
            out[:f] *= self._fade
            self._first = False
        if self._left == 0:
            out[-f:] *= self._fade[::-1]
        return out

    def config(self):
        return {"seed": self.seed, "mean_speech_s": self.mean_speech_s, "mean_silence_s": self.mean_silence_s,
                "tts": self.tts, "text": self.text}
