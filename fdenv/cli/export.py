"""``fdenv-export fdb RUN_DIR OUT``: write a run's episodes in Full-Duplex-Bench's folder format
(``fdenv-export fdb15 RUN_DIR OUT``: the overlap set in v1.5's layout, ``export_fdb15``).

Layout (what the public FDB scripts read, one task folder each)::

    OUT/index.json                          task/id -> scene id, seed, record stem
    OUT/pause_handling/<id>/                input.wav output.wav pause.json output.json transcription.json
    OUT/smooth_turn_taking/<id>/            input.wav output.wav turn_taking.json output.json transcription.json
    OUT/user_interruption/<id>/             input.wav output.wav interrupt.json output.json transcription.json
    OUT/backchannel/<id>/                   input.wav output.wav output.json transcription.json
    OUT/backchannel/gt_distribution.json    id -> ground-truth distribution (200 ms bins from 0)

``<id>`` is a number per task (FDB's backchannel script skips names that are not digits).
``input.wav`` is microphone 0 and ``output.wav`` the assistant track, both 16 kHz float WAV of
equal length, cropped to ``[0, end of the pause / monologue turn]`` for pause handling and
backchannel and whole for the other two (SPEC 6.5). ``output.json`` holds ASR words as
``{"text", "chunks": [{"text", "timestamp": [s, e]}]}``; for interruptions, ASR of the track from
the end of the interrupt with that time added back, as FDB's ASR step does. ``transcription.json``
lists the played user clips in the same shape (clip-level times), so that
``fdenv.sim.replay`` can label the turns again.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from ..score.asr import words_to_fdb
from ..score.fdb import FDB_TASKS, FDBScorer, crop, dimension_of, fdb_ground_truth, gold_turns

RATE = 16000


def _records(source):
    """(record, meta) pairs from a run folder or a list of records."""
    from ..record import EpisodeRecord

    if isinstance(source, (str, Path)):
        run_dir = Path(source)
        lines = run_dir / "episodes.jsonl"
        if not lines.is_file():
            raise FileNotFoundError(f"{run_dir}: no episodes.jsonl here (not a run folder)")
        for line in lines.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if not row.get("record"):
                continue
            yield EpisodeRecord.load(run_dir / row["record"]), {"scene_id": row.get("scene_id"), "seed": row.get("seed"),
                                                                "record": row["record"]}
    else:
        for rec in source:
            yield rec, {"scene_id": rec.scene.id, "seed": rec.seed, "record": None}


def _write_wav(path: Path, x: np.ndarray) -> None:
    import soundfile as sf

    sf.write(str(path), np.asarray(x, dtype=np.float32), RATE, subtype="FLOAT")


def export_fdb(source, out: str | Path, asr="tiny.en") -> dict:
    """Write FDB folders for every FDB episode of ``source`` (a run folder or EpisodeRecords).
    Returns the index ``{task: {id: {...}}}``. ``asr`` as for ``FDBScorer``."""
    from ..audio import resample

    out = Path(out)
    scorer = FDBScorer(profiles=("fdb_code",), asr=asr)
    index: dict = {}
    distributions: dict = {}
    for rec, meta in _records(source):
        dim = dimension_of(rec)
        if dim is None:
            continue
        task = FDB_TASKS[dim]
        sid = str(len(index.setdefault(task, {})))
        folder = out / task / sid
        folder.mkdir(parents=True, exist_ok=True)
        gold = gold_turns(rec, dim)
        output = rec.assistant_16k()
        if rec.mic0 is not None:
            mic = resample(rec.mic0, rec.sample_rate, RATE)
        else:
            warnings.warn(f"{rec.scene.id}: the record has no microphone track; input.wav is silence", stacklevel=2)
            mic = np.zeros_like(output)
        n = len(output)
        mic = np.pad(mic, (0, max(0, n - len(mic))))[:n]
        end = n / RATE
        if dim in ("pause_handling", "backchannel"):
            end = gold["pause" if dim == "pause_handling" else "monologue"].end
            output, mic = crop(output, end), crop(mic, end)
            end = len(output) / RATE
        _write_wav(folder / "output.wav", output)
        _write_wav(folder / "input.wav", mic)
        clips = [c for c in rec.clips if c.start < end]
        (folder / "transcription.json").write_text(json.dumps(
            {"text": " ".join(c.text for c in clips),
             "chunks": [{"text": c.text, "timestamp": [c.start, min(c.end, end)]} for c in clips]}, indent=1))
        if dim == "pause_handling":
            t = gold["pause"]
            pcs = sorted((c for c in rec.clips if c.turn_id == t.id), key=lambda c: c.start)
            pauses = [[a.end, b.start] for a, b in zip(pcs, pcs[1:]) if b.start > a.end]
            (folder / "pause.json").write_text(json.dumps([{"text": "[PAUSE]", "timestamp": p} for p in pauses], indent=1))
            words = scorer.words(output)
        elif dim == "turn_taking":
            (folder / "turn_taking.json").write_text(json.dumps(
                [{"text": "[TURN-TAKING]", "timestamp": [gold["final"].end, end]}], indent=1))
            words = scorer.words(output)
        elif dim == "interruption":
            it, fin = gold["interrupt"], gold["final"]
            (folder / "interrupt.json").write_text(json.dumps(
                [{"context": fin.text, "interrupt": it.text, "timestamp": [it.start, it.end]}], indent=1))
            words = scorer.interruption_words(output, it.end)
        else:
            t = gold["monologue"]
            distributions[sid] = fdb_ground_truth(rec.scene.bc_distribution, t.trps, (t.start, t.end), end)
            words = scorer.words(output)
        (folder / "output.json").write_text(json.dumps(words_to_fdb(words), indent=1))
        index[task][sid] = {**meta, "scene_id": rec.scene.id}
    if distributions:
        (out / "backchannel").mkdir(parents=True, exist_ok=True)
        (out / "backchannel" / "gt_distribution.json").write_text(json.dumps(distributions))
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.json").write_text(json.dumps(index, indent=1))
    return index


V15_TASKS = {"interruption": "user_interruption", "backchannel": "user_backchannel",
             "side_conversation": "talking_to_other", "background": "background_speech"}


def export_fdb15(source, out: str | Path, asr="tiny.en") -> dict:
    """Write Full-Duplex-Bench v1.5 folders for every overlap episode of ``source`` (a run folder
    or EpisodeRecords): ``OUT/<task>/<id>/`` with ``input.wav`` (microphone 0), ``output.wav``
    (the assistant track), ``metadata.json`` (``context_text``: the request; ``current_turn_text``:
    what was said over the answer; ``timestamps``: the event's [start, end]), ``output.json``
    (ASR words) and ``input.json`` (the played clips), task folders ``user_interruption``,
    ``user_backchannel``, ``talking_to_other``, ``background_speech``. v1.5's ``clean_*`` files
    (the model's reply to the input without the overlap) have no counterpart in a closed-loop run
    and are not written. Returns the index ``{task: {id: {...}}}``."""
    from ..audio import resample
    from ..score.overlap import is_overlap_scene, overlap_event

    out = Path(out)
    scorer = FDBScorer(profiles=("paper",), asr=asr)
    index: dict = {}
    for rec, meta in _records(source):
        if not is_overlap_scene(rec):
            continue
        event = overlap_event(rec)
        task = V15_TASKS[event.kind]
        sid = str(len(index.setdefault(task, {})))
        folder = out / task / sid
        folder.mkdir(parents=True, exist_ok=True)
        output = rec.assistant_16k()
        mic = resample(rec.mic0, rec.sample_rate, RATE) if rec.mic0 is not None else np.zeros_like(output)
        n = len(output)
        mic = np.pad(mic, (0, max(0, n - len(mic))))[:n]
        _write_wav(folder / "output.wav", output)
        _write_wav(folder / "input.wav", mic)
        (folder / "metadata.json").write_text(json.dumps(
            {"context_text": event.request, "current_turn_text": event.text,
             "timestamps": [round(event.start, 3), round(event.end, 3)]}, indent=1))
        (folder / "input.json").write_text(json.dumps(
            {"text": " ".join(c.text for c in rec.clips),
             "chunks": [{"text": c.text, "timestamp": [c.start, c.end]} for c in rec.clips]}, indent=1))
        (folder / "output.json").write_text(json.dumps(words_to_fdb(scorer.words(output)), indent=1))
        index[task][sid] = {**meta, "scene_id": rec.scene.id, "event": event.kind}
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.json").write_text(json.dumps(index, indent=1))
    return index


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="fdenv-export", description="Export a run folder to another benchmark's format.")
    sub = p.add_subparsers(dest="format", required=True)
    f = sub.add_parser("fdb", help="Full-Duplex-Bench per-sample folders (input.wav, output.wav, task json, output.json)")
    f.add_argument("run_dir", help="a run folder (episodes.jsonl next to the saved records)")
    f.add_argument("out", help="output folder")
    f.add_argument("--asr", default="tiny.en", help="ASR model: a local CTranslate2 Whisper directory or 'tiny.en'")
    g = sub.add_parser("fdb15", help="Full-Duplex-Bench v1.5 overlap folders (input.wav, output.wav, metadata.json, output.json)")
    g.add_argument("run_dir", help="a run folder of the overlap set")
    g.add_argument("out", help="output folder")
    g.add_argument("--asr", default="tiny.en", help="ASR model: a local CTranslate2 Whisper directory or 'tiny.en'")
    args = p.parse_args(argv)
    try:
        index = (export_fdb15 if args.format == "fdb15" else export_fdb)(args.run_dir, args.out, asr=args.asr)
    except (FileNotFoundError, ValueError) as e:
        print(f"fdenv-export: {e}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{task}: {len(v)}" for task, v in index.items()) or f"no {'overlap' if args.format == 'fdb15' else 'FDB'} episodes"
    print(f"wrote {args.out} ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
