"""Measures of rendered speech: F0 contour, the fall at a piece's end, silences inside a clip.

Used by the tests and ``benchmarks/bench_voices.py`` to check what ``Renderer.turn`` promises:
words before a scripted pause end like a phrase that goes on (no final fall), and no silence
inside a clip is long enough to pass for the end of a turn. Independent of the renderer's own
gap finder (different frames and threshold), so the check is not the code checking itself.
"""

from __future__ import annotations

import numpy as np

F0_MIN, F0_MAX = 60.0, 450.0
FRAME_S, HOP_S = 0.040, 0.010
VOICED_CORR = 0.5  # normalised autocorrelation peak above which a frame is voiced
VOICED_REL_DB = -30.0  # ... and its level within this of the clip's loudest frame
OCTAVE_COST = 0.05  # per octave down from F0_MAX: of two equal peaks, the shorter period wins


def f0_track(x: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """(frame centre times in s, F0 in Hz or NaN when unvoiced): normalised autocorrelation."""
    x = np.asarray(x, np.float64)
    n, hop = int(FRAME_S * sr), int(HOP_S * sr)
    if len(x) < n:
        return np.zeros(0), np.zeros(0)
    starts = np.arange(0, len(x) - n + 1, hop)
    frames = np.stack([x[s : s + n] for s in starts])
    frames = frames - frames.mean(axis=1, keepdims=True)
    level = np.sqrt(np.mean(frames ** 2, axis=1))
    loud = level > level.max() * 10 ** (VOICED_REL_DB / 20)
    lo, hi = int(sr / F0_MAX), int(sr / F0_MIN)
    window = np.hanning(n)
    spec = np.fft.rfft(frames * window, 2 * n, axis=1)
    ac = np.fft.irfft(np.abs(spec) ** 2, axis=1)[:, : hi + 2]
    ac = ac / np.maximum(ac[:, :1], 1e-12)
    # the window's own autocorrelation tapers long lags, so a low voice's period peak fell under the
    # voicing threshold and the octave above won; dividing it out puts every period's peak near 1
    # (Boersma 1993), and a small cost per octave down picks the period, not its multiples
    ac_w = np.fft.irfft(np.abs(np.fft.rfft(window, 2 * n)) ** 2)[: hi + 2]
    ac = ac / np.maximum(ac_w / ac_w[0], 0.05)
    lags = np.arange(lo, hi + 1)
    lag = lo + np.argmax(ac[:, lo : hi + 1] - OCTAVE_COST * np.log2(lags / lo), axis=1)
    peak = ac[np.arange(len(lag)), lag]
    # parabolic interpolation of the peak for sub-sample lags
    a, b, c = ac[np.arange(len(lag)), lag - 1], peak, ac[np.arange(len(lag)), np.minimum(lag + 1, ac.shape[1] - 1)]
    den = a - 2 * b + c
    frac = np.where(np.abs(den) > 1e-12, 0.5 * (a - c) / np.where(den == 0, 1, den), 0.0)
    f0 = sr / (lag + np.clip(frac, -0.5, 0.5))
    f0 = np.where(loud & (peak > VOICED_CORR), f0, np.nan)
    return (starts + n / 2) / sr, f0


def end_f0_ratio(x: np.ndarray, sr: int, tail_s: float = 0.3) -> float:
    """Median F0 over the last ``tail_s`` of voiced speech over the median F0 of the whole clip.
    A final fall (the end of an utterance) gives clearly under 1; a phrase that goes on, near 1."""
    t, f0 = f0_track(x, sr)
    voiced = ~np.isnan(f0)
    if voiced.sum() < 5:
        return float("nan")
    last = t[voiced].max()
    tail = voiced & (t >= last - tail_s)
    return float(np.median(f0[tail]) / np.median(f0[voiced]))


def longest_inner_silence(x: np.ndarray, sr: int, frame_s: float = 0.020, rel_db: float = -35.0) -> float:
    """The longest run of ``frame_s`` frames more than ``rel_db`` below the clip's loudest frame,
    between its first and last loud frame (s)."""
    n = max(1, int(frame_s * sr))
    m = len(x) // n
    if m == 0:
        return 0.0
    rms = np.sqrt(np.mean(np.asarray(x[: m * n], np.float64).reshape(m, n) ** 2, axis=1))
    loud = np.flatnonzero(rms > rms.max() * 10 ** (rel_db / 20))
    if len(loud) < 2:
        return 0.0
    return float(np.diff(loud).max() - 1) * n / sr
