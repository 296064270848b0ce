"""Replay of Full-Duplex-Bench v1.5 overlap samples (SPEC 3's replay mode, the ``overlap`` set's
events): ``<task>/<id>/input.wav`` + ``metadata.json`` (``context_text``, ``current_turn_text``,
``timestamps: [start, end]`` of the overlap in input.wav), in the four task folders of v1.5's
layout. ``fdenv-export fdb15`` writes the same layout from a run.

``load_fdb15_task(path)`` returns ``(scene, input_audio_16k, gold)`` like ``replay.load_fdb_task``:
an ``overlap`` scene with a ``final`` turn (the user's speech before the overlap, with
``context_text``) and the event turn at the labelled times (``current_turn_text``), labelled by the
task folder: ``user_interruption`` -> ``interrupt``, ``user_backchannel`` -> ``bc``,
``talking_to_other`` -> ``side``, ``background_speech`` -> ``background`` (spoken by ``TV``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import FDBImportError, short
from ..record import PlayedClip, PlayedTurn
from ..scene.load import scene_from_dict
from .replay import PLACEHOLDER, SPEAKER, _clean_text, _entry, _json, _read_16k, _span, _speech_spans

TASKS = {"user_interruption": "interrupt", "user_backchannel": "bc", "talking_to_other": "side",
         "background_speech": "background"}
EVENT_KINDS = {"interrupt": "interruption", "bc": "backchannel", "side": "side_conversation", "background": "background"}
META = "metadata.json"
OTHER = "other"  # the second human of a side conversation
TV = "TV"


def is_fdb15_sample(folder) -> bool:
    return (Path(folder) / META).is_file() and (Path(folder) / "input.wav").is_file()


def load_fdb15_task(path: str | Path, task: str | None = None) -> tuple:
    """``(Scene, input_audio_16k, gold)`` of one v1.5 sample folder; ``task``: its task folder name
    (default: the name of the folder above the sample)."""
    folder = Path(path)
    task = task or folder.parent.name
    if task not in TASKS:
        raise FDBImportError(str(folder), "task", f"{short(task)} is not a v1.5 task folder; put the sample under one of "
                             f"{sorted(TASKS)} (v1.5's layout) or pass task=")
    x = _read_16k(folder / "input.wav")
    duration = len(x) / 16000
    meta_path = folder / META
    meta = _entry(_json(meta_path), meta_path, "top level")
    s, f = _span(meta.get("timestamps"), meta_path, "timestamps", duration)
    if f <= s:
        raise FDBImportError(str(meta_path), "timestamps", f"[{s}, {f}]: the overlap must end after it starts")
    for key in ("context_text", "current_turn_text"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise FDBImportError(str(meta_path), key, f"expected text or null, got {short(meta[key])}")
    before = [sp for sp in _speech_spans(x, []) if sp[0] < s]
    start = before[0][0] if before else 0.0
    final_end = min(s, max(sp[1] for sp in before)) if before else s
    if not before or final_end - start < 0.05:
        raise FDBImportError(str(folder / "input.wav"), "audio", f"no user speech before the overlap at {s} s; "
                             "a v1.5 sample holds the user's request, then the overlap")
    label = TASKS[task]
    context = _clean_text(meta.get("context_text") or "") or PLACEHOLDER
    event_text = _clean_text(meta.get("current_turn_text") or "") or PLACEHOLDER
    who = {"side": OTHER, "background": TV}.get(label, SPEAKER)
    speakers = [{"name": SPEAKER}] + ([{"name": who}] if who != SPEAKER else [])
    event = {"id": "u1", "speaker": who, "text": event_text, "label": label,
             "gap": float(np.clip(s - final_end, -30.0, 60.0))}
    if label == "side":
        event["addressee"] = SPEAKER
    turns = [{"id": "u0", "speaker": SPEAKER, "text": context, "label": "final"}, event]
    sid = folder.name
    data = {"id": f"fdb15-{EVENT_KINDS[label]}-{folder.parent.name}-{sid}", "kind": "overlap", "speakers": speakers,
            "turns": turns, "attributes": {"source": "fdb15", "replay": True, "sample": sid, "folder": folder.parent.name,
                                           "event": EVENT_KINDS[label]}}
    scene = scene_from_dict(data, source=str(folder))
    played = [PlayedTurn("u0", SPEAKER, "final", start, final_end, context),
              PlayedTurn("u1", who, label, s, f, event_text)]
    clips = [PlayedClip("u0", 0, SPEAKER, start, final_end, context), PlayedClip("u1", 0, who, s, f, event_text)]
    gold = {"task": task, "sample_id": sid, "duration_s": duration, "turns": played, "clips": clips,
            "bc_distribution": None, "source": f"{folder.parent.name}/{sid}"}
    return scene, x, gold


def load_any(path: str) -> list[tuple]:
    """``scene="fdb:PATH"``: a v1.5 overlap sample folder (input.wav + metadata.json) or a task
    folder of them; anything else as FDB v1 data (``replay.load_fdb``)."""
    p = Path(path)
    if is_fdb15_sample(p):
        return [load_fdb15_task(p)]
    if p.is_dir() and any(is_fdb15_sample(d) for d in p.iterdir()):
        return load_fdb15_tasks(p)
    from .replay import load_fdb

    return load_fdb(path)


def load_fdb15_tasks(task_dir: str | Path) -> list[tuple]:
    """Every sample folder (input.wav + metadata.json) of a v1.5 task folder, in name order."""
    task_dir = Path(task_dir)
    found = sorted((p for p in task_dir.iterdir() if is_fdb15_sample(p)), key=lambda p: (len(p.name), p.name))
    return [load_fdb15_task(d, task_dir.name) for d in found]


def sample_record(path: str | Path, task: str | None = None):
    """An ``EpisodeRecord`` of a v1.5 sample that a model has already answered (``output.wav``
    next to ``input.wav``): score it with ``fdenv.score.overlap.OverlapScorer``."""
    from ..record import EpisodeRecord

    folder = Path(path)
    out = folder / "output.wav"
    if not out.is_file():
        raise FDBImportError(str(folder), "output.wav", "missing: run the model on input.wav first (or replay the "
                             "folder with an agent: scene='fdb:PATH')")
    scene, x, gold = load_fdb15_task(folder, task)
    y = _read_16k(out)
    n = max(len(x), len(y))
    frame = 1280
    n = -(-n // frame) * frame
    return EpisodeRecord(scene=scene, sample_rate=16000, frame_samples=frame, assistant=np.pad(y, (0, n - len(y))),
                         turns=list(gold["turns"]), clips=list(gold["clips"]), n_frames=n // frame,
                         mic0=np.pad(x, (0, n - len(x))), replay=True, config={"source": gold["source"]})
