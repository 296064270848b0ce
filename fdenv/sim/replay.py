"""Replay mode (SPEC 3): imported Full-Duplex-Bench sample folders, played as a fixed input with
fixed gold times and no reactions.

``load_fdb_task(path)`` reads one downloaded FDB sample folder of any of the four tasks and
returns ``(scene, input_audio_16k, gold)``:

* ``scene``: a validated ``Scene`` of kind ``pause`` / ``backchannel`` / ``turn_taking`` /
  ``interruption`` with one speaker (``user``), so scoring knows which dimension applies. Turn texts
  come from the folder's ``transcription.json`` where there is one (else a placeholder); the
  markers they need (``[pause=S]``, ``[trp]``) are placed at the labelled times.
* ``input_audio_16k``: ``input.wav`` as float32 mono at 16 kHz (soxr), the fixed microphone input.
* ``gold``: ``{"task", "sample_id", "duration_s", "turns": [PlayedTurn], "clips": [PlayedClip],
  "bc_distribution", "source"}``: the fixed gold times that a replay episode's record carries.

Labels from the task files: ``pause.json`` (each entry a pause ``[start, end]``; the ``pause`` turn
spans from the first speech to the end of the last speech), ``turn_taking.json`` (``[0]["timestamp"][0]``
is the end of the ``final`` turn), ``interrupt.json`` (``context``, ``interrupt``,
``timestamp: [start, end]``: a ``final`` turn with the context, then the ``interrupt`` turn).
A folder without one of these is a backchannel sample (ICC): one ``monologue`` turn over the whole
input (FDB's distribution covers the input from 0 in 200 ms bins), with the ground-truth
distribution from ``distribution=`` or from ``gt_distribution.json`` / ``icc_gt_distribution.json``
in the folder or a parent, keyed by the folder name. Speech start and end come from
``transcription.json`` words when present, else from the input's energy (20 ms frames above
max(-50 dBFS, peak - 40 dB)).

Every file is checked as it is read: a malformed folder raises ``fdenv.errors.FDBImportError``
naming the file, the field and the fix (timestamps must be finite seconds inside input.wav, a
span's end after its start; input.wav must hold finite audio of at least ``MIN_INPUT_S``). The
scene id names the task folder and the sample (``fdb-<kind>-<task folder>-<sample>``), so two task
folders that both hold sample ``1`` give two scenes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ..audio import resample
from ..errors import FDBImportError, short
from ..record import PlayedClip, PlayedTurn
from ..scene.load import scene_from_dict

RATE = 16000
SPEAKER = "user"
PLACEHOLDER = "(speech)"
TASK_FILES = {"pause.json": "pause", "turn_taking.json": "turn_taking", "interrupt.json": "interruption"}
DIST_FILES = ("gt_distribution.json", "icc_gt_distribution.json")
MIN_INPUT_S = 0.25  # shorter than about three frames: nothing to replay
MAX_INPUT_S = 3600.0  # an hour: FDB samples are seconds to minutes; bounds memory on a wrong header
TOLERANCE_S = 0.5  # labels may end a little after the audio (rounding in FDB's files)


def load_fdb_task(path: str | Path, distribution: Sequence[float] | None = None) -> tuple:
    """``(Scene, input_audio_16k, gold)`` of one FDB sample folder (see the module docstring)."""
    folder = Path(path)
    if not folder.is_dir():
        raise FDBImportError(str(folder), "folder", "not a folder; give an FDB sample folder (with input.wav)")
    wav = folder / "input.wav"
    if not wav.is_file():
        raise FDBImportError(str(folder), "input.wav", "missing (an FDB sample folder holds input.wav and its task json)")
    x = _read_16k(wav)
    duration = len(x) / RATE
    kind = next((k for name, k in TASK_FILES.items() if (folder / name).is_file()), "backchannel")
    words = _words(folder, duration)
    spans = _speech_spans(x, words)
    sid = folder.name
    turns: list[dict] = []
    played: list[PlayedTurn] = []
    clips: list[PlayedClip] = []
    bc = None

    if kind == "pause":
        path = folder / "pause.json"
        entries = _list(_json(path), path, "top level", "a list of {\"timestamp\": [start, end]} pauses")
        pauses = sorted(_span(_entry(p, path, f"[{i}]").get("timestamp"), path, f"[{i}].timestamp", duration)
                        for i, p in enumerate(entries))
        pauses = [p for p in pauses if p[1] > p[0]]
        if not pauses:
            raise FDBImportError(str(path), "timestamp", "no pause with end > start; list each pause as "
                                 "{\"timestamp\": [start, end]} in seconds")
        for (_, e0), (s1, _) in zip(pauses, pauses[1:]):
            if s1 < e0:
                raise FDBImportError(str(path), "timestamp", f"pauses overlap ({s1} s starts before {e0} s ends); "
                                     "each pause must end before the next begins")
        start = min(spans[0][0] if spans else 0.0, pauses[0][0])
        end = max(spans[-1][1] if spans else duration, pauses[-1][1])
        bounds = [start] + [v for p in pauses for v in p] + [end]
        piece_spans = [(bounds[2 * i], bounds[2 * i + 1]) for i in range(len(pauses) + 1)]
        texts = [_text_in(words, a, b) for a, b in piece_spans]
        text = texts[0]
        for (ps, pe), t in zip(pauses, texts[1:]):
            text += f" [pause={_marker_s(pe - ps)}] {t}"
        turns.append({"id": "u0", "speaker": SPEAKER, "text": text, "label": "pause"})
        played.append(PlayedTurn("u0", SPEAKER, "pause", start, end, " ".join(texts)))
        clips += [PlayedClip("u0", i, SPEAKER, a, b, t) for i, ((a, b), t) in enumerate(zip(piece_spans, texts))]
    elif kind == "turn_taking":
        path = folder / "turn_taking.json"
        first = _entry(_list(_json(path), path, "top level", "a list whose first entry holds the turn end")[0], path, "[0]")
        ts = first.get("timestamp")
        if not isinstance(ts, (list, tuple)) or not ts:
            raise FDBImportError(str(path), "[0].timestamp", f"expected [end, ...] in seconds, got {short(ts)}")
        e = _time(ts[0], path, "[0].timestamp[0]", duration)
        before = [s for s in spans if s[0] < e]
        start = before[0][0] if before else 0.0
        text = _text_in(words, start, e)
        turns.append({"id": "u0", "speaker": SPEAKER, "text": text, "label": "final"})
        played.append(PlayedTurn("u0", SPEAKER, "final", start, e, text))
        clips.append(PlayedClip("u0", 0, SPEAKER, start, e, text))
    elif kind == "interruption":
        path = folder / "interrupt.json"
        meta = _entry(_list(_json(path), path, "top level", "a list whose first entry holds the interruption")[0], path, "[0]")
        s, f = _span(meta.get("timestamp"), path, "[0].timestamp", duration)
        if f <= s:
            raise FDBImportError(str(path), "[0].timestamp", f"[{s}, {f}]: the interruption must end after it starts")
        for key in ("context", "interrupt"):
            if meta.get(key) is not None and not isinstance(meta[key], str):
                raise FDBImportError(str(path), f"[0].{key}", f"expected text or null, got {short(meta[key])}")
        before = [sp for sp in spans if sp[0] < s]
        start = before[0][0] if before else 0.0
        final_end = min(s, max(sp[1] for sp in before)) if before else s
        context = _clean_text(meta.get("context") or "") or _text_in(words, start, final_end)
        interrupt = _clean_text(meta.get("interrupt") or "") or _text_in(words, s, f)
        turns.append({"id": "u0", "speaker": SPEAKER, "text": context, "label": "final"})
        turns.append({"id": "u1", "speaker": SPEAKER, "text": interrupt, "label": "interrupt",
                      "gap": float(np.clip(s - final_end, -30.0, 60.0))})
        played += [PlayedTurn("u0", SPEAKER, "final", start, final_end, context),
                   PlayedTurn("u1", SPEAKER, "interrupt", s, f, interrupt)]
        clips += [PlayedClip("u0", 0, SPEAKER, start, final_end, context), PlayedClip("u1", 0, SPEAKER, s, f, interrupt)]
    else:
        bc = _distribution(distribution, str(folder), "distribution") if distribution is not None else _find_distribution(folder)
        start, end = 0.0, duration
        split = _split_time(words, spans, start, end)
        a_text, b_text = _text_in(words, start, split), _text_in(words, split, end)
        turns.append({"id": "u0", "speaker": SPEAKER, "text": f"{a_text} [trp] {b_text}", "label": "monologue"})
        played.append(PlayedTurn("u0", SPEAKER, "monologue", start, end, f"{a_text} {b_text}", trps=(split,)))
        clips += [PlayedClip("u0", 0, SPEAKER, start, split, a_text), PlayedClip("u0", 1, SPEAKER, split, end, b_text)]

    data = {
        "id": f"fdb-{kind}-{folder.parent.name}-{sid}" if folder.parent.name else f"fdb-{kind}-{sid}", "kind": kind, "speakers": [{"name": SPEAKER}], "turns": turns,
        "attributes": {"source": "fdb", "replay": True, "sample": sid, "folder": folder.parent.name},
    }
    if bc is not None:
        data["bc_distribution"] = [float(v) for v in bc]
    scene = scene_from_dict(data, source=str(folder))
    gold = {"task": kind, "sample_id": sid, "duration_s": duration, "turns": played, "clips": clips,
            "bc_distribution": bc, "source": f"{folder.parent.name}/{sid}"}
    return scene, x, gold


def load_fdb_tasks(task_dir: str | Path, distribution_file: str | Path | None = None) -> list[tuple]:
    """Every sample folder (with an input.wav) of an FDB task folder, in name order."""
    task_dir = Path(task_dir)
    if not task_dir.is_dir():
        raise FDBImportError(str(task_dir), "folder", "not a folder; give an FDB task folder (sample folders with input.wav)")
    dists = None
    if distribution_file:
        dists = _json(Path(distribution_file))
        if not isinstance(dists, dict):
            raise FDBImportError(str(distribution_file), "top level", "expected a mapping from sample id to distribution")
    out = []
    for d in sorted((p for p in task_dir.iterdir() if (p / "input.wav").is_file()), key=lambda p: (len(p.name), p.name)):
        dist = dists.get(d.name) if dists else None
        out.append(load_fdb_task(d, distribution=dist))
    return out


# ---------------------------------------------------------------------------- helpers


def _json(path: Path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise FDBImportError(str(path), f"line {e.lineno}, column {e.colno}", f"not valid JSON ({e.msg}); fix or "
                             "re-download the file") from None
    except UnicodeDecodeError:
        raise FDBImportError(str(path), "file", "not UTF-8 text; re-download the file") from None
    except (OSError, RecursionError) as e:
        raise FDBImportError(str(path), "file", f"cannot be read ({type(e).__name__}: {e})") from None


def _list(data, path, field: str, what: str) -> list:
    if not isinstance(data, list) or not data:
        raise FDBImportError(str(path), field, f"expected {what}, got {short(data)}")
    return data


def _entry(data, path, field: str) -> dict:
    if not isinstance(data, dict):
        raise FDBImportError(str(path), field, f"expected a mapping with a \"timestamp\", got {short(data)}")
    return data


def _time(value, path, field: str, duration: float) -> float:
    """A label time: finite seconds within input.wav."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise FDBImportError(str(path), field, f"expected a time in seconds, got {short(value)}")
    if not 0.0 <= value <= duration + TOLERANCE_S:
        raise FDBImportError(str(path), field, f"{value} s is outside input.wav (0 to {duration:.2f} s); "
                             "timestamps are seconds from the start of input.wav")
    return float(min(value, duration))


def _span(value, path, field: str, duration: float) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        raise FDBImportError(str(path), field, f"expected [start, end] in seconds, got {short(value)}")
    a, b = _time(value[0], path, f"{field}[0]", duration), _time(value[1], path, f"{field}[1]", duration)
    if b < a:
        raise FDBImportError(str(path), field, f"[{a}, {b}]: the end is before the start; write [start, end]")
    return a, b


def _distribution(value, source: str, field: str) -> list[float]:
    ok = isinstance(value, (list, tuple)) and value and all(
        not isinstance(v, bool) and isinstance(v, (int, float)) and np.isfinite(v) and 0 <= v <= 1e6 for v in value)
    if not ok or sum(value) <= 0:
        raise FDBImportError(source, field, "expected a non-empty list of non-negative numbers with a positive sum "
                             f"(FDB's 200 ms backchannel distribution), got {short(value)}")
    return [float(v) for v in value]


def _read_16k(path: Path) -> np.ndarray:
    import soundfile as sf

    try:
        info = sf.info(str(path))
        if info.frames > MAX_INPUT_S * info.samplerate:
            raise FDBImportError(str(path), "audio", f"{info.frames / info.samplerate:.0f} s long; FDB inputs are at "
                                 f"most {MAX_INPUT_S:.0f} s: is this the right file?")
        x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except FDBImportError:
        raise
    except Exception as e:  # soundfile raises its own error types (LibsndfileError, RuntimeError, ...)
        raise FDBImportError(str(path), "audio", f"cannot be read as audio ({type(e).__name__}: {e}); "
                             "give a WAV file") from None
    if x.shape[0] < MIN_INPUT_S * sr or x.shape[1] == 0:
        raise FDBImportError(str(path), "audio", f"{x.shape[0]} samples ({x.shape[0] / sr:.3f} s): too short to "
                             f"replay; an FDB input holds at least {MIN_INPUT_S} s of speech")
    if not np.isfinite(x).all():
        raise FDBImportError(str(path), "audio", "contains NaN or inf samples; re-export it as PCM")
    return resample(x.mean(axis=1), sr, RATE)


def _words(folder: Path, duration: float) -> list[tuple[str, float, float]]:
    path = folder / "transcription.json"
    if not path.is_file():
        return []
    data = _json(path)
    chunks = data.get("chunks", []) if isinstance(data, dict) else data
    if not isinstance(chunks, list):
        raise FDBImportError(str(path), "chunks", "expected a list of {\"text\", \"timestamp\": [start, end]} words")
    out = []
    for i, c in enumerate(chunks):
        if not isinstance(c, dict):
            raise FDBImportError(str(path), f"chunks[{i}]", f"expected a mapping with text and timestamp, got {short(c)}")
        ts = c.get("timestamp")
        if ts is not None and not isinstance(ts, (list, tuple)):
            raise FDBImportError(str(path), f"chunks[{i}].timestamp", f"expected [start, end] in seconds, got {short(ts)}")
        ts = list(ts or []) + [None, None]
        if ts[0] is None:
            continue
        s = _time(ts[0], path, f"chunks[{i}].timestamp[0]", duration)
        e = s if ts[1] is None else _time(ts[1], path, f"chunks[{i}].timestamp[1]", duration)
        if e < s:
            raise FDBImportError(str(path), f"chunks[{i}].timestamp", f"[{s}, {e}]: the end is before the start")
        text = _clean_text(str(c.get("text", "")))
        if text:
            out.append((text, s, e))
    return out


def _speech_spans(x: np.ndarray, words) -> list[tuple[float, float]]:
    if words:
        return [(s, e) for _, s, e in sorted(words, key=lambda w: w[1])]
    frame = int(0.02 * RATE)
    n = len(x) // frame
    if n == 0:
        return []
    rms = np.sqrt(np.mean(x[: n * frame].astype(np.float64).reshape(n, frame) ** 2, axis=1))
    peak = rms.max()
    if peak <= 0:
        return []
    level = max(10 ** (-50 / 20), peak * 10 ** (-40 / 20))
    active = np.flatnonzero(rms > level)
    spans: list[list[float]] = []
    for k in active:
        a, b = k * frame / RATE, (k + 1) * frame / RATE
        if spans and a - spans[-1][1] < 0.2:
            spans[-1][1] = b
        else:
            spans.append([a, b])
    return [(a, b) for a, b in spans]


def _text_in(words, a: float, b: float) -> str:
    t = " ".join(w for w, s, e in words if s >= a - 1e-6 and s < b)
    return _clean_text(t) or PLACEHOLDER


def _clean_text(t: str) -> str:
    # Brackets would read as scene markers; control characters (NUL) stop espeak mid-text.
    t = "".join(ch if ch.isprintable() else " " for ch in t)
    return " ".join(t.replace("[", "(").replace("]", ")").split())


def _marker_s(s: float) -> str:
    return f"{min(10.0, max(0.05, s)):.3f}".rstrip("0").rstrip(".")


def _split_time(words, spans, start: float, end: float) -> float:
    """Where to place the monologue's structural [trp]: the longest gap between words (or speech
    spans), else the middle."""
    items = [(s, e) for _, s, e in sorted(words, key=lambda w: w[1])] if words else list(spans)
    best, at = 0.0, (start + end) / 2
    for (_, a1), (b0, _) in zip(items, items[1:]):
        if b0 - a1 > best:
            best, at = b0 - a1, (a1 + b0) / 2
    return float(min(max(at, start + 1e-3), end - 1e-3))


def _find_distribution(folder: Path):
    for d in (folder, folder.parent, folder.parent.parent):
        for name in DIST_FILES:
            p = d / name
            if p.is_file():
                data = _json(p)
                if not isinstance(data, dict):
                    raise FDBImportError(str(p), "top level", "expected a mapping from sample id to distribution")
                if folder.name in data:
                    return _distribution(data[folder.name], str(p), repr(folder.name))
    raise FDBImportError(str(folder), "distribution",
                         "a backchannel sample needs its ground-truth distribution: pass distribution=..., or put "
                         "gt_distribution.json / icc_gt_distribution.json (keyed by sample id) in the task folder")


def load_fdb(path: str) -> list[tuple]:
    """``[(scene, input_audio_16k, gold)]`` of one FDB sample folder (with input.wav) or of a whole
    task folder of them (``scene="fdb:PATH"``)."""
    p = Path(path)
    if not p.exists():
        raise FDBImportError(f"scene='fdb:{path}'", "folder", "no such folder; give a downloaded Full-Duplex-Bench task or sample folder")
    loaded = [load_fdb_task(p)] if (p / "input.wav").is_file() else load_fdb_tasks(p)
    if not loaded:
        raise FDBImportError(f"scene='fdb:{path}'", "folder", "no FDB samples (folders with input.wav) found")
    return loaded


class FixedSchedule:
    """Replay mode's scheduler: nothing reacts, the length is known from the start."""

    def __init__(self, n_frames: int):
        self.n_frames = n_frames
        self.clips: list = []
        self.turns: list = []
        self.extras: list = []  # (no unscripted events either)
        self.reactions: list = []

    def advance(self, j, loud, active, onset) -> None:
        pass
