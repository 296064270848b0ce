"""Noise: diffuse white, pink, babble (or speech-shaped) noise and point sources (fan, TV).

Diffuse noise has the coherence of a spherically isotropic field between microphones
(``sinc(2 f d / c)``, Habets & Gannot's mixing of independent channels by the Cholesky factor of the
coherence matrix, per frequency band); microphone 0 gets exactly its own channel. Point sources are
a source signal convolved with the source's impulse responses (in steady state: the source was on
before the episode started).

Spectra (power, ``f`` in Hz): ``white`` flat; ``pink`` ``1/f`` above 20 Hz; ``hvac`` (building
services) the octave-band levels of the Noise Criteria curve whose A-weighted level is the room's
``noise_dba``; ``road`` (a car's road and wind noise) octave-band levels falling 6 dB per octave
from 63 Hz (an assumption, docs/rooms.md); speech-shaped
(the babble fallback, a long-term average speech spectrum approximation)
``1/(1 + (f/500)^2) * f^2/(f^2 + 100^2)`` (flat to 500 Hz, then -6 dB/octave, high-passed at 100 Hz);
``fan`` ``1/(1 + (f/250)^2) * f^2/(f^2 + 40^2)`` (low-pass filtered noise).

Babble: ``babble_talkers`` independent streams per microphone channel, each a random sequence of
the given speech clips (every clip scaled to the same active level) with 50-400 ms gaps, started
at a random offset; the channels are then made diffuse as above. A TV plays one such stream at its
position. Without clips, babble and TV fall back to speech-shaped noise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
import scipy.fft as sfft

from .levels import active_speech_level_db
from .spec import SPEED_OF_SOUND

ClipSource = Sequence[np.ndarray] | Callable[[int, int], Sequence[np.ndarray]] | None

_COHERENCE_BANDS = 512

OCTAVES_HZ = (63.0, 125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)
# Noise Criteria curves (ANSI S12.2; Beranek 1957): octave-band sound pressure levels, dB re 20 uPa,
# 63 Hz - 8 kHz, for NC 15 to NC 70.
NC_CURVES = {
    15: (47, 36, 29, 22, 17, 14, 12, 11), 20: (51, 40, 33, 26, 22, 19, 17, 16),
    25: (54, 44, 37, 31, 27, 24, 22, 21), 30: (57, 48, 41, 35, 31, 29, 28, 27),
    35: (60, 52, 45, 40, 36, 34, 33, 32), 40: (64, 56, 50, 45, 41, 39, 38, 37),
    45: (67, 60, 54, 49, 46, 44, 43, 42), 50: (71, 64, 58, 54, 51, 49, 48, 47),
    55: (74, 67, 62, 58, 56, 54, 53, 52), 60: (77, 71, 67, 63, 61, 59, 58, 57),
    65: (80, 75, 71, 68, 66, 64, 63, 62), 70: (83, 79, 75, 72, 71, 70, 69, 68),
}
ROAD_SLOPE_DB = -6.0  # road noise: octave-band level change per octave (assumption, docs/rooms.md)


def nc_levels(nc: float) -> np.ndarray:
    """Octave-band levels (63 Hz - 8 kHz) of the NC curve ``nc``, linear in dB between the tabled
    curves (15-70)."""
    ks = sorted(NC_CURVES)
    if not ks[0] <= nc <= ks[-1]:
        raise ValueError(f"noise: NC rating {nc:g} is outside the tabled curves NC {ks[0]}-{ks[-1]}")
    lo = max(k for k in ks if k <= nc)
    hi = min(k for k in ks if k >= nc)
    a, b = np.array(NC_CURVES[lo], float), np.array(NC_CURVES[hi], float)
    return a if hi == lo else a + (b - a) * (nc - lo) / (hi - lo)


def band_dba(levels) -> float:
    """A-weighted level of octave-band levels at ``OCTAVES_HZ`` (the band sum a sound level meter's
    octave analysis gives)."""
    from .levels import a_weighting_db

    return float(10 * np.log10(np.sum(10 ** ((np.asarray(levels) + a_weighting_db(OCTAVES_HZ)) / 10))))


@lru_cache(maxsize=64)
def nc_for_dba(dba: float) -> float:
    """The NC rating (interpolated between the tabled curves) whose curve's A-weighted level is
    ``dba`` dB(A)."""
    lo, hi = min(NC_CURVES), max(NC_CURVES)
    span = (band_dba(nc_levels(lo)), band_dba(nc_levels(hi)))
    if not span[0] <= dba <= span[1]:
        raise ValueError(f"noise: noise_dba {dba:g} dB(A) is outside the NC curves' range "
                         f"[{span[0]:.1f}, {span[1]:.1f}] dB(A)")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if band_dba(nc_levels(mid)) < dba else (lo, mid)
    return (lo + hi) / 2


def intended_band_levels(kind: str, noise_dba: float | None = None) -> np.ndarray:
    """Octave-band levels (dB, at ``OCTAVES_HZ``; only their differences matter) that the noise
    ``kind`` is built to have: ``hvac`` and ``road``."""
    if kind == "hvac":
        return nc_levels(nc_for_dba(float(noise_dba)))
    if kind == "road":
        return ROAD_SLOPE_DB * np.arange(len(OCTAVES_HZ), dtype=np.float64)
    raise ValueError(f"noise: {kind!r} has no octave-band definition")


def band_edges(fc: float) -> tuple[float, float]:
    return fc / np.sqrt(2.0), fc * np.sqrt(2.0)


@lru_cache(maxsize=64)
def _band_density(levels: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Log-frequency nodes and log10 power densities of a smooth spectrum whose octave-band powers
    are ``levels``: straight lines in log power over log frequency between the band centres
    (flat below 63 Hz down to 20 Hz and above 8 kHz), the centre values corrected until every
    band's integral meets its level."""
    target = 10 ** (np.asarray(levels) / 10)
    fc = np.asarray(OCTAVES_HZ)
    grid = np.geomspace(20.0, 11314.0, 4000)
    node_x = np.log10(fc)
    node_y = np.log10(target / (fc * (np.sqrt(2) - 1 / np.sqrt(2))))  # band power / bandwidth
    for _ in range(50):
        dens = 10 ** np.interp(np.log10(grid), node_x, node_y)
        got = np.array([np.trapezoid(dens[(grid >= lo) & (grid <= hi)], grid[(grid >= lo) & (grid <= hi)])
                        for lo, hi in map(band_edges, fc)])
        err = np.log10(target / got)
        node_y = node_y + err
        if np.max(np.abs(err)) < 1e-5:
            break
    return node_x, node_y


def band_shape(levels, freqs: np.ndarray) -> np.ndarray:
    """Power spectral density at ``freqs`` Hz with the octave-band ``levels`` (see ``_band_density``);
    zero below 20 Hz."""
    node_x, node_y = _band_density(tuple(float(v) for v in levels))
    f = np.asarray(freqs, dtype=np.float64)
    s = 10 ** np.interp(np.log10(np.maximum(f, 20.0)), node_x, node_y)
    s[f < 20.0] = 0.0
    return s


def power_shape(kind: str, freqs: np.ndarray, noise_dba: float | None = None) -> np.ndarray:
    """Power spectral shape (unnormalised) of the noise ``kind`` at ``freqs`` Hz (``noise_dba``:
    the room's noise level, which picks ``hvac``'s NC curve)."""
    f = np.asarray(freqs, dtype=np.float64)
    if kind in ("hvac", "road"):
        s = band_shape(intended_band_levels(kind, noise_dba), f)
    elif kind == "white":
        s = np.ones_like(f)
    elif kind == "pink":
        s = 1.0 / np.maximum(f, 20.0)
    elif kind in ("speech", "babble", "tv"):
        s = 1.0 / (1.0 + (f / 500.0) ** 2) * f**2 / (f**2 + 100.0**2)
    elif kind == "fan":
        s = 1.0 / (1.0 + (f / 250.0) ** 2) * f**2 / (f**2 + 40.0**2)
    else:  # pragma: no cover - validated upstream
        raise ValueError(f"unknown noise kind {kind!r}")
    s = s.copy()
    s[f == 0] = 0.0
    return s


@lru_cache(maxsize=8)
def _amplitude(kind: str, nfft: int, sr: int, noise_dba: float | None) -> np.ndarray:
    """sqrt of ``power_shape`` on the ``nfft``-point real FFT's bins, float32 (read-only: shared)."""
    amp = np.sqrt(power_shape(kind, np.fft.rfftfreq(nfft, 1.0 / sr), noise_dba)).astype(np.float32)
    amp.setflags(write=False)
    return amp


def _shaped_spectra(kind: str, n_channels: int, nfft: int, sr: int, rng: np.random.Generator,
                    noise_dba: float | None = None) -> np.ndarray:
    """Spectra of ``n_channels`` independent Gaussian noises with the given power shape."""
    amp = _amplitude(kind, nfft, sr, noise_dba)
    F = len(amp)
    z = np.empty((n_channels, F), dtype=np.complex64)
    z.real = rng.standard_normal((n_channels, F), dtype=np.float32)
    z.imag = rng.standard_normal((n_channels, F), dtype=np.float32)
    z *= amp[None, :]
    return z


def resolve_clips(clips: ClipSource, n: int, seed: int) -> list[np.ndarray]:
    """Clips from a sequence or from a callable ``clips(n, seed)``; empty list for ``None``."""
    if clips is None:
        return []
    if callable(clips):
        clips = clips(n, seed)
    out = []
    for i, c in enumerate(clips):
        c = np.asarray(c, dtype=np.float32)
        if c.ndim != 1 or c.size == 0 or not np.all(np.isfinite(c)):
            raise ValueError(f"noise: speech clip {i}: expected a non-empty finite mono array, got shape {c.shape}")
        out.append(c)
    return out


def unit_level(clips: list[np.ndarray], sr: int) -> list[np.ndarray]:
    out = []
    for c in clips:
        lvl = active_speech_level_db(c, sr)
        if np.isfinite(lvl):
            out.append((c * np.float32(10 ** (-lvl / 20))).astype(np.float32))
    return out


def speech_stream(clips: list[np.ndarray], n: int, sr: int, rng: np.random.Generator) -> np.ndarray:
    """One talker: random clips with 50-400 ms gaps, starting at a random offset, ``n`` samples."""
    out = np.zeros(n, dtype=np.float32)
    first = clips[int(rng.integers(len(clips)))]
    pos = -int(rng.integers(0, len(first)))
    c = first
    while pos < n:
        a, b = max(pos, 0), min(pos + len(c), n)
        if b > a:
            out[a:b] += c[a - pos:b - pos]
        pos += len(c) + int(rng.uniform(0.05, 0.4) * sr)
        c = clips[int(rng.integers(len(clips)))]
    return out


def make_diffuse(spectra: np.ndarray, mic_offsets: np.ndarray, sr: int, nfft: int) -> np.ndarray:
    """Impose the spherically isotropic coherence on independent channel spectra, in place."""
    M = spectra.shape[0]
    if M == 1:
        return spectra
    F = spectra.shape[1]
    d = np.linalg.norm(mic_offsets[:, :, None] - mic_offsets[:, None, :], axis=0)  # (M, M)
    nb = min(_COHERENCE_BANDS, F)
    edges = np.linspace(0, F, nb + 1).astype(int)
    centres = (edges[:-1] + edges[1:] - 1) / 2 * sr / nfft
    gamma = np.sinc(2 * centres[:, None, None] * d[None] / SPEED_OF_SOUND)
    chol = np.linalg.cholesky(gamma + 1e-6 * np.eye(M)[None])
    chol = (chol / np.sqrt(1 + 1e-6)).astype(spectra.real.dtype)
    for b in range(nb):
        lo, hi = edges[b], edges[b + 1]
        if hi > lo:
            spectra[:, lo:hi] = chol[b] @ spectra[:, lo:hi]
    return spectra


def diffuse_noise(kind: str, n: int, sr: int, mic_offsets: np.ndarray, rng: np.random.Generator,
                  clips: list[np.ndarray] | None = None, talkers: int = 6,
                  noise_dba: float | None = None) -> np.ndarray:
    """Diffuse noise ``(n_mics, n)`` float32 with an RMS of 1 at microphone 0."""
    M = mic_offsets.shape[1]
    nfft = sfft.next_fast_len(max(n, 2), real=True)
    if kind == "babble" and clips:
        chans = np.zeros((M, nfft), dtype=np.float32)
        for m in range(M):
            for _ in range(talkers):
                chans[m, :n] += speech_stream(clips, n, sr, rng)
        spectra = sfft.rfft(chans, axis=-1)
    else:
        spectra = _shaped_spectra("speech" if kind == "babble" else kind, M, nfft, sr, rng, noise_dba)
    make_diffuse(spectra, mic_offsets, sr, nfft)
    x = sfft.irfft(spectra, n=nfft, axis=-1)[:, :n]
    r = float(np.sqrt(np.mean(np.square(x[0], dtype=np.float64))))
    return x * np.float32(1 / r) if r > 0 else x


def point_source_signal(kind: str, n: int, sr: int, rng: np.random.Generator,
                        clips: list[np.ndarray] | None = None) -> np.ndarray:
    """Dry signal of a point source, ``n`` samples (float64)."""
    if kind == "tv" and clips:
        return speech_stream(clips, n, sr, rng).astype(np.float64)
    nfft = sfft.next_fast_len(max(n, 2), real=True)
    spec = _shaped_spectra("speech" if kind == "tv" else kind, 1, nfft, sr, rng)
    return sfft.irfft(spec, n=nfft, axis=-1)[0, :n]


def point_source_noise(kind: str, ir: np.ndarray, n: int, sr: int, rng: np.random.Generator,
                       clips: list[np.ndarray] | None = None) -> np.ndarray:
    """A point source through its impulse responses ``ir`` ``(n_mics, L)``, in steady state:
    ``(n_mics, n)``."""
    L = ir.shape[1]
    from scipy.signal import oaconvolve

    sig = point_source_signal(kind, n + L - 1, sr, rng, clips)
    return oaconvolve(sig[None, :], ir.astype(np.float64), mode="valid", axes=-1)


__all__ = [
    "power_shape", "unit_level", "NC_CURVES", "OCTAVES_HZ", "nc_levels", "nc_for_dba", "band_dba",
    "intended_band_levels", "band_shape", "band_edges", "diffuse_noise", "point_source_noise", "speech_stream", "resolve_clips",
    "make_diffuse",
]


# Microphone self-noise, below the active speech level at microphone 0: a MEMS microphone with a
# 65 dB(A) SNR (self-noise 94 - 65 = 29 dB(A) SPL) hearing normal-effort speech at 1 m (about
# 62 dB SPL, ANSI S3.5-1997) gives 33 dB (both A-weighted). Every preset has it unless ``noise: none``.
SELF_NOISE_DB = 33.0


def white_dba(sample_rate: int) -> float:
    """A-weighted level of white noise of RMS 1 sampled at ``sample_rate`` (dB re RMS 1): the mean
    of the A-weighting's power gain from 0 Hz to Nyquist."""
    from .levels import a_weighting_db

    f = np.linspace(0.0, sample_rate / 2, 20001)
    return float(10 * np.log10(np.mean(10 ** (a_weighting_db(f) / 10))))


def self_noise(n_mics: int, n: int, level_db: float, seed: int, sample_rate: int | None = None) -> np.ndarray:
    """White self-noise, independent at each microphone, ``(n_mics, n)`` float32 at a long-term
    level of ``level_db`` (dB re RMS 1; A-weighted when ``sample_rate`` is given, as microphone
    self-noise is rated)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, 0x73656C66]))
    if sample_rate is not None:
        level_db -= white_dba(sample_rate)
    return (rng.standard_normal((n_mics, n)) * 10 ** (level_db / 20)).astype(np.float32)
