"""Log-mel observations for turn-taking policies (no torchaudio).

``LogMel`` turns one 80 ms frame into ``sub_frames`` log-mel vectors (a short-time Fourier
transform inside the frame, Hann window, half overlap, an HTK mel filter bank; ``scipy.fft``,
the numbers of ``torch.stft``), normalised to roughly zero mean and unit spread over speech and silence.
``FeatureHistory`` keeps the last ``history`` frames of features (plus the assistant's own state
when ``TurnActions`` gives one) as one ``(history, n_features)`` array, oldest first.
``LogMelFeatures`` is the observation wrapper; the ``policy`` agent uses the same two classes, so
a policy sees the same numbers in training and in ``fdenv-run``.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from scipy.fft import rfft as _rfft

# Normalisation: log10 mel power -> (x - LOG_OFFSET) / LOG_SCALE, clipped to [-CLIP, CLIP].
# Silence (digital zero) lands at about -1.6, speech at -23 dBFS around 0..1.5.
LOG_FLOOR = 1e-8
LOG_OFFSET = -3.0
LOG_SCALE = 3.0
CLIP = 5.0


def hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)


def mel_to_hz(m):
    return 700.0 * (10.0 ** (np.asarray(m, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(n_mels: int, n_fft: int, sample_rate: int, fmin: float = 50.0, fmax: float | None = None) -> np.ndarray:
    """Triangular HTK mel filters, ``(n_mels, n_fft // 2 + 1)``, each normalised to unit area."""
    fmax = min(fmax or sample_rate / 2, sample_rate / 2)
    if not 0 <= fmin < fmax:
        raise ValueError(f"mel filterbank: need 0 <= fmin < fmax, got fmin={fmin}, fmax={fmax}")
    bins = np.linspace(0.0, sample_rate / 2, n_fft // 2 + 1)
    edges = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    fb = np.zeros((n_mels, len(bins)))
    for i in range(n_mels):
        lo, mid, hi = edges[i], edges[i + 1], edges[i + 2]
        up = (bins - lo) / max(mid - lo, 1e-9)
        down = (hi - bins) / max(hi - mid, 1e-9)
        fb[i] = np.maximum(0.0, np.minimum(up, down))
        area = fb[i].sum()
        if area > 0:
            fb[i] /= area
        else:  # a filter narrower than one bin: take the nearest bin
            fb[i, int(np.argmin(np.abs(bins - mid)))] = 1.0
    return fb.astype(np.float32)


class LogMel:
    """Log-mel vectors of one frame: ``(sub_frames, n_mels)`` float32.

    ``n_fft = 2 * frame_samples // (sub_frames + 1)`` and hop ``n_fft // 2`` tile the frame
    exactly (16 kHz: 512-sample windows every 256 samples, four per 80 ms frame)."""

    def __init__(self, sample_rate: int = 16000, frame_samples: int = 1280, n_mels: int = 32, sub_frames: int = 4,
                 fmin: float = 50.0, fmax: float | None = 8000.0):
        if sub_frames < 1 or n_mels < 1:
            raise ValueError(f"LogMel: sub_frames and n_mels must be >= 1, got {sub_frames}, {n_mels}")
        self.sample_rate, self.frame_samples = int(sample_rate), int(frame_samples)
        self.n_mels, self.sub_frames = int(n_mels), int(sub_frames)
        self.n_fft = 2 * self.frame_samples // (self.sub_frames + 1)
        self.hop = self.n_fft // 2
        if self.n_fft < 16:
            raise ValueError(f"LogMel: {sub_frames} sub-frames leave {self.n_fft}-sample windows; use fewer")
        self.window = torch.hann_window(self.n_fft, periodic=True)
        self.fb = torch.from_numpy(mel_filterbank(self.n_mels, self.n_fft, self.sample_rate, fmin, fmax))
        self._window = self.window.numpy()
        self._fb_t = np.ascontiguousarray(self.fb.numpy().T)  # (bins, n_mels)

    @property
    def size(self) -> int:
        return self.sub_frames * self.n_mels

    def __call__(self, frame: np.ndarray) -> np.ndarray:
        """``frame``: ``(frame_samples,)`` samples in [-1, 1] -> ``(sub_frames * n_mels,)``, scaled
        against digital silence."""
        feat = (self.log10(frame) - LOG_OFFSET) / LOG_SCALE
        return np.clip(feat, -CLIP, CLIP, out=feat).reshape(-1)

    def log10(self, frame: np.ndarray) -> np.ndarray:
        """``(sub_frames, n_mels)`` log10 mel power, unscaled. The same numbers as ``torch.stft``
        (Hann, no centring) to float32 rounding, computed with ``scipy.fft`` on a strided view of
        the frame: one call per frame instead of five torch ops (twice as fast per frame; the
        features are computed for every frame of every env)."""
        x = np.ascontiguousarray(frame, dtype=np.float32)
        n = x.strides[0]
        win = np.lib.stride_tricks.as_strided(x, (self.sub_frames, self.n_fft), (n * self.hop, n), writeable=False)
        spec = _rfft(win * self._window, axis=-1)
        power = spec.real * spec.real
        power += spec.imag * spec.imag
        mel = power @ self._fb_t
        mel += LOG_FLOOR
        return np.log10(mel, out=mel)

    def config(self) -> dict:
        return {"n_mels": self.n_mels, "sub_frames": self.sub_frames, "n_fft": self.n_fft, "hop": self.hop}


NORMALISE = ("silence", "floor")
# "floor": log10 mel power is read against a per-band running noise floor (a minimum tracker that
# drops at once to a quieter sub-frame and climbs FLOOR_RISE_DB_S otherwise), so steady noise
# reads as silence and speech as its level above the noise. Anything below MIN_LOG10 (about 40 dB
# under speech, below the quietest noise the rooms draw) counts as silence too, so digital zero
# and faint noise look alike. FLOOR_SCALE: log10 units per feature unit (20 dB).
FLOOR_RISE_DB_S = 1.0
MIN_LOG10 = -7.0
FLOOR_SCALE = 2.0


class NoiseFloor:
    """Per-band running noise floor of log10 mel power, ``(sub_frames, n_mels)`` per call."""

    def __init__(self, sub_s: float, rise_db_s: float = FLOOR_RISE_DB_S):
        self.step = rise_db_s / 10.0 * sub_s
        self.reset()

    def reset(self) -> None:
        self.floor: np.ndarray | None = None

    def __call__(self, log10: np.ndarray) -> np.ndarray:
        out = np.empty_like(log10)
        f = log10[0] if self.floor is None else self.floor
        for i in range(len(log10)):
            f = np.minimum(log10[i], f + self.step, out=out[i])
        self.floor = f.copy()
        return out


class FeatureHistory:
    """The last ``history`` feature rows, oldest first; the start is filled with rows of silence.

    A row: the frame's log-mel vectors (``normalise``: ``"silence"``, scaled against digital
    silence, or ``"floor"``, in units of 20 dB above the running noise floor, see
    ``NoiseFloor``); with ``playback``, the log-mel of what the assistant itself played in the
    frame (``n_mels`` values, averaged over the sub-frames: the reference its echo can be told
    from) and the noise floor's level; then the assistant's own state (``own_dim`` values, when
    ``TurnActions`` gives them); then *context*: for each time constant in ``context`` (seconds),
    a leaky average of the microphone level (the row's mean log-mel above silence) and one of
    whether the assistant played a clip (``own[2]``). The averages reach back beyond the window
    ("someone spoke 3 s ago", "I answered 5 s ago") at the cost of a few numbers per row.
    """

    def __init__(self, logmel: LogMel, history: int = 24, own_dim: int = 0, channel: int = 0,
                 context=(1.0, 4.0), frame_s: float = 0.08, normalise: str = "silence", playback: bool = False):
        if history < 1:
            raise ValueError(f"history must be >= 1 frame, got {history}")
        if normalise not in NORMALISE:
            raise ValueError(f"normalise={normalise!r}: valid are {list(NORMALISE)}")
        self.logmel, self.history, self.own_dim, self.channel = logmel, int(history), int(own_dim), int(channel)
        self.normalise, self.playback = normalise, bool(playback)
        self.context = tuple(float(c) for c in (context or ()))
        if any(c <= 0 for c in self.context):
            raise ValueError(f"context time constants must be positive seconds, got {self.context}")
        self._alpha = np.array([1.0 - math.exp(-frame_s / c) for c in self.context], np.float32)
        self.n_extra = logmel.n_mels + 1 if self.playback else 0
        self.n_features = logmel.size + self.n_extra + self.own_dim + 2 * len(self.context)
        self._floor = NoiseFloor(frame_s / logmel.sub_frames)
        zeros = np.zeros(logmel.frame_samples, np.float32)
        silent_mel = self._mic(zeros) if normalise == "floor" else logmel(zeros)
        self._silence_level = float(silent_mel.mean())
        self._silence = np.concatenate([silent_mel, np.zeros(self.n_features - logmel.size, np.float32)])
        self._silence = self._silence.astype(np.float32)
        self.reset()

    @property
    def own_columns(self) -> slice:
        """Where the assistant's own state sits in a row: before the context averages."""
        return own_columns(self.n_features, self.own_dim, len(self.context))

    def reset(self) -> None:
        self._buf = np.tile(self._silence, (self.history, 1))
        self._ema = np.zeros((2, len(self.context)), np.float32)
        self._floor.reset()

    def _mic(self, frame: np.ndarray) -> np.ndarray:
        if self.normalise == "silence":
            return self.logmel(frame)
        x = np.maximum(self.logmel.log10(frame), MIN_LOG10)
        floor = self._floor(x)  # >= MIN_LOG10 like x, and never above it: x - floor >= 0
        x -= floor
        x *= 1.0 / FLOOR_SCALE
        return np.minimum(x, CLIP, out=x).reshape(-1)

    def push(self, audio: np.ndarray, own: np.ndarray | None = None, playback: np.ndarray | None = None) -> np.ndarray:
        """Add one frame (``(n_mics, N)`` or ``(N,)``; ``playback``: the ``(N,)`` samples the
        assistant played in it) and return a fresh ``(history, n_features)``."""
        frame = audio[self.channel] if audio.ndim == 2 else audio
        row = np.empty(self.n_features, np.float32)
        m = self.logmel.size
        row[:m] = self._mic(frame)
        if self.playback:
            e = m + self.logmel.n_mels
            if playback is None or not playback.any():
                row[m:e] = 0.0
            else:
                x = np.maximum(self.logmel.log10(playback), MIN_LOG10).mean(axis=0)
                row[m:e] = np.minimum((x - MIN_LOG10) / FLOOR_SCALE, CLIP)
            fl = self._floor.floor
            row[e] = 0.0 if fl is None else min(CLIP, (float(fl.mean()) - MIN_LOG10) / FLOOR_SCALE)
        o = m + self.n_extra
        if self.own_dim:
            row[o : o + self.own_dim] = 0.0 if own is None else own
        if self.context:
            level = max(0.0, float(row[:m].mean()) - self._silence_level) / 2.0
            played = float(own[2]) if own is not None and self.own_dim > 2 else 0.0
            self._ema[0] += self._alpha * (level - self._ema[0])
            self._ema[1] += self._alpha * (played - self._ema[1])
            row[o + self.own_dim :] = self._ema.reshape(-1)
        if self.history == 1:
            self._buf[0] = row
        else:
            self._buf[:-1] = self._buf[1:]
            self._buf[-1] = row
        return self._buf.copy()


class LogMelFeatures(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Observation wrapper: the microphones (a ``Box``, or ``TurnActions``' ``Dict`` with
    ``"audio"`` and ``"own"``) -> ``Box(-5, 5, (history, n_features), float32)``: for each of the
    last ``history`` frames of microphone ``channel``, oldest first, the log-mel vectors, the
    assistant's own playback and state (when the observation has them) and the context averages
    (``FeatureHistory``).

    Arguments: ``history`` (frames, default 24 = 1.92 s), ``n_mels`` (32), ``sub_frames`` (4 per
    80 ms frame), ``channel`` (0), ``fmin`` / ``fmax`` (50 / 8000 Hz), ``context`` (time constants
    in seconds of the leaky averages appended to each row, default (1, 4); ``()`` for none),
    ``normalise`` (``"silence"``: scaled against digital silence, the default; ``"floor"``:
    against the running noise floor), ``playback`` (add what the assistant played: needs
    ``TurnActions``' ``"playback"``).
    """

    def __init__(self, env: gym.Env, history: int = 24, n_mels: int = 32, sub_frames: int = 4, channel: int = 0,
                 fmin: float = 50.0, fmax: float = 8000.0, context=(1.0, 4.0), normalise: str = "silence",
                 playback: bool = False):
        context = tuple(float(c) for c in (context or ()))
        gym.utils.RecordConstructorArgs.__init__(self, history=history, n_mels=n_mels, sub_frames=sub_frames,
                                                 channel=channel, fmin=fmin, fmax=fmax, context=context,
                                                 normalise=normalise, playback=playback)
        gym.ObservationWrapper.__init__(self, env)
        _single_thread_in_workers()
        space = env.observation_space
        if isinstance(space, spaces.Dict):
            audio_space, own = space["audio"], space.spaces.get("own")
            own_dim = 0 if own is None else int(np.prod(own.shape))
            has_playback = "playback" in space.spaces
        else:
            audio_space, own_dim, has_playback = space, 0, False
        if playback and not has_playback:
            raise ValueError("LogMelFeatures(playback=True): the env gives no 'playback' (wrap it in TurnActions)")
        n_mics, n = audio_space.shape[-2:] if len(audio_space.shape) == 2 else (1, audio_space.shape[-1])
        if not 0 <= channel < n_mics:
            raise ValueError(f"channel={channel}: the env has {n_mics} microphone(s)")
        sr = int(round(n / 0.08))
        self.history = FeatureHistory(LogMel(sr, n, n_mels, sub_frames, fmin, fmax), history, own_dim, channel, context,
                                      normalise=normalise, playback=playback)
        self.playback = bool(playback)
        lo = np.full((history, self.history.n_features), -CLIP, np.float32)
        hi = np.full((history, self.history.n_features), CLIP, np.float32)
        m = self.history.logmel.size
        if normalise == "floor":
            lo[:, :m] = -1.0
        m += self.history.n_extra
        lo[:, m - self.history.n_extra : m] = 0.0  # playback level and floor level: non-negative
        if own_dim:
            lo[:, m : m + own_dim] = np.broadcast_to(own.low.reshape(-1), (history, own_dim))
            hi[:, m : m + own_dim] = np.broadcast_to(own.high.reshape(-1), (history, own_dim))
        lo[:, m + own_dim :] = 0.0  # leaky averages of non-negative values
        self.observation_space = spaces.Box(lo, hi, dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        self.history.reset()
        return super().reset(seed=seed, options=options)

    def observation(self, observation):
        if isinstance(observation, dict):
            return self.history.push(observation["audio"], observation.get("own"),
                                     observation.get("playback") if self.playback else None)
        return self.history.push(observation)


@contextmanager
def one_thread():
    """Run tiny torch ops on one thread: a batched FFT on a busy 2-core machine is 100x slower with
    two intra-op threads (measured: 35 us vs 2-8 ms per frame). Switching costs about 1 us."""
    n = torch.get_num_threads()
    if n == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def _single_thread_in_workers() -> None:
    """One torch thread in a vector-env worker: the features are tiny, threads only contend."""
    import multiprocessing

    if multiprocessing.parent_process() is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def own_columns(n_features: int, own_dim: int, n_context: int) -> slice:
    """The own-state columns of a feature row ``[log-mels, own (own_dim), 2 * n_context averages]``."""
    start = int(n_features) - 2 * int(n_context) - int(own_dim)
    if start < 0:
        raise ValueError(f"{n_features} features cannot hold {own_dim} own-state values and {n_context} context pairs")
    return slice(start, start + int(own_dim))
