"""Noise: diffuse white, pink, babble (or speech-shaped) noise and point sources (fan, TV).

Diffuse noise has the coherence of a spherically isotropic field between microphones
(``sinc(2 f d / c)``, Habets & Gannot's mixing of independent channels by the Cholesky factor of the
coherence matrix, per frequency band); microphone 0 gets exactly its own channel. Point sources are
a source signal convolved with the source's impulse responses (in steady state: the source was on
before the episode started).

Spectra (power, ``f`` in Hz): ``white`` flat; ``pink`` ``1/f`` above 20 Hz; speech-shaped
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

import numpy as np
import scipy.fft as sfft

from .levels import active_speech_level_db
from .spec import SPEED_OF_SOUND

ClipSource = Sequence[np.ndarray] | Callable[[int, int], Sequence[np.ndarray]] | None

_COHERENCE_BANDS = 512


def power_shape(kind: str, freqs: np.ndarray) -> np.ndarray:
    """Power spectral shape (unnormalised) of the noise ``kind`` at ``freqs`` Hz."""
    f = np.asarray(freqs, dtype=np.float64)
    if kind == "white":
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


def _shaped_spectra(kind: str, n_channels: int, nfft: int, sr: int, rng: np.random.Generator) -> np.ndarray:
    """Spectra of ``n_channels`` independent Gaussian noises with the given power shape."""
    freqs = np.fft.rfftfreq(nfft, 1.0 / sr)
    amp = np.sqrt(power_shape(kind, freqs)).astype(np.float32)
    F = len(freqs)
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
                  clips: list[np.ndarray] | None = None, talkers: int = 6) -> np.ndarray:
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
        spectra = _shaped_spectra("speech" if kind == "babble" else kind, M, nfft, sr, rng)
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
    "power_shape", "unit_level", "diffuse_noise", "point_source_noise", "speech_stream", "resolve_clips",
    "make_diffuse",
]


# Microphone self-noise, below the active speech level at microphone 0: a MEMS microphone with a
# 65 dB(A) SNR (self-noise 94 - 65 = 29 dB(A) SPL) hearing normal-effort speech at 1 m (about
# 62 dB SPL, ANSI S3.5-1997) gives 33 dB. Every preset has it unless ``noise: none``.
SELF_NOISE_DB = 33.0


def self_noise(n_mics: int, n: int, level_db: float, seed: int) -> np.ndarray:
    """White self-noise, independent at each microphone, ``(n_mics, n)`` float32 at a long-term
    level of ``level_db`` (dB re RMS 1)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, 0x73656C66]))
    return (rng.standard_normal((n_mics, n)) * 10 ** (level_db / 20)).astype(np.float32)
