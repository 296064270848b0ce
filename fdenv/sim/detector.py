"""The assistant activity detector (SPEC 3): frame RMS above -45 dBFS, held for 240 ms.

It runs on the action stream (the assistant track, source axis), one 80 ms frame at a time, and
is the only view of the assistant that the scheduler and the labels have.
"""

from __future__ import annotations

import math

import numpy as np

ACTIVE_DBFS = -45.0
HOLD_S = 0.24
# Mean square above this is "active": compare squares, no sqrt or log in the hot path.
_ACTIVE_MS = 10.0 ** (ACTIVE_DBFS / 10.0)


def frame_energy(frame: np.ndarray) -> float:
    """Sum of squares of one frame."""
    return float(np.dot(frame, frame))


def frame_is_loud(frame: np.ndarray, energy: float | None = None) -> bool:
    """Raw activity of one frame: RMS above -45 dBFS (``energy``: its ``frame_energy``, if known)."""
    return (frame_energy(frame) if energy is None else energy) > _ACTIVE_MS * frame.shape[0]


class ActivityDetector:
    """Per-frame activity with hold. ``update`` is called once per frame, in order."""

    def __init__(self, frame_samples: int, sample_rate: int):
        self.hold_frames = int(round(HOLD_S * sample_rate / frame_samples))
        self.reset()

    def reset(self) -> None:
        self.frames = 0
        self.active = False  # detector state of the last frame (hold included)
        self.loud = False  # raw state of the last frame
        self.energy = 0.0  # the last frame's sum of squares (positive: it has a non-zero sample)
        self._since_loud = math.inf  # frames since the last loud frame
        self.onsets: list[int] = []  # frame indices where the detector turned active

    def update(self, frame: np.ndarray, energy: float | None = None) -> bool:
        """The state after ``frame`` (``energy``: its ``frame_energy``, if the caller has it)."""
        self.energy = frame_energy(frame) if energy is None else energy
        loud = frame_is_loud(frame, self.energy)
        self._since_loud = 0 if loud else self._since_loud + 1
        active = self._since_loud <= self.hold_frames
        if active and not self.active:
            self.onsets.append(self.frames)
        self.active, self.loud = active, loud
        self.frames += 1
        return active
