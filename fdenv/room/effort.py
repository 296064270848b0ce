"""Vocal effort: how the spectrum of a voice changes when its talker raises it in noise.

People speak louder in noise (the Lombard effect), and a raised voice is not a louder copy of a
normal one: its energy moves up, from the low harmonics to 1-4 kHz, where consonants are. The
rooms' SNRs already assume the rise in level (docs/rooms.md: speech at 60 dB(A) in quiet rooms,
rising with the noise); ``vocal_effort_db`` gives the talkers the spectrum that goes with it.

The spectra are the standard speech spectrum levels for stated vocal efforts of ANSI S3.5-1997
(*Methods for calculation of the Speech Intelligibility Index*, Table 3): one-third-octave band
levels from 160 Hz to 8 kHz for normal, raised, loud and shouted speech, whose overall levels are
62.35, 68.34, 74.85 and 82.30 dB SPL at 1 m (59.2, 66.4, 73.8 and 82.2 dB(A)). An effort ``e``
dB(A) above normal is read between the tabled efforts, band by band, at the A-weighted level
``59.2 + e`` dB(A). The filter keeps only the change of shape: normal speech through it has the
A-weighted level it had, so the room's level calibration and SNR are unchanged, and what changes
is where the voice's energy lies.

>>> round(float(effort_gain_db(6.0, [250.0])[0]), 1), round(float(effort_gain_db(6.0, [2500.0])[0]), 1)
(-2.4, 1.8)
"""

from __future__ import annotations

import numpy as np

from .levels import a_weighting_db

# ANSI S3.5-1997 Table 3: band centres (Hz) and the standard speech spectrum level (dB per Hz) of
# each vocal effort; the bands' widths in dB (10 lg Hz) are 15.65 + band index.
BANDS_HZ = np.array([160, 200, 250, 315, 400, 500, 630, 800, 1000, 1250, 1600, 2000, 2500, 3150, 4000,
                     5000, 6300, 8000], dtype=float)
BANDWIDTH_DB = 15.65 + np.arange(18.0)
SPECTRUM_LEVEL_DB = {
    "normal": (32.41, 34.48, 34.75, 33.98, 34.59, 34.27, 32.06, 28.30, 25.01, 23.00, 20.15, 17.32, 13.18,
               11.55, 9.33, 5.31, 2.59, 1.13),
    "raised": (33.81, 33.92, 38.98, 38.57, 39.11, 40.15, 38.78, 36.37, 33.86, 31.89, 28.58, 25.32, 22.35,
               20.15, 16.78, 11.47, 7.67, 5.07),
    "loud": (35.29, 37.76, 41.55, 43.78, 43.30, 44.85, 45.55, 44.05, 42.16, 40.53, 37.70, 34.39, 30.98,
             28.21, 25.41, 18.35, 13.87, 11.39),
    "shout": (30.77, 36.65, 42.50, 46.51, 47.40, 49.24, 51.21, 51.44, 51.31, 49.63, 47.65, 44.32, 40.80,
              38.13, 34.41, 28.24, 23.45, 20.72),
}
OVERALL_DB = {"normal": 62.35, "raised": 68.34, "loud": 74.85, "shout": 82.30}  # the standard's, unweighted
FILTER_S = 0.032  # the filter's length: fine enough for the table's 160-250 Hz bands


def _dba(spectrum_level) -> float:
    """A-weighted overall level of band spectrum levels (dB per Hz)."""
    band_power = np.asarray(spectrum_level) + BANDWIDTH_DB + a_weighting_db(BANDS_HZ)
    return float(10 * np.log10(np.sum(10 ** (band_power / 10))))


# The efforts' A-weighted levels at 1 m (59.2, 66.4, 73.8, 82.2 dB(A)): the rooms' speech levels
# are A-weighted (docs/rooms.md), so an effort is read on this axis.
EFFORT_DBA = {name: _dba(levels) for name, levels in SPECTRUM_LEVEL_DB.items()}
MAX_EFFORT_DB = round(EFFORT_DBA["shout"] - EFFORT_DBA["normal"], 2)  # nothing is tabled above a shout


def band_levels(effort_db: float) -> np.ndarray:
    """The 18 band spectrum levels (dB per Hz) of speech ``effort_db`` dB(A) above normal effort:
    each band read between the tabled efforts at their A-weighted levels."""
    e = float(effort_db)
    if not 0.0 <= e <= MAX_EFFORT_DB:
        raise ValueError(f"vocal_effort_db: {e:g} is out of range; expected [0, {MAX_EFFORT_DB:g}] "
                         "(dB(A) above normal effort: 0 normal, 7.1 raised, 14.6 loud, 23 shouted)")
    levels = np.array(list(EFFORT_DBA.values()))
    table = np.array(list(SPECTRUM_LEVEL_DB.values()))  # (efforts, bands)
    return np.array([np.interp(EFFORT_DBA["normal"] + e, levels, band) for band in table.T])


def effort_gain_db(effort_db: float, freqs) -> np.ndarray:
    """Gain (dB) at ``freqs`` (Hz) that gives normal speech the spectrum of ``effort_db`` above
    normal at the same A-weighted level; straight lines over log frequency between the band
    centres, the end bands' gains held beyond them."""
    normal = np.asarray(SPECTRUM_LEVEL_DB["normal"], dtype=float)
    target = band_levels(effort_db)
    gain = target - normal - (_dba(target) - _dba(normal))
    f = np.clip(np.asarray(freqs, dtype=float), BANDS_HZ[0], BANDS_HZ[-1])
    return np.interp(np.log(f), np.log(BANDS_HZ), gain)


def effort_filter(effort_db: float, sample_rate: int) -> np.ndarray | None:
    """A causal, minimum-phase FIR with the gain of ``effort_gain_db``; None at normal effort
    (nothing to do). Minimum phase, so that a voice's onset stays where it was (no ringing before
    it; nearly all of its energy in the first millisecond). Designed from the gain sampled on a
    fine FFT grid through the real cepstrum (the minimum-phase spectrum of that magnitude), cut to
    ``FILTER_S`` with a half-Hann taper."""
    if float(effort_db) == 0.0:
        band_levels(effort_db)  # still range-checked
        return None
    n_taps = max(2, int(round(FILTER_S * sample_rate)))
    nfft = 1 << int(np.ceil(np.log2(16 * n_taps)))
    freqs = np.fft.rfftfreq(nfft, 1.0 / sample_rate)
    log_amplitude = effort_gain_db(effort_db, np.maximum(freqs, 1.0)) * (np.log(10) / 20)
    cepstrum = np.fft.irfft(log_amplitude, nfft)
    fold = np.zeros(nfft)
    fold[0], fold[nfft // 2] = cepstrum[0], cepstrum[nfft // 2]
    fold[1 : nfft // 2] = 2 * cepstrum[1 : nfft // 2]
    response = np.fft.irfft(np.exp(np.fft.rfft(fold)), nfft)[:n_taps]
    return response * np.hanning(2 * n_taps + 1)[n_taps:-1]


def apply_filter(h: np.ndarray, taps: np.ndarray | None) -> np.ndarray:
    """``h`` filtered by a causal FIR, whole (``len(h) + len(taps) - 1`` samples)."""
    if taps is None:
        return h
    from scipy.signal import fftconvolve

    return fftconvolve(h, taps)


__all__ = ["band_levels", "effort_gain_db", "effort_filter", "apply_filter", "MAX_EFFORT_DB", "EFFORT_DBA"]
