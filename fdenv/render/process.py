"""Clip post-processing: resample, trim to the voiced part, normalise the active speech level.

Every step is deterministic. Bump ``PROCESSING_VERSION`` whenever the output of ``process``
changes: it is part of every clip's cache key.
"""

from __future__ import annotations

import numpy as np

from ..audio import resample

PROCESSING_VERSION = "3"  # 2: turns in one piece, cut at word boundaries; long inner silences shortened

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


# ---- one turn in one piece (Renderer.turn) ----------------------------------------------------
MAX_GAP_S = 0.25  # no silence inside a clip longer than this (a pause a listener takes for a turn end)
KEEP_GAP_S = 0.18  # what a longer silence is shortened to: a clear phrase break, not a turn end
GAP_FRAME_S = 0.010
GAP_REL_DB = -33.0  # a 10 ms frame this far below the loudest frame of the clip is silent (stricter
# than the -35 dB on 20 ms frames that prosody.longest_inner_silence measures with)
EDGE_FADE_S = 0.004  # a cut at a word boundary is faded over this, so it does not click


def quiet_runs(x: np.ndarray, sr: int) -> list[tuple[int, int]]:
    """``(start, end)`` samples of the silent stretches strictly inside ``x`` (not its edges)."""
    n = max(1, int(round(GAP_FRAME_S * sr)))
    rms = _frame_rms(x, n)
    if len(rms) == 0 or rms.max() <= 0:
        return []
    quiet = rms <= max(rms.max() * 10 ** (GAP_REL_DB / 20), 10 ** (TRIM_FLOOR_DBFS / 20))
    runs, i = [], 0
    while i < len(quiet):
        if quiet[i]:
            j = i
            while j < len(quiet) and quiet[j]:
                j += 1
            if i > 0 and j < len(quiet):
                runs.append((i * n, min(len(x), j * n)))
            i = j
        else:
            i += 1
    return runs


def shorten_gaps(x: np.ndarray, sr: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Shorten every inner silence longer than ``MAX_GAP_S`` to ``KEEP_GAP_S`` (the middle is cut,
    the silence's edges kept). Returns the audio and the cuts ``(position in the input, samples
    removed)``, in order, for moving word times with ``moved``."""
    keep = int(round(KEEP_GAP_S * sr))
    cuts, parts, pos = [], [], 0
    for a, b in quiet_runs(x, sr):
        if b - a <= MAX_GAP_S * sr:
            continue
        lo = a + keep // 2
        hi = b - (keep - keep // 2)
        parts.append(x[pos:lo])
        cuts.append((lo, hi - lo))
        pos = hi
    if not cuts:
        return x, []
    parts.append(x[pos:])
    return np.concatenate(parts), cuts


def moved(t: int, cuts: list[tuple[int, int]]) -> int:
    """Where input sample ``t`` lies after ``shorten_gaps`` removed ``cuts``."""
    out = t
    for at, n in cuts:
        if t >= at + n:
            out -= n
        elif t > at:
            out -= t - at
    return out


def trim_bounds(x: np.ndarray, sr: int) -> tuple[int, int]:
    """``(start, end)`` of ``trim``'s voiced part of ``x``; (0, 0) if nothing is voiced."""
    n = max(1, int(round(TRIM_FRAME_S * sr)))
    rms = _frame_rms(x, n)
    if len(rms) == 0:
        return 0, 0
    thr = max(rms.max() * 10 ** (TRIM_REL_DB / 20), 10 ** (TRIM_FLOOR_DBFS / 20))
    voiced = np.flatnonzero(rms > thr)
    if len(voiced) == 0:
        return 0, 0
    margin = int(round(TRIM_MARGIN_S * sr))
    return max(0, voiced[0] * n - margin), min(len(x), (voiced[-1] + 1) * n + margin)


def fade_edges(x: np.ndarray, sr: int, head: bool, tail: bool) -> np.ndarray:
    """A short raised-cosine fade at a cut edge of ``x`` (in place on a copy)."""
    n = min(len(x) // 2, int(round(EDGE_FADE_S * sr)))
    if n <= 0 or not (head or tail):
        return x
    y = x.astype(np.float32, copy=True)
    ramp = (0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)).astype(np.float32)
    if head:
        y[:n] *= ramp
    if tail:
        y[-n:] *= ramp[::-1]
    return y


def turn_gain(pieces: list[np.ndarray], sr: int) -> float:
    """One gain for every piece of a turn: the turn's active level to ``ACTIVE_LEVEL_DBFS``, then
    down if the turn's peak would exceed ``PEAK_MAX`` (the level is the turn's, not each piece's)."""
    whole = np.concatenate([p for p in pieces if len(p)]) if any(len(p) for p in pieces) else np.zeros(0)
    level = active_level_dbfs(whole, sr) if len(whole) else -np.inf
    if not np.isfinite(level):
        return 1.0
    g = 10 ** ((ACTIVE_LEVEL_DBFS - level) / 20)
    peak = float(np.abs(whole).max()) * g
    return g * (PEAK_MAX / peak if peak > PEAK_MAX else 1.0)
