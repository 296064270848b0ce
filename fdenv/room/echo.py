"""Streaming assistant echo: uniformly partitioned FFT convolution (overlap-save, block = frame).

The loudspeaker's impulse responses into every microphone are cut into ``P`` partitions of ``N``
samples (``N`` = frame size); their ``2N``-point spectra are computed once. Each ``push`` does one
real FFT of the last two input frames, ``P`` complex multiply-adds per microphone (one compiled
pass, ``_kernels``) and one inverse FFT for all microphones together. The output equals the full
linear convolution of the action stream with the impulse responses, cut into frames.
"""

from __future__ import annotations

import numpy as np
import scipy.fft as sfft

try:  # scipy.fft's own pocketfft, called without its Python argument handling (a third of the
    # cost of a 2560-point transform); the same transforms, so the same bits as scipy.fft.
    from scipy.fft._pocketfft import pypocketfft as _pocketfft

    _pocketfft.r2c(np.zeros(4, np.float32), (0,), True, 0, None, 1)
except Exception:  # pragma: no cover - another scipy layout: the public functions
    _pocketfft = None


class EchoPath:
    """Echo of the assistant's actions at the microphones, one frame at a time.

    ``push(a_k)`` takes the action frame that plays during frame ``k+1`` (SPEC 1) and returns the
    echo at the microphones during that same frame, ``(n_mics, N)`` float32, tails of earlier
    frames included. A click at sample ``j`` of the pushed frame appears at sample
    ``j + delay_s(ASSISTANT) * sample_rate`` of the returned stream (geometric delay plus the
    simulator's filter delay), never earlier. ``gain`` scales the impulse responses; ``gain == 0``
    returns zeros without computing anything.
    """

    def __init__(self, ir: np.ndarray, frame_samples: int, gain: float = 1.0, *, spectra: np.ndarray | None = None):
        ir = np.asarray(ir, dtype=np.float32)
        if ir.ndim != 2 or ir.shape[1] < 1:
            raise ValueError(f"EchoPath: impulse responses must be (n_mics, L), got shape {ir.shape}")
        if int(frame_samples) <= 0:
            raise ValueError(f"EchoPath: frame_samples must be positive, got {frame_samples}")
        self.n_mics, self.ir_length = ir.shape
        self.frame_samples = N = int(frame_samples)
        self.gain = float(gain)
        self._zeros = np.zeros((self.n_mics, N), dtype=np.float32)
        self._direct = None
        if self.gain == 0.0:
            self.partitions = 0
            return
        self._multiply_add, self._add_scaled = _compiled_loops()
        if self.ir_length == 1:  # a plain gain (anechoic): exact, no FFT
            self._direct = (ir[:, 0] * np.float32(self.gain)).astype(np.float32)[:, None]
            self.partitions = 1
            return
        P = -(-self.ir_length // N)
        self.partitions = P
        if spectra is None:
            spectra = partition_spectra(ir, N, self.gain)
        # The inverse transform's 1 / (2N) is folded into the spectra here, once: the inverse runs
        # unscaled. The delay line is a ring of P spectra, row ``w`` the newest (see _kernels).
        self._H = np.ascontiguousarray(np.asarray(spectra, dtype=np.complex64) * np.float32(1.0 / (2 * N)))
        self._X = np.zeros((P, N + 1), dtype=np.complex64)
        self._acc = np.empty((self.n_mics, N + 1), dtype=np.complex64)
        self._w = 0
        self._buf = np.zeros(2 * N, dtype=np.float32)
        self._out = np.empty((self.n_mics, 2 * N), dtype=np.float32)
        self._silent_run = P + 1  # consecutive all-zero frames pushed; the delay line is all zero
        self._y = self._out[:, N:]  # overlap-save: the second half of each inverse transform

    def __getstate__(self):  # the view pickles as a copy, the compiled functions not at all
        return {k: v for k, v in self.__dict__.items() if k not in ("_y", "_multiply_add", "_add_scaled")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.gain != 0.0:
            self._multiply_add, self._add_scaled = _compiled_loops()
        if "_out" in state:
            self._y = self._out[:, self.frame_samples:]

    def reset(self) -> None:
        """Forget all past frames (a new episode)."""
        if self.gain == 0.0 or self._direct is not None:
            return
        self._X[:] = 0
        self._buf[:] = 0
        self._w = 0
        self._silent_run = self.partitions + 1

    def push(self, frame: np.ndarray) -> np.ndarray:
        """Add one action frame ``(N,)``; return the echo during the frame it plays, ``(n_mics, N)``."""
        y = self._next(frame)
        return self._zeros.copy() if y is None else np.ascontiguousarray(y, dtype=np.float32)

    def added(self, frame: np.ndarray, mic: np.ndarray, nonzero: bool = False,
              gain: float = 1.0) -> tuple[np.ndarray, float] | None:
        """``(mic + push(frame)) * gain`` as a new ``(n_mics, N)`` float32 array and its largest
        magnitude (NaN if a sample is NaN), or None while the echo is silent (``mic`` is then what
        the microphones hear): the env's step in one pass, without a pass over zeros. ``nonzero``:
        the caller knows that the frame has a non-zero sample (saves looking)."""
        y = self._next(frame, nonzero)
        if y is None:
            return None
        out = np.empty((self.n_mics, self.frame_samples), dtype=np.float32)
        return out, float(self._add_scaled(mic, y, np.float32(gain), out))

    def _next(self, frame: np.ndarray, nonzero: bool = False) -> np.ndarray | None:
        """The echo during the frame ``frame`` plays (a view), or None when it is all zero."""
        frame = np.asarray(frame)
        if frame.shape != (self.frame_samples,):
            raise ValueError(f"EchoPath.push: expected a frame of shape ({self.frame_samples},), got {frame.shape}")
        if self.gain == 0.0:
            return None
        if self._direct is not None:
            return self._direct * frame.astype(np.float32)[None, :]
        N, P = self.frame_samples, self.partitions
        # A silent assistant costs nothing: once P + 1 zero frames went in, every spectrum in the
        # delay line is zero and so is the output (exact, not an approximation).
        if nonzero or frame.any():
            self._silent_run = 0
        else:
            self._silent_run += 1
            if self._silent_run > P + 1:
                return None
        buf = self._buf
        buf[:N] = buf[N:]
        buf[N:] = frame
        w = self._w - 1 if self._w else P - 1
        self._w = w
        row = self._X[w]
        if _pocketfft is not None:
            _pocketfft.r2c(buf, (0,), True, 0, row, 1)
        else:
            row[:] = sfft.rfft(buf)
        acc = self._acc
        self._multiply_add(self._H, self._X, w, acc)
        if _pocketfft is not None:  # inorm=0: unscaled (the spectra carry the 1 / (2N))
            _pocketfft.c2r(acc, (1,), 2 * N, False, 0, self._out, 1)
            return self._y
        return sfft.irfft(acc, n=2 * N, axis=-1, norm="forward")[:, N:]


def _compiled_loops():
    """The compiled loops (numba, imported on first use: only rooms with an echo need them)."""
    from . import _kernels

    return _kernels.multiply_add, _kernels.add_scaled


def partition_spectra(ir: np.ndarray, frame_samples: int, gain: float = 1.0) -> np.ndarray:
    """``2N``-point spectra of the ``N``-sample partitions of ``ir`` ``(n_mics, L)``, times ``gain``:
    ``(P, n_mics, N + 1)`` complex64."""
    ir = np.asarray(ir, dtype=np.float32)
    M, L = ir.shape
    N = int(frame_samples)
    P = -(-L // N)
    padded = np.zeros((M, P * N), dtype=np.float32)
    padded[:, :L] = ir * np.float32(gain)
    parts = padded.reshape(M, P, N).transpose(1, 0, 2)
    return np.ascontiguousarray(sfft.rfft(parts, n=2 * N, axis=-1).astype(np.complex64))


__all__ = ["EchoPath", "partition_spectra"]
