"""Clip post-processing: resample, trim to the voiced part, normalise the active speech level.

Every step is deterministic. Bump ``PROCESSING_VERSION`` whenever the output of ``process``
changes: it is part of every clip's cache key.
"""

from __future__ import annotations

import numpy as np

from ..audio import resample

PROCESSING_VERSION = "1"

ACTIVE_LEVEL_DBFS = -23.0  # target RMS over the active (speech) frames
PEAK_MAX = 0.9
TRIM_FRAME_S = 0.005
TRIM_REL_DB = -40.0  # a frame is voiced above this, relative to the loudest frame ...
TRIM_FLOOR_DBFS = -70.0  # ... and above this absolute floor
TRIM_MARGIN_S = 0.003
ACTIVE_FRAME_S = 0.010
ACTIVE_REL_DB = -30.0  # frames within 30 dB of the loudest count as active speech


def _frame_rms(x: np.ndarray, n: int) -> np.ndarray:
    m = len(x) // n
    head = x[: m * n].astype(np.float64).reshape(m, n)
    rms = np.sqrt(np.mean(head * head, axis=1))
    if len(x) > m * n:
        tail = x[m * n :].astype(np.float64)
        rms = np.append(rms, np.sqrt(np.mean(tail * tail)))
    return rms


def trim(x: np.ndarray, sr: int) -> np.ndarray:
    """The voiced part of ``x`` with a small margin; empty if nothing is voiced."""
    n = max(1, int(round(TRIM_FRAME_S * sr)))
    rms = _frame_rms(x, n)
    if len(rms) == 0:
        return x[:0]
    thr = max(rms.max() * 10 ** (TRIM_REL_DB / 20), 10 ** (TRIM_FLOOR_DBFS / 20))
    voiced = np.flatnonzero(rms > thr)
    if len(voiced) == 0:
        return x[:0]
    margin = int(round(TRIM_MARGIN_S * sr))
    start = max(0, voiced[0] * n - margin)
    end = min(len(x), (voiced[-1] + 1) * n + margin)
    return x[start:end]


def active_level_dbfs(x: np.ndarray, sr: int) -> float:
    """RMS level (dBFS) over the frames within ``ACTIVE_REL_DB`` of the loudest frame."""
    rms = _frame_rms(x, max(1, int(round(ACTIVE_FRAME_S * sr))))
    if len(rms) == 0 or rms.max() <= 0:
        return -np.inf
    active = rms[rms > rms.max() * 10 ** (ACTIVE_REL_DB / 20)]
    return float(20 * np.log10(np.sqrt(np.mean(active * active))))


def normalise(x: np.ndarray, sr: int) -> np.ndarray:
    """Scale to an active level of ``ACTIVE_LEVEL_DBFS``, then down if the peak exceeds ``PEAK_MAX``."""
    level = active_level_dbfs(x, sr)
    if not np.isfinite(level):
        return x.astype(np.float32)
    y = x.astype(np.float64) * 10 ** ((ACTIVE_LEVEL_DBFS - level) / 20)
    peak = np.abs(y).max()
    if peak > PEAK_MAX:
        y *= PEAK_MAX / peak
    return y.astype(np.float32)


def process(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Native back-end audio -> the clip the env plays: float32 mono at ``sr_out``."""
    y = trim(resample(x, sr_in, sr_out), sr_out)
    if len(y) == 0:
        return y.astype(np.float32)
    return normalise(y, sr_out)
