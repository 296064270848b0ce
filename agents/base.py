"""The agent protocol (DESIGN "Public surface").

An agent is reset with the duty text and the audio format, then asked for one frame of audio per
observation. A *privileged* agent (the oracle, scripted test agents) also gets the scene at reset
and the labels at each step; the runner marks its scores as privileged. The runner is the only
code that feeds agents, so this rule lives in one place (``fdenv.run``).
"""

from __future__ import annotations

import numpy as np


class Agent:
    """Base class: silent unless a subclass says otherwise.

    Example (the runner feeds an agent; ``make_agent`` builds one by name):
        >>> from fdenv.run import run_episode
        >>> from fdenv.sim.env import RoomEnv
        >>> from fdenv_agents import make_agent
        >>> result = run_episode(RoomEnv(scene_set="turn_taking", split="test"), make_agent("talker"), seed=0)
        >>> result.record.assistant_silent, result.record.privileged
        (False, False)
    """

    name = "agent"
    privileged = False

    def reset(self, duty: str, sample_rate: int, frame_samples: int, scene=None) -> None:
        self.duty, self.sample_rate, self.frame_samples = duty, sample_rate, frame_samples
        self._zeros = np.zeros(frame_samples, np.float32)

    def act(self, observation: np.ndarray, labels: dict | None = None) -> np.ndarray:
        return self._zeros

    def config(self) -> dict:
        """The knobs that affect results (they key run folders)."""
        return {}


class TrackPlayer:
    """A growable assistant track read out frame by frame: what agents that "say" clips use.

    ``put(audio, at_sample)`` mixes audio in; ``frame(m)`` returns samples [m*N, (m+1)*N).
    ``stop(at_sample)`` silences everything from that sample on (barge-in).
    """

    def __init__(self, frame_samples: int):
        self.N = frame_samples
        self.track = np.zeros(frame_samples * 64, np.float32)
        self.end = 0  # one past the last non-silent sample put

    def put(self, audio: np.ndarray, at: int) -> int:
        end = at + len(audio)
        if end > len(self.track):
            grown = np.zeros(max(end, 2 * len(self.track)) + self.N, np.float32)
            grown[: len(self.track)] = self.track
            self.track = grown
        self.track[at:end] += audio
        self.end = max(self.end, end)
        return end

    def stop(self, at: int) -> None:
        if at < self.end:
            self.track[at : self.end] = 0.0
            self.end = at

    def busy(self, at: int) -> bool:
        return at < self.end

    def frame(self, m: int) -> np.ndarray:
        lo = m * self.N
        if lo >= self.end:
            return np.zeros(self.N, np.float32)
        if lo + self.N > len(self.track):
            self.put(np.zeros(self.N, np.float32), lo)
        return self.track[lo : lo + self.N].copy()
