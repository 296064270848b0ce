"""Speech segmentation of the assistant track with Silero VAD (SPEC 5.1).

Two profiles:

* ``paper`` (default): Silero on each non-silent *region* of the track, with a fresh model state
  per region. A region is a run of 80 ms frames whose RMS is above -60 dBFS, merged with the next
  run when less than 1 s apart, extended by 0.5 s on each side. Silence therefore costs nothing
  and the result does not depend on how much silence came before. Parameters: threshold 0.5,
  ``min_silence_duration_ms=100``, ``speech_pad_ms=30``, ``min_speech_duration_ms=min_speech_ms``,
  sample resolution. The returned times have the pad removed (start + 30 ms, end - 30 ms): they
  are the onsets and ends used for timing.
* ``fdb_code``: the public Full-Duplex-Bench scripts' call, ``get_speech_timestamps(wav, model,
  return_seconds=True)`` on the whole track with the package defaults; times in seconds rounded
  to 0.1 s as the package rounds them, pad included.

The Silero model (the JIT file shipped in the ``silero-vad`` wheel, as FDB loads it) is loaded
once per process. Importing ``silero_vad`` calls ``torch.set_num_threads(1)`` for the process.
"""

from __future__ import annotations

import threading

import numpy as np

RATE = 16000
FRAME_S = 0.08
REGION_DB = -60.0
REGION_MERGE_S = 1.0
REGION_PAD_S = 0.5
THRESHOLD = 0.5
MIN_SILENCE_MS = 100
SPEECH_PAD_MS = 30
PAD_S = SPEECH_PAD_MS / 1000.0
PROFILES = ("paper", "fdb_code")

Segment = tuple[float, float]

_model = None
_lock = threading.Lock()


def load_model():
    """The process-wide Silero model (JIT from the wheel)."""
    global _model
    with _lock:
        if _model is None:
            import warnings

            from silero_vad import load_silero_vad

            with warnings.catch_warnings():  # the package's own importlib / torch.jit deprecations
                warnings.simplefilter("ignore", DeprecationWarning)
                _model = load_silero_vad()
        return _model


def params(profile: str = "paper", min_speech_ms: int = 250) -> dict:
    """The VAD parameters a result should name (SPEC 5.3)."""
    if profile == "fdb_code":
        return {"profile": profile, "vad": "silero-vad", "threshold": THRESHOLD, "min_speech_ms": 250,
                "min_silence_ms": MIN_SILENCE_MS, "speech_pad_ms": SPEECH_PAD_MS, "regions": False, "rounding_s": 0.1}
    return {"profile": profile, "vad": "silero-vad", "threshold": THRESHOLD, "min_speech_ms": int(min_speech_ms),
            "min_silence_ms": MIN_SILENCE_MS, "speech_pad_ms": SPEECH_PAD_MS, "regions": True,
            "region_db": REGION_DB, "pad_removed": True}


def segments(audio16k, profile: str = "paper", min_speech_ms: int = 250) -> list[Segment]:
    """Speech segments ``[(start_s, end_s), ...]`` of a 16 kHz mono track (see module docstring)."""
    x = _mono(audio16k)
    if profile == "fdb_code":
        return _fdb_code_segments(x)
    if profile != "paper":
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if min_speech_ms < 0:
        raise ValueError(f"min_speech_ms must be >= 0, got {min_speech_ms}")
    out: list[Segment] = []
    for a, b in regions(x):
        for s, e in _silero(x[a:b], min_speech_ms=min_speech_ms):
            start = (a + s) / RATE + PAD_S
            end = (a + e) / RATE - PAD_S
            if end > start:
                out.append((start, end))
    return out


def regions(x: np.ndarray, rate: int = RATE) -> list[tuple[int, int]]:
    """Sample ranges of the non-silent regions of ``x`` (80 ms frames above -60 dBFS, merged when
    less than 1 s apart, extended by 0.5 s on each side, clipped to the track)."""
    x = np.asarray(x, dtype=np.float32)
    n = len(x)
    frame = int(round(FRAME_S * rate))
    if n == 0:
        return []
    if not x.any():  # a silent track (the common case for silent agents) costs a scan, no more
        return []
    full = n // frame
    body = x[: full * frame].reshape(full, frame)
    ms = np.einsum("ij,ij->i", body, body, dtype=np.float64) / frame
    if full * frame < n:  # the last, partial frame counts its missing samples as silence
        tail = x[full * frame :].astype(np.float64)
        ms = np.append(ms, np.dot(tail, tail) / frame)
    rms = np.sqrt(ms)
    level = 10 ** (REGION_DB / 20.0)
    active = np.flatnonzero(rms > level)
    if active.size == 0:
        return []
    runs: list[list[int]] = []
    merge = REGION_MERGE_S * rate
    for k in active:
        a, b = int(k) * frame, min(n, (int(k) + 1) * frame)
        if runs and a - runs[-1][1] < merge:
            runs[-1][1] = b
        else:
            runs.append([a, b])
    pad = int(round(REGION_PAD_S * rate))
    out: list[tuple[int, int]] = []
    for a, b in runs:
        a, b = max(0, a - pad), min(n, b + pad)
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _silero(x: np.ndarray, min_speech_ms: int) -> list[tuple[int, int]]:
    """Silero on one region (fresh state): sample ranges, pad included."""
    import torch
    from silero_vad import get_speech_timestamps

    model = load_model()
    with _lock:
        ts = get_speech_timestamps(
            torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)), model, threshold=THRESHOLD,
            sampling_rate=RATE, min_speech_duration_ms=int(min_speech_ms), min_silence_duration_ms=MIN_SILENCE_MS,
            speech_pad_ms=SPEECH_PAD_MS,
        )
    return [(int(t["start"]), int(t["end"])) for t in ts]


def _fdb_code_segments(x: np.ndarray) -> list[Segment]:
    import torch
    from silero_vad import get_speech_timestamps

    model = load_model()
    # FDB: sf.read (float64) -> torch.from_numpy(...).float().unsqueeze(0); defaults otherwise.
    wav = torch.from_numpy(np.asarray(x, dtype=np.float64)).float().unsqueeze(0)
    with _lock:
        ts = get_speech_timestamps(wav, model, return_seconds=True)
    return [(float(t["start"]), float(t["end"])) for t in ts]


def _mono(audio) -> np.ndarray:
    x = np.asarray(audio)
    if x.ndim == 2:
        x = x.mean(axis=0 if x.shape[0] < x.shape[1] else 1)
    if x.ndim != 1:
        raise ValueError(f"expected a mono 16 kHz track, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"expected float samples in [-1, 1], got {x.dtype} (scale int16 PCM by 1/32768)")
    return x
