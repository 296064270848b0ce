"""Echo handling: the agent's own output is the reference.

Two parts, both cheap enough to run on every frame:

* ``EchoCanceller``: a partitioned-block frequency-domain NLMS filter (overlap-save, blocks of
  256 samples at 16 kHz, ``tail_ms`` of echo path). It learns the loudspeaker-to-microphone
  response from the agent's own output and subtracts the estimated echo from the microphone.
  Adaptation is frozen while the gate believes a user is talking (double talk), and a divergence
  guard shrinks the filter when the residual grows louder than the microphone itself.
* ``EchoGate``: a double-talk rule on the residual. The echo that could still be in the signal
  is predicted from the energy of the agent's recent output (with a reverberation tail) times an
  echo-return ratio learnt while the agent talks; a window counts as user speech only when its
  energy exceeds that prediction by ``margin_db``. Before any echo has been observed the ratio is
  assumed to be ``init_db`` (conservative: the agent does not barge in on its own first words).
"""

from __future__ import annotations

from collections import deque

import numpy as np

BLOCK = 128


class EchoCanceller:
    def __init__(self, tail_ms: float = 256.0, sample_rate: int = 16000, mu: float = 0.7):
        self.B = BLOCK
        self.P = max(1, int(round(tail_ms * sample_rate / 1000 / BLOCK)))
        self.mu = mu
        self.reset()

    def reset(self) -> None:
        B, P = self.B, self.P
        self.W = np.zeros((P, B + 1), np.complex128)
        self.X = np.zeros((P, B + 1), np.complex128)
        self.x_old = np.zeros(B, np.float64)
        self._zeros = np.zeros(B)

    def process(self, d: np.ndarray, x: np.ndarray, adapt: bool = True) -> np.ndarray:
        """One block: microphone ``d`` and reference ``x`` (``BLOCK`` samples each) -> residual."""
        B, P = self.B, self.P
        x = x.astype(np.float64)
        Xb = np.fft.rfft(np.concatenate([self.x_old, x]))
        self.x_old = x
        self.X[1:] = self.X[:-1]
        self.X[0] = Xb
        ref_energy = float(x @ x)
        if ref_energy == 0.0 and not self.W.any():
            return d.astype(np.float32)  # nothing to cancel (the common case: the agent is silent)
        y = np.fft.irfft((self.W * self.X).sum(axis=0))[B:]
        e = d.astype(np.float64) - y
        d_energy = float(d @ d)
        e_energy = float(e @ e)
        if e_energy > 4.0 * d_energy + 1e-9 and e_energy > 1e-6:
            self.W *= 0.5  # diverged (e.g. the echo path changed): shrink towards zero
        if adapt and ref_energy > 1e-6 * B:
            # NLMS normalisation per bin by the reference energy over the whole filter length
            power = (self.X.real**2 + self.X.imag**2).sum(axis=0)
            power += 0.01 * power.mean() + 1e-6 * B
            E = np.fft.rfft(np.concatenate([self._zeros, e]))
            G = self.mu * np.conj(self.X) * E / power
            g = np.fft.irfft(G, axis=1)
            g[:, B:] = 0.0  # gradient constraint: a linear (not circular) convolution
            self.W += np.fft.rfft(g, axis=1)
        return e.astype(np.float32)


class EchoGate:
    """Per-window double-talk decision (``user_ok``) from residual and reference energies."""

    def __init__(self, margin_db: float = 6.0, init_db: float = 6.0, rt60_s: float = 0.5,
                 window_s: float = 0.032, history_s: float = 3.0, percentile: float = 60.0):
        self.margin = 10 ** (margin_db / 10)
        self.init_ratio = 10 ** (init_db / 10)
        self.decay = 10 ** (-6.0 * window_s / max(rt60_s, 1e-3))  # energy decay per window
        self.history = int(round(history_s / window_s))
        self.percentile = percentile
        self.reset()

    def reset(self) -> None:
        self.env = 0.0
        self._prev_ref = 0.0
        self.ratios: deque = deque(maxlen=self.history)
        self.ratio = self.init_ratio

    def update(self, residual: np.ndarray, ref: np.ndarray) -> tuple[bool, bool]:
        """-> (echo_possible, user_ok) for one window."""
        e_res = float(np.mean(residual.astype(np.float64) ** 2))
        e_ref = float(np.mean(ref.astype(np.float64) ** 2))
        self.env = max(e_ref, self._prev_ref, self.env * self.decay)
        self._prev_ref = e_ref
        if self.env < 1e-9:  # below -90 dBFS: no echo to speak of
            return False, True
        predicted = self.ratio * self.env
        user_ok = e_res > self.margin * predicted
        if e_ref > 1e-6:  # the agent is talking now: learn how much of it comes back
            self.ratios.append(e_res / self.env)
            if len(self.ratios) >= 8:
                self.ratio = float(np.percentile(np.fromiter(self.ratios, float), self.percentile))
        return True, user_ok
