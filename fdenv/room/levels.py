"""Levels and room measures used both to generate audio and to test it.

Levels are in dB relative to an RMS of 1.0 ("dBFS" here: a full-scale sine is -3 dB).
"""

from __future__ import annotations

import functools
import math

import numpy as np

ACTIVE_MARGIN_DB = 15.9  # ITU-T P.56's margin between the active level and its threshold
ACTIVE_FRAME_S = 0.020
SILENCE_DBFS = -100.0


def rms_db(x: np.ndarray) -> float:
    """Long-term level of ``x`` (all samples) in dB re RMS 1; ``-inf`` for silence."""
    x = np.asarray(x, dtype=np.float64)
    p = float(np.mean(x * x)) if x.size else 0.0
    return 10.0 * np.log10(p) if p > 0 else float("-inf")


def active_speech_level_db(x: np.ndarray, sample_rate: int, *, margin_db: float = ACTIVE_MARGIN_DB,
                           frame_s: float = ACTIVE_FRAME_S) -> float:
    """Active speech level of a mono signal (a P.56-lite), in dB re RMS 1.

    Definition: cut ``x`` into non-overlapping 20 ms frames and take each frame's mean power.
    Frames below -100 dB are silence and never count. The active level ``L`` is the mean power of
    the frames whose level is above ``L - 15.9 dB`` (P.56's margin): the fixed point of that rule,
    reached from the mean of all non-silent frames (the iteration only ever raises ``L``, so it
    converges, in a few steps). Returns ``-inf`` when every frame is silent.

    SNR in fdenv (SPEC 4) is taken on A-weighted signals, as the sources of the presets' SNRs
    measure it (dBA): ``active_speech_level_dba`` of the speech at microphone 0 minus ``rms_dba``
    of the noise at microphone 0.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"active_speech_level_db: expected a mono signal (n,), got shape {x.shape}")
    n = max(1, int(round(frame_s * sample_rate)))
    k = len(x) // n
    if k == 0:
        p = np.array([np.mean(x * x)]) if len(x) else np.zeros(0)
    else:
        frames = x[: k * n].reshape(k, n)
        p = np.einsum("ij,ij->i", frames, frames) / n
    p = p[p > 10 ** (SILENCE_DBFS / 10)]
    if p.size == 0:
        return float("-inf")
    level = 10 * np.log10(np.mean(p))
    db = 10 * np.log10(p)
    for _ in range(100):
        new = 10 * np.log10(np.mean(p[db > level - margin_db]))
        if new <= level + 1e-9:
            break
        level = new
    return float(level)


# IEC 61672-1 A-weighting: poles at 20.6, 107.7, 737.9 and 12194 Hz, normalised to 0 dB at 1 kHz.
_A_POLES_HZ = (20.598997, 107.65265, 737.86223, 12194.217)
_A_1KHZ_DB = 1.9997  # -20 lg of the unnormalised response at 1 kHz (the standard's A_1000)


def a_weighting_db(freqs) -> np.ndarray:
    """IEC 61672-1 A-weighting in dB at ``freqs`` Hz (``-inf`` at 0 Hz)."""
    f2 = np.square(np.asarray(freqs, dtype=np.float64))
    f1, f2p, f3, f4 = (p * p for p in _A_POLES_HZ)
    with np.errstate(divide="ignore"):
        ra = f4 * f2 * f2 / ((f2 + f1) * np.sqrt((f2 + f2p) * (f2 + f3)) * (f2 + f4))
        return 20 * np.log10(ra) + _A_1KHZ_DB


A_PAD_S = 0.25  # zero padding of the FFT filter: the weighting's impulse response has died away by then


@functools.lru_cache(maxsize=16)
def _a_gain(nfft: int, sample_rate: int) -> np.ndarray:
    return 10 ** (a_weighting_db(np.fft.rfftfreq(nfft, 1.0 / sample_rate)) / 20)


def a_weight(x: np.ndarray, sample_rate: int) -> np.ndarray:
    """``x`` (last axis: time) through the A-weighting magnitude response, zero phase (an FFT
    filter over the whole signal: a level meter's weighting without its phase, which levels ignore),
    padded by ``A_PAD_S`` so that the weighting's short ringing does not wrap around."""
    import scipy.fft as sfft

    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    if n == 0:
        return x.copy()
    nfft = sfft.next_fast_len(n + round(A_PAD_S * sample_rate), real=True)
    return sfft.irfft(sfft.rfft(x, n=nfft, axis=-1) * _a_gain(nfft, sample_rate), n=nfft, axis=-1)[..., :n]


def rms_dba(x: np.ndarray, sample_rate: int) -> float:
    """Long-term A-weighted level of ``x`` (1-D) in dB re RMS 1: the power of the weighted
    spectrum (Parseval), without going back to samples; the same as ``rms_db(a_weight(x))`` up to
    the weighting's ringing past the ends (a few ms of a signal seconds long)."""
    import scipy.fft as sfft

    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if n == 0:
        return float("-inf")
    nfft = sfft.next_fast_len(n, real=True)
    spec = np.abs(sfft.rfft(x, n=nfft)) ** 2 * _a_gain(nfft, sample_rate) ** 2
    spec[1 : (nfft + 1) // 2] *= 2  # the bins that stand for two (positive and negative frequency)
    p = float(spec.sum()) / (nfft * n)
    return 10.0 * np.log10(p) if p > 0 else float("-inf")


def active_speech_level_dba(x: np.ndarray, sample_rate: int) -> float:
    """``active_speech_level_db`` of the A-weighted signal: the speech level of fdenv's SNR."""
    return active_speech_level_db(a_weight(x, sample_rate), sample_rate)


def schroeder_edc_db(h: np.ndarray) -> np.ndarray:
    """Energy decay curve (Schroeder backward integration) of an impulse response, in dB re 0."""
    e = np.cumsum(np.asarray(h, dtype=np.float64)[::-1] ** 2)[::-1]
    e = e / e[0]
    with np.errstate(divide="ignore"):
        return 10 * np.log10(np.maximum(e, 1e-300))


def measure_rt60(h: np.ndarray, sample_rate: int, *, decay_db: float = 30.0, start_db: float = 5.0) -> float:
    """RT60 of an impulse response: Schroeder backward integration, least-squares line through the
    decay curve from -5 dB to -(5 + decay_db) dB (T30 by default), extrapolated to 60 dB.

    Returns ``nan`` when the curve never reaches the end of the fitting range.
    """
    edc = schroeder_edc_db(h)
    end_db = start_db + decay_db
    i0 = int(np.argmax(edc <= -start_db))
    if edc[-1] > -end_db:
        return float("nan")
    i1 = int(np.argmax(edc <= -end_db))
    if i1 - i0 < 3:
        return float("nan")
    t = np.arange(i0, i1) / sample_rate
    slope = np.polyfit(t, edc[i0:i1], 1)[0]
    return float(-60.0 / slope) if slope < 0 else float("nan")


def band_rt60(h: np.ndarray, sample_rate: int, centre_hz: float, *, decay_db: float = 30.0) -> float:
    """``measure_rt60`` in one octave band: a 4th-order Butterworth band pass from centre / sqrt 2
    to centre * sqrt 2, run over the time-reversed response so that the filter's own ringing does
    not lengthen short decays."""
    from scipy.signal import butter, sosfilt

    hi = min(centre_hz * math.sqrt(2), 0.49 * sample_rate)
    sos = butter(4, [centre_hz / math.sqrt(2), hi], btype="band", fs=sample_rate, output="sos")
    y = sosfilt(sos, np.asarray(h, dtype=np.float64)[::-1])[::-1]
    return measure_rt60(y, sample_rate, decay_db=decay_db)


def mid_rt60(h: np.ndarray, sample_rate: int) -> float:
    """Mid-frequency reverberation time: the mean of the 500 Hz and 1 kHz octave bands' T30
    (how a room's single RT60 is quoted when decay depends on frequency, ISO 3382-2's T_mid)."""
    return float(np.mean([band_rt60(h, sample_rate, fc) for fc in (500.0, 1000.0)]))


__all__ = ["rms_db", "active_speech_level_db", "a_weighting_db", "a_weight", "rms_dba", "active_speech_level_dba", "measure_rt60", "band_rt60", "mid_rt60", "schroeder_edc_db"]
