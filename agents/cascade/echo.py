"""Echo handling: the agent's own output is the reference.

Two parts, both cheap enough to run on every frame:

* ``EchoCanceller``: a partitioned-block frequency-domain NLMS filter (overlap-save, blocks of
  128 samples at 16 kHz, ``tail_ms`` of echo path) in a two-path (background / foreground)
  structure. It learns the loudspeaker-to-microphone response from the agent's own output and
  subtracts the estimated echo from the microphone.
* ``EchoGate``: a double-talk rule on the residual. What could be in the residual without a user
  is predicted per frequency band: the agent's echo, from the energy of its recent output (held
  for the canceller's filter length, then decaying like reverberation) times an echo-return ratio
  learnt while the agent talks, plus the background noise, from the windows heard while it was
  silent. A window counts as user speech only when at least ``MIN_BANDS`` bands exceed that
  prediction by ``margin_db``. Before any echo has been observed the ratio is assumed to be
  ``init_db`` (conservative: the agent does not barge in on its own first words).

Why the noise is its own term, per band: the echo-return ratio used to be learnt from the whole
residual and the decision compared total energies. In road noise with no echo at all (the car
cabin) the ratio then learnt the noise, scaled by the agent's own level, and a user's speech over
the answer had to be 6 dB louder than that in total energy, which the low-frequency road noise
never let it be: on 10 interruption test scenes the agent never stopped (8 in 1,050 of the
windows of user speech over its answer passed). The user's speech stands out in the bands above
the road noise, so the rule now asks for a few bands, each above its own echo and noise.

Measured (``python benchmarks/bench_barge_in.py``, first 30 interruption test scenes per room,
the README's "Tests and benchmarks"): barge-ins 26 in the car cabin and 29 in the kitchen, where
the earlier rule made 0 and 5; no barge-in on its own echo in turn-taking scenes with echo gain 1
in the car and the kitchen. The tests: synthetic decaying impulse responses with echo gains 0.5
to 2 and rooms with echo, no self-interruption; in brown noise as loud as the user, the user's
voice over the answer is heard and the noise alone never.

Limitations: the echo-return ratio is learnt from windows that show the agent's echo alone (the
canceller removes most of the microphone's energy, or the residual is quiet); when people talk
over the agent from its very first words in a room with echo, no such window comes, the
conservative prior stays, and a barge-in is missed. Where the echo is loud and the noise too (the
car cabin with ``echo_gain`` 1), most of a user's speech hides under them. In the car cabin a
barge-in takes longer than in a quiet room (the user's voice clears the road noise in few
bands), and in a quiet room the gate hears a backchannel over the answer a little more often
than the totals did (the README's overlap set).
"""

from __future__ import annotations

from collections import deque

import numpy as np

BLOCK = 128
MIN_BANDS = 3  # bands above echo + noise that make a window the user's (2 let the echo's flukes through)
NOISE_ALPHA = 0.05  # the noise spectrum's running mean: about 0.6 s of noise-only windows


class EchoCanceller:
    """Partitioned-block frequency-domain NLMS echo canceller with a two-path structure.

    A background filter adapts on every block where the agent makes sound; the foreground filter,
    whose residual is the output, takes the background's weights when the background has been
    clearly better over the last blocks, and gives them back when the background has diverged
    (for example after adapting through a user's speech). So no double-talk detector has to
    freeze adaptation: a detector that mistakes echo for a user would stop the learning that would
    have removed that echo (the trap of a frozen canceller).
    """

    def __init__(self, tail_ms: float = 256.0, sample_rate: int = 16000, mu: float = 0.7):
        self.B = BLOCK
        self.P = max(1, int(round(tail_ms * sample_rate / 1000 / BLOCK)))
        self.mu = mu
        self.reset()

    def reset(self) -> None:
        B, P = self.B, self.P
        self.W = np.zeros((P, B + 1), np.complex128)  # background (adapting)
        self.Wf = np.zeros((P, B + 1), np.complex128)  # foreground (output)
        self.X = np.zeros((P, B + 1), np.complex128)
        self.x_old = np.zeros(B, np.float64)
        self._zeros = np.zeros(B)
        self._eb = 0.0  # smoothed residual energies of the background and foreground filters
        self._ef = 0.0
        self._ed = 0.0
        self.copies = 0
        self.resets = 0

    def process(self, d: np.ndarray, x: np.ndarray, adapt: bool = True) -> np.ndarray:
        """One block: microphone ``d`` and reference ``x`` (``BLOCK`` samples each) -> residual."""
        B = self.B
        x = x.astype(np.float64)
        Xb = np.fft.rfft(np.concatenate([self.x_old, x]))
        self.x_old = x
        self.X[1:] = self.X[:-1]
        self.X[0] = Xb
        ref_energy = float(x @ x)
        if ref_energy == 0.0 and not self.X.any():
            return d.astype(np.float32)  # nothing to cancel (the common case: the agent is silent)
        d = d.astype(np.float64)
        Y = np.fft.irfft(np.stack([(self.W * self.X).sum(axis=0), (self.Wf * self.X).sum(axis=0)]), axis=1)[:, B:]
        e = d - Y[0]
        ef = d - Y[1]
        self._eb = 0.8 * self._eb + 0.2 * float(e @ e)
        self._ef = 0.8 * self._ef + 0.2 * float(ef @ ef)
        self._ed = 0.8 * self._ed + 0.2 * float(d @ d)
        if self._eb < 0.7 * min(self._ef, self._ed) and ref_energy > 1e-6 * B:
            self.Wf = self.W.copy()  # the background cancels clearly better: take it
            self._ef = self._eb
            ef = e
            self.copies += 1
        elif self._eb > 4.0 * self._ef + 1e-9:
            self.W = self.Wf.copy()  # the background diverged: start again from the foreground
            self._eb = self._ef
        if self._ef > 2.0 * self._ed + 1e-9 and ref_energy > 1e-6 * B:
            # Never make the microphone worse: a foreground that adds more than it removes
            # (it learnt from a user's voice, or there is no echo at all) is dropped.
            self.Wf[:] = 0.0
            self._ef = self._ed
            ef = d
            self.resets += 1
        if adapt and ref_energy > 1e-6 * B:
            # NLMS normalisation per bin by the reference energy over the whole filter length
            power = (self.X.real**2 + self.X.imag**2).sum(axis=0)
            power += 0.01 * power.mean() + 1e-6 * B
            E = np.fft.rfft(np.concatenate([self._zeros, e]))
            G = self.mu * np.conj(self.X) * E / power
            g = np.fft.irfft(G, axis=1)
            g[:, B:] = 0.0  # gradient constraint: a linear (not circular) convolution
            self.W += np.fft.rfft(g, axis=1)
        return ef.astype(np.float32)


class EchoGate:
    """Per-window double-talk decision (``user_ok``) from residual and reference spectra.

    In each of ``n_bands`` frequency bands the residual expected without a user is the band's
    echo (its echo-return ratio times the band's reference energy envelope: the agent's recent
    output, decaying like a ``rt60_s`` reverberation tail) plus its background noise (a running
    mean over windows heard while the agent was silent, within 3 dB of the quietest). Ratios are
    learnt per band while the agent talks, from the residual above the noise (the ``percentile``
    over the last ``history_s``): a band whose echo the canceller has not learnt yet keeps a high
    ratio, so new sounds in the agent's voice do not pass for a user. A window is user speech when
    at least ``MIN_BANDS`` bands exceed that expectation by ``margin_db`` (energies averaged over
    ``smooth`` windows). The envelope holds the loudest reference energy of the last ``hold_s``
    (the canceller's filter length) before it decays. Ratios are learnt only from windows that
    look like echo alone (see ``update``).
    """

    def __init__(self, margin_db: float = 9.0, init_db: float = 6.0, rt60_s: float = 1.0,
                 window: int = 512, window_s: float = 0.032, history_s: float = 3.0, percentile: float = 60.0,
                 smooth: int = 3, n_bands: int = 16, hold_s: float = 0.256):
        self.margin = 10 ** (margin_db / 10)
        self.init_ratio = 10 ** (init_db / 10)
        self.decay = 10 ** (-6.0 * window_s / max(rt60_s, 1e-3))  # energy decay per window
        self.history = int(round(history_s / window_s))
        self.percentile = percentile
        self.smooth = smooth
        self.hold = max(1, int(round(hold_s / window_s)))
        edges = np.unique(np.round(np.geomspace(3, window // 2 + 1, n_bands + 1)).astype(int))
        self._edges = np.concatenate([[0], edges[1:-1], [window // 2 + 1]])
        self._win = np.hanning(window).astype(np.float64)
        self.reset()

    def reset(self) -> None:
        nb = len(self._edges) - 1
        self.env = np.zeros(nb)
        self._recent: deque = deque(maxlen=self.hold)
        self._hist = np.full((self.history, nb), np.nan)
        self._n = 0
        self.noise = None  # the quietest total residual energy while the agent was silent
        self.noise_bands = None  # mean noise energy per band
        self._res: deque = deque(maxlen=self.smooth)
        self._envs: deque = deque(maxlen=self.smooth)
        self.ratio = np.full(nb, self.init_ratio)

    def forget(self) -> None:
        """Back to the prior ratio (the canceller dropped its filter: what was learnt about
        the residual no longer holds)."""
        self._hist[:] = np.nan
        self._n = 0
        self.ratio = np.full(len(self._edges) - 1, self.init_ratio)

    def _bands(self, x: np.ndarray) -> np.ndarray:
        p = np.abs(np.fft.rfft(x * self._win)) ** 2
        return np.add.reduceat(p, self._edges[:-1])

    def update(self, residual: np.ndarray, ref: np.ndarray, mic: np.ndarray | None = None) -> tuple[bool, bool]:
        """-> (echo_possible, user_ok) for one window. ``mic``: the window before echo
        cancellation (``residual`` when there is no canceller)."""
        ref = ref.astype(np.float64)
        ref_b = self._bands(ref) if ref.any() else np.zeros_like(self.env)
        self._recent.append(ref_b)
        # The echo of the last ``hold_s`` (the canceller's filter length: its errors last that
        # long after the agent stops), then a reverberation tail.
        self.env = np.maximum(np.max(self._recent, axis=0), self.env * self.decay)
        self._res.append(self._bands(residual.astype(np.float64)))
        self._envs.append(self.env)
        res = sum(self._res) / len(self._res)
        env = sum(self._envs) / len(self._envs)
        total_env = env.sum()
        now = float(self._res[-1].sum())
        if total_env < 1e-9 * len(self._win) ** 2:  # the agent has been silent long enough
            # minimum tracking of the background noise (rising at most 3 dB a second); the windows
            # within 3 dB of it are noise alone and update the noise spectrum's mean
            self.noise = now if self.noise is None else min(now, self.noise * 1.022)
            if now < 2.0 * self.noise:
                new = self._res[-1]
                self.noise_bands = new.copy() if self.noise_bands is None else \
                    self.noise_bands + NOISE_ALPHA * (new - self.noise_bands)
            return False, True
        noise = 0.0 if self.noise_bands is None else self.noise_bands
        echo = self.ratio * env
        user_ok = int(np.count_nonzero(res > self.margin * (echo + noise))) >= MIN_BANDS
        e_res = float(np.dot(residual, residual))
        e_mic = e_res if mic is None else float(np.dot(mic, mic))
        # Learn only from windows that show the echo: the canceller removed at least half of the
        # microphone's energy (the sound was the agent's own, linearly predictable), or the
        # residual is 20 dB under what the agent plays in this very window, or within 3 dB of the
        # background noise heard while the agent was silent (little echo, no one else talking;
        # the noise's mean, not its minimum: in road noise the minimum lies several dB under most
        # noise-only windows, and the gate then hardly ever learnt). Windows where someone talks
        # over the agent are neither, so double talk does not teach the gate that a user's voice
        # is echo.
        floor = self.noise if self.noise_bands is None else float(self.noise_bands.sum())
        near_noise = self.noise is not None and now < 2.0 * floor
        echo_like = e_res <= 0.5 * e_mic or now < 0.01 * ref_b.sum() or near_noise
        loud = ref_b.sum() > max(1e-6 * len(self._win) ** 2, 2.0 * (self.noise or 0.0))
        if echo_like and loud:  # the agent is talking (3 dB over the noise): learn
            above = np.maximum(res - noise, 0.0)  # the noise is not echo
            row = np.where(env > 1e-4 * env.max(), above / np.maximum(env, 1e-30), np.nan)
            self._hist[self._n % self.history] = row
            self._n += 1
            if self._n % 2 == 0:
                counts = np.sum(~np.isnan(self._hist), axis=0)
                srt = np.sort(self._hist, axis=0)  # NaN sort last
                idx = np.clip(np.floor((counts - 1) * self.percentile / 100 + 0.5).astype(int), 0, None)
                est = srt[idx, np.arange(srt.shape[1])]
                self.ratio = np.where(counts >= 8, est, self.init_ratio)
        return True, user_ok
