"""Speech segmentation of the assistant track with Silero VAD (SPEC 5.1).

Two profiles:

* ``paper`` (default): Silero on each non-silent *region* of the track, with a fresh model state
  per region. A region is a run of 80 ms frames whose RMS is above -60 dBFS, merged with the next
  run when less than 1 s apart, extended by 0.5 s on each side. Silence therefore costs nothing
  and the result does not depend on how much silence came before. Parameters: threshold 0.5,
  ``min_silence_duration_ms=100``, ``speech_pad_ms=30``, ``min_speech_duration_ms=min_speech_ms``,
  sample resolution, pad removed (start + 30 ms, end - 30 ms). Silero decides *which* stretches
  are speech; the *edges* used for timing are then moved to the sound's own edges
  (``refine_edges``), because Silero's are quantised to its 32 ms windows and lag weak onsets:
  on espeak speech its onsets are 0-80 ms late (a nasal "n" at an unlucky window phase: 76 ms;
  "f", "s", "sh", "h": Silero starts at the vowel) and its ends 0-120 ms late, while the
  end-to-end latency test asks for the first sample of the answer within 40 ms
  (``benchmarks/bench_vad_edges.py`` prints both errors).
* ``fdb_code``: the public Full-Duplex-Bench scripts' call, ``get_speech_timestamps(wav, model,
  return_seconds=True)`` on the whole track with the package defaults; times in seconds rounded
  to 0.1 s as the package rounds them, pad included.

Edge refinement (``paper`` only): in 2 ms frames, a frame is *sounding* when its RMS is above
-60 dBFS, within 35 dB of the segment's loudest 20 ms and 10 dB above the region's floor (its
10th-percentile 20 ms level: a noisy track does not pass for speech). The onset is the first
sounding sample of the run of sounding frames (gaps under 100 ms, Silero's own
``min_silence_duration_ms``, do not break it) that holds the first sounding frame within 0.2 s
after Silero's onset; the end, likewise, the last sounding sample of the run holding the last
sounding frame within 0.2 s before Silero's end. A run never crosses the neighbouring segments,
so segments stay ordered; a segment with no sounding frame near an edge keeps Silero's. Two
segments whose refined edges end up less than 100 ms apart are then one segment (``merge_close``:
Silero's own minimum silence; its probability can dip for 100 ms on a fricative inside a word).

Silero's probabilities per region are cached on disk by the region's samples (``region_probs``),
so re-scoring and the MPE ``min_speech_ms`` sweep run the model once. The Silero model (the JIT
file shipped in the ``silero-vad`` wheel, as FDB loads it) is loaded once per process. Importing ``silero_vad`` calls ``torch.set_num_threads(1)`` for the process.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path

import numpy as np

from ..sealed import load_array, save_array

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
WINDOW = 512  # Silero's window at 16 kHz
PROBS_VERSION = 1  # bump when region_probs changes what it stores

EDGE_FRAME = 32  # 2 ms frames for the edge search
EDGE_REF_FRAME = 320  # 20 ms frames for the segment's level and the region's floor
EDGE_REL_DB = -35.0  # sounding: within 35 dB of the segment's loudest 20 ms ...
EDGE_FLOOR_DB = 10.0  # ... and 10 dB above the region's 10th-percentile 20 ms level
EDGE_FLOOR_PCT = 10
EDGE_ANCHOR_S = 0.2  # the sound's edge is looked for this far inside Silero's edge

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
            "region_db": REGION_DB, "pad_removed": True,
            "edges": {"frame_ms": EDGE_FRAME * 1000 // RATE, "rel_db": EDGE_REL_DB, "floor_db": EDGE_FLOOR_DB,
                      "floor_percentile": EDGE_FLOOR_PCT, "anchor_s": EDGE_ANCHOR_S, "max_gap_ms": MIN_SILENCE_MS,
                      "merge_gap_ms": MIN_SILENCE_MS}}


def segments(audio16k, profile: str = "paper", min_speech_ms: int = 250, cache: bool = True) -> list[Segment]:
    """Speech segments ``[(start_s, end_s), ...]`` of a 16 kHz mono track (see module docstring).
    ``cache``: keep Silero's probabilities on disk (``paper``)."""
    x = _mono(audio16k)
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if not x.any():  # digital silence (a silent agent): Silero finds nothing there, so skip it
        return []
    if profile == "fdb_code":
        return _fdb_code_segments(x)
    return segments_from_probs(x, region_probs(x, cache=cache), min_speech_ms)


def segments_from_probs(audio16k, probs: list[tuple[int, int, list[float]]], min_speech_ms: int) -> list[Segment]:
    """The ``paper`` segments from ``region_probs(audio16k)``: one Silero pass serves any
    ``min_speech_ms`` (the MPE sensitivity sweep)."""
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    if min_speech_ms < 0:
        raise ValueError(f"min_speech_ms must be >= 0, got {min_speech_ms}")
    x = np.asarray(audio16k, dtype=np.float32)
    pad = SPEECH_PAD_MS * RATE // 1000
    out: list[Segment] = []
    for a, b, p in probs:
        ts = get_speech_timestamps_from_probs(
            p, sampling_rate=RATE, threshold=THRESHOLD, min_speech_duration_ms=int(min_speech_ms),
            min_silence_duration_ms=MIN_SILENCE_MS, speech_pad_ms=SPEECH_PAD_MS, audio_length_samples=b - a,
        )
        raw = [(int(t["start"]) + pad, int(t["end"]) - pad) for t in ts]
        for s, e in merge_close(refine_edges(x[a:b], [(s, e) for s, e in raw if e > s])):
            out.append(((a + s) / RATE, (a + e) / RATE))
    return out


def merge_close(segs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Refined segments (samples, in order) with those less than ``MIN_SILENCE_MS`` apart joined.
    Silero splits where its probability stays low for 100 ms, which a fricative can do inside a
    word ("That's | September"); when the sound's own edges leave less than Silero's minimum
    silence between two segments, by Silero's own rule they are one."""
    gap = MIN_SILENCE_MS * RATE // 1000
    out: list[tuple[int, int]] = []
    for s, e in segs:
        if out and s - out[-1][1] < gap:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def refine_edges(x: np.ndarray, segs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Silero's segments of one region (samples, pad removed, in order) with their edges moved to
    the sound's edges (module docstring)."""
    n, f = len(x), EDGE_FRAME
    if not segs or n < EDGE_REF_FRAME:
        return list(segs)
    frame_rms = _frame_rms(x, f)
    ref_rms = _frame_rms(x, EDGE_REF_FRAME)
    floor = float(np.percentile(ref_rms, EDGE_FLOOR_PCT)) * 10 ** (EDGE_FLOOR_DB / 20)
    gap = MIN_SILENCE_MS * RATE // 1000 // f  # silent frames that end a run
    anchor = int(EDGE_ANCHOR_S * RATE) // f
    out: list[tuple[int, int]] = []
    for i, (s, e) in enumerate(segs):
        inside = ref_rms[s // EDGE_REF_FRAME : max(s // EDGE_REF_FRAME + 1, e // EDGE_REF_FRAME)]
        level = max(10 ** (REGION_DB / 20), float(inside.max(initial=0.0)) * 10 ** (EDGE_REL_DB / 20), floor)
        lo = -(-(out[-1][1] if out else 0) // f)  # whole frames between the neighbours
        hi = min(segs[i + 1][0] if i + 1 < len(segs) else n, n) // f
        sounding = np.flatnonzero(frame_rms[lo:hi] > level) + lo
        start, end = s, e
        first = sounding[(sounding >= s // f) & (sounding <= min(e // f, s // f + anchor))]
        if first.size:
            k = _run_edge(sounding, int(first[0]), gap, -1)
            start = k * f + int(np.argmax(np.abs(x[k * f : (k + 1) * f]) > level))
        last = sounding[(sounding <= (e - 1) // f) & (sounding >= max(s // f, (e - 1) // f - anchor))]
        if last.size:
            k = _run_edge(sounding, int(last[-1]), gap, +1)
            tail = np.abs(x[k * f : (k + 1) * f]) > level
            end = k * f + f - int(np.argmax(tail[::-1]))
        out.append((start, end) if end > start else (s, e))
    return out


def sound_runs(audio16k, rel_db: float = EDGE_REL_DB) -> list[tuple[int, int]]:
    """Sample ranges ``[(start, end), ...]`` of the sound in a 16 kHz track: per ``regions`` region,
    runs of sounding 2 ms frames (the edge rule of ``refine_edges``, but within ``rel_db`` of the
    region's loudest 20 ms) where gaps under ``MIN_SILENCE_MS`` do not break a run; each edge at
    its first or last sample above the level. No model runs: word times are clamped to these."""
    x = _mono(audio16k).astype(np.float32, copy=False)
    f = EDGE_FRAME
    gap = MIN_SILENCE_MS * RATE // 1000 // f
    out: list[tuple[int, int]] = []
    for a, b in regions(x):
        y = x[a:b]
        if len(y) < EDGE_REF_FRAME:
            continue
        ref_rms = _frame_rms(y, EDGE_REF_FRAME)
        floor = float(np.percentile(ref_rms, EDGE_FLOOR_PCT)) * 10 ** (EDGE_FLOOR_DB / 20)
        level = max(10 ** (REGION_DB / 20), float(ref_rms.max()) * 10 ** (rel_db / 20), floor)
        sounding = np.flatnonzero(_frame_rms(y, f) > level)
        if not sounding.size:
            continue
        breaks = np.flatnonzero(np.diff(sounding) > gap)
        firsts = np.concatenate([sounding[:1], sounding[breaks + 1]])
        lasts = np.concatenate([sounding[breaks], sounding[-1:]])
        for k0, k1 in zip(firsts.tolist(), lasts.tolist()):
            start = k0 * f + int(np.argmax(np.abs(y[k0 * f : (k0 + 1) * f]) > level))
            tail = np.abs(y[k1 * f : (k1 + 1) * f]) > level
            end = k1 * f + f - int(np.argmax(tail[::-1]))
            out.append((a + start, a + end))
    return out


def _run_edge(frames: np.ndarray, k: int, gap: int, step: int) -> int:
    """The first (``step=-1``) or last (``+1``) frame of the run of ``frames`` (sorted indices)
    that holds ``k``, where fewer than ``gap`` missing frames do not break a run."""
    i = int(np.searchsorted(frames, k))
    breaks = np.flatnonzero(np.diff(frames) > gap)  # a run ends after frames[j] for j in breaks
    if step < 0:
        before = breaks[breaks < i]
        return int(frames[before[-1] + 1]) if before.size else int(frames[0])
    after = breaks[breaks >= i]
    return int(frames[after[0]]) if after.size else int(frames[-1])


def _frame_rms(x: np.ndarray, frame: int) -> np.ndarray:
    k = len(x) // frame
    y = x[: k * frame].reshape(k, frame)
    return np.sqrt(np.einsum("ij,ij->i", y, y, dtype=np.float64) / frame)


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


def region_probs(audio16k, cache: bool = True) -> list[tuple[int, int, list[float]]]:
    """Silero's speech probability per 512-sample window of each non-silent region (fresh model
    state per region), exactly as ``get_speech_timestamps`` computes them; cached on disk by the
    region's samples."""
    import torch

    audio = np.asarray(audio16k, dtype=np.float32)
    out = []
    for a, b in regions(audio):
        x = np.array(audio[a:b], dtype=np.float32)  # a writable copy: torch wants one
        key = hashlib.sha256(x.tobytes() + f"silero/{_silero_version()}/p{PROBS_VERSION}".encode()).hexdigest()
        path = _probs_dir() / key[:2] / f"{key}.probs"
        probs = None
        if cache:  # a torn, changed or misplaced file is discarded with a warning and computed again
            n = -(-len(x) // WINDOW)
            got = load_array(path, key, lambda p, n=n: _check_probs(p, n))
            probs = None if got is None else got.tolist()
        if probs is None:
            model = load_model()
            t = torch.from_numpy(x)
            probs = []
            with _lock:
                model.reset_states()
                for i in range(0, len(t), WINDOW):
                    chunk = t[i : i + WINDOW]
                    if len(chunk) < WINDOW:
                        chunk = torch.nn.functional.pad(chunk, (0, WINDOW - len(chunk)))
                    probs.append(model(chunk, RATE).item())
            if cache:
                save_array(path, key, np.asarray(probs, dtype=np.float64))
        out.append((a, b, probs))
    return out


def _check_probs(p: np.ndarray, n: int) -> str | None:
    if p.dtype != np.float64 or p.shape != (n,):
        return f"expected {n} probabilities, found {p.dtype} {p.shape}"
    if not (np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()):
        return "holds probabilities outside [0, 1]"
    return None


def _probs_dir() -> Path:
    from ..paths import cache_dir

    return cache_dir() / "vad"


@functools.lru_cache(maxsize=1)
def _silero_version() -> str:
    try:
        import importlib.metadata

        return importlib.metadata.version("silero-vad")
    except Exception:  # pragma: no cover
        return "?"


def _fdb_code_segments(x: np.ndarray) -> list[Segment]:
    import torch
    from silero_vad import get_speech_timestamps

    model = load_model()
    # FDB: sf.read (float64) -> torch.from_numpy(...).float().unsqueeze(0); defaults otherwise.
    wav = torch.from_numpy(np.asarray(x, dtype=np.float64)).float().unsqueeze(0)
    with _lock:
        ts = get_speech_timestamps(wav, model, return_seconds=True)
    return [(float(t["start"]), float(t["end"])) for t in ts]


def silero_default_samples(audio16k) -> list[tuple[int, int]]:
    """Silero's ``get_speech_timestamps`` with the package's defaults on a whole 16 kHz track, in
    samples (Full-Duplex-Bench v1.5's ``get_timing.py``); ``[]`` for digital silence."""
    x = _mono(audio16k)
    if not x.any():
        return []
    import torch
    from silero_vad import get_speech_timestamps

    model = load_model()
    wav = torch.from_numpy(np.asarray(x, dtype=np.float32).copy())
    with _lock:
        ts = get_speech_timestamps(wav, model, sampling_rate=RATE)
    return [(int(t["start"]), int(t["end"])) for t in ts]


def _mono(audio) -> np.ndarray:
    x = np.asarray(audio)
    if x.ndim == 2:
        x = x.mean(axis=0 if x.shape[0] < x.shape[1] else 1)
    if x.ndim != 1:
        raise ValueError(f"expected a mono 16 kHz track, got shape {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"expected float samples in [-1, 1], got {x.dtype} (scale int16 PCM by 1/32768)")
    return x
