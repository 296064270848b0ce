"""The scripted agent: plays given clips at given times, exact to the sample inside a frame.

Times are seconds on the assistant track (the action stream): a clip at ``t`` starts at sample
``round(t * sample_rate)`` of the track, whichever frame that falls in. A clip is an array (at
the env's rate) or a text rendered with the assistant's TTS voice. Privileged, so that tests may
also react to labels through ``on_labels``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .base import Agent, TrackPlayer


class ScriptedAgent(Agent):
    name = "scripted"
    privileged = True

    def __init__(self, events=(), tts: str = "espeak", on_labels: Callable | None = None):
        """``events``: ``[(t_seconds, audio_or_text), ...]``. ``on_labels(agent, labels)`` may
        call ``agent.say(...)`` / ``agent.stop(...)`` while the episode runs."""
        self.events = list(events)
        self.tts = tts
        self.on_labels = on_labels

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        self.scene = scene
        self.player = TrackPlayer(frame_samples)
        self._k = 0
        for t, clip in self.events:
            self.say(clip, t)

    def say(self, clip, t: float) -> int:
        """Put a clip on the track at ``t`` seconds; returns its end sample."""
        audio = self.render(clip) if isinstance(clip, str) else np.asarray(clip, np.float32)
        return self.player.put(audio, int(round(t * self.sample_rate)))

    def stop(self, t: float) -> None:
        self.player.stop(int(round(t * self.sample_rate)))

    def render(self, text: str) -> np.ndarray:
        from fdenv.render import Renderer

        if not hasattr(self, "_renderer") or self._renderer.sample_rate != self.sample_rate:
            self._renderer = Renderer(backend=self.tts, sample_rate=self.sample_rate)
        return self._renderer.clip(text, self._renderer.voices[-1])

    def act(self, observation, labels=None):
        if self.on_labels is not None and labels is not None:
            self.on_labels(self, labels)
        self._k += 1
        return self.player.frame(self._k)

    def config(self):
        return {"events": [(t, c if isinstance(c, str) else f"<{len(c)} samples>") for t, c in self.events]}
