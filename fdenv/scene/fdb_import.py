"""Replay import of Full-Duplex-Bench sample folders (SPEC 3, replay mode).

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
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ..record import PlayedClip, PlayedTurn, resample
from .load import scene_from_dict

RATE = 16000
SPEAKER = "user"
PLACEHOLDER = "(speech)"
TASK_FILES = {"pause.json": "pause", "turn_taking.json": "turn_taking", "interrupt.json": "interruption"}
DIST_FILES = ("gt_distribution.json", "icc_gt_distribution.json")


def load_fdb_task(path: str | Path, distribution: Sequence[float] | None = None) -> tuple:
    """``(Scene, input_audio_16k, gold)`` of one FDB sample folder (see the module docstring)."""
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: not a folder; give an FDB sample folder (with input.wav)")
    wav = folder / "input.wav"
    if not wav.is_file():
        raise FileNotFoundError(f"{folder}: no input.wav (an FDB sample folder holds input.wav and its task json)")
    x = _read_16k(wav)
    duration = len(x) / RATE
    kind = next((k for name, k in TASK_FILES.items() if (folder / name).is_file()), "backchannel")
    words = _words(folder)
    spans = _speech_spans(x, words)
    sid = folder.name
    turns: list[dict] = []
    played: list[PlayedTurn] = []
    clips: list[PlayedClip] = []
    bc = None

    if kind == "pause":
        pauses = sorted((float(p["timestamp"][0]), float(p["timestamp"][1])) for p in _json(folder / "pause.json"))
        pauses = [p for p in pauses if p[1] > p[0]]
        if not pauses:
            raise ValueError(f"{folder / 'pause.json'}: no pause with end > start")
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
        e = float(_json(folder / "turn_taking.json")[0]["timestamp"][0])
        before = [s for s in spans if s[0] < e]
        start = before[0][0] if before else 0.0
        text = _text_in(words, start, e)
        turns.append({"id": "u0", "speaker": SPEAKER, "text": text, "label": "final"})
        played.append(PlayedTurn("u0", SPEAKER, "final", start, e, text))
        clips.append(PlayedClip("u0", 0, SPEAKER, start, e, text))
    elif kind == "interruption":
        meta = _json(folder / "interrupt.json")[0]
        s, f = float(meta["timestamp"][0]), float(meta["timestamp"][1])
        before = [sp for sp in spans if sp[0] < s]
        start = before[0][0] if before else 0.0
        final_end = min(s, max(sp[1] for sp in before)) if before else s
        context = (meta.get("context") or "").strip() or _text_in(words, start, final_end)
        interrupt = (meta.get("interrupt") or "").strip() or _text_in(words, s, f)
        turns.append({"id": "u0", "speaker": SPEAKER, "text": context, "label": "final"})
        turns.append({"id": "u1", "speaker": SPEAKER, "text": interrupt, "label": "interrupt",
                      "gap": float(np.clip(s - final_end, -30.0, 60.0))})
        played += [PlayedTurn("u0", SPEAKER, "final", start, final_end, context),
                   PlayedTurn("u1", SPEAKER, "interrupt", s, f, interrupt)]
        clips += [PlayedClip("u0", 0, SPEAKER, start, final_end, context), PlayedClip("u1", 0, SPEAKER, s, f, interrupt)]
    else:
        bc = list(distribution) if distribution is not None else _find_distribution(folder)
        start, end = 0.0, duration
        split = _split_time(words, spans, start, end)
        a_text, b_text = _text_in(words, start, split), _text_in(words, split, end)
        turns.append({"id": "u0", "speaker": SPEAKER, "text": f"{a_text} [trp] {b_text}", "label": "monologue"})
        played.append(PlayedTurn("u0", SPEAKER, "monologue", start, end, f"{a_text} {b_text}", trps=(split,)))
        clips += [PlayedClip("u0", 0, SPEAKER, start, split, a_text), PlayedClip("u0", 1, SPEAKER, split, end, b_text)]

    data = {
        "id": f"fdb-{kind}-{sid}", "kind": kind, "speakers": [{"name": SPEAKER}], "turns": turns,
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
    dists = _json(Path(distribution_file)) if distribution_file else None
    out = []
    for d in sorted((p for p in task_dir.iterdir() if (p / "input.wav").is_file()), key=lambda p: (len(p.name), p.name)):
        dist = dists.get(d.name) if dists else None
        out.append(load_fdb_task(d, distribution=dist))
    return out


# ---------------------------------------------------------------------------- helpers


def _json(path: Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _read_16k(path: Path) -> np.ndarray:
    import soundfile as sf

    x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return resample(x.mean(axis=1), sr, RATE)


def _words(folder: Path) -> list[tuple[str, float, float]]:
    path = folder / "transcription.json"
    if not path.is_file():
        return []
    data = _json(path)
    chunks = data.get("chunks", []) if isinstance(data, dict) else data
    out = []
    for c in chunks:
        ts = list(c.get("timestamp") or []) + [None, None]
        s, e = ts[0], ts[1]
        if s is None:
            continue
        e = s if e is None else e
        text = str(c.get("text", "")).strip()
        if text:
            out.append((text, float(s), float(e)))
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
    return t.replace("[", "(").replace("]", ")").strip()


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
                if folder.name in data:
                    return data[folder.name]
    raise FileNotFoundError(
        f"{folder}: a backchannel sample needs its ground-truth distribution: pass distribution=..., or put "
        f"gt_distribution.json / icc_gt_distribution.json (keyed by sample id) in the task folder"
    )
