"""Run folders (SPEC 9): where a run's lines and records go, and how they are read back.

A run folder is ``<out>/<key>/`` where ``key`` hashes the configuration that affects results. It
holds ``config.json``, ``episodes.jsonl`` (one line per finished episode, flushed as it ends),
``failures.jsonl`` (episodes an agent failed; a rerun retries them) and
``episodes/<scene>.s<seed>.{json,flac}`` (the EpisodeRecords). The runner writes them through
this module; scoring, summaries, reports and plots read them through it. It knows records, never
the runner, the env, the scorers or an agent.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from .record import EpisodeRecord

EPISODES = "episodes.jsonl"
FAILURES = "failures.jsonl"  # episodes a live model failed (not in EPISODES: a rerun retries them)
CONFIG = "config.json"


# ---- writing (the runner) ----------------------------------------------------------------------


def config_key(config: dict) -> str:
    """The folder name of a run: a hash of the configuration that affects results."""
    blob = json.dumps(jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def open_run(out: str | os.PathLike, config: dict) -> Path:
    """Create (or reopen) the folder of ``config`` under ``out``; returns its path."""
    folder = Path(out) / config_key(config)
    (folder / "episodes").mkdir(parents=True, exist_ok=True)
    (folder / CONFIG).write_text(json.dumps(config, indent=1, sort_keys=True))
    return folder


def record_stem(scene_id: str, seed: int) -> str:
    """Where an episode's record goes, relative to the run folder."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in scene_id)
    return f"episodes/{safe}.s{seed}"


def append_line(log, line: dict) -> None:
    """One finished episode into an open ``episodes.jsonl``, flushed at once (SPEC 9)."""
    log.write(json.dumps(line) + "\n")
    log.flush()


def note_failure(folder: str | os.PathLike, scene_id: str, seed: int, error: BaseException) -> None:
    with open(Path(folder) / FAILURES, "a", encoding="utf-8") as f:
        f.write(json.dumps({"scene_id": scene_id, "seed": seed, "error": f"{type(error).__name__}: {error}"}) + "\n")


# ---- reading -------------------------------------------------------------------------------------


def read_config(folder: str | os.PathLike) -> dict | None:
    """A run folder's ``config.json``, or ``None`` when it is missing or unreadable."""
    try:
        return json.loads((Path(folder) / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_episodes(folder: str | os.PathLike, repair: bool = False) -> list[dict]:
    """The finished episodes of a run folder. A torn last line (a run killed mid-write, or one
    being written right now) is ignored. ``repair`` (the runner, before it appends): also cut that
    tail from the file so that appending goes on cleanly. Readers never change the file: a report
    taken while a run is writing must not cut the line it is in the middle of."""
    path = Path(folder) / EPISODES
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    raws = text.splitlines(keepends=True)
    lines, good = [], 0
    for i, raw in enumerate(raws):
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            if i < len(raws) - 1:
                raise ValueError(f"{path}: line {i + 1} is not JSON; fix or remove it (the other lines are intact)") from None
            break
        good += len(raw.encode("utf-8"))
    if repair and (good != len(text.encode("utf-8")) or (text and not text.endswith("\n"))):
        with open(path, "r+b") as f:  # drop the torn tail, keep every complete line
            f.truncate(good)
            if good and not text.encode("utf-8")[:good].endswith(b"\n"):
                f.seek(good)
                f.write(b"\n")
    return lines


def read_run(folder: str | os.PathLike) -> list[dict]:
    """``read_episodes`` for a folder that must be a run folder (a clear error otherwise)."""
    folder = Path(folder)
    if not (folder / EPISODES).is_file():
        raise FileNotFoundError(f"{folder}: no {EPISODES} here (not a run folder)")
    return read_episodes(folder)


def load_records(folder: str | os.PathLike) -> list[EpisodeRecord]:
    folder = Path(folder)
    return [EpisodeRecord.load(folder / line["record"]) for line in read_episodes(folder)]


def load_for_scoring(stem: str | os.PathLike) -> EpisodeRecord:
    """An EpisodeRecord from its saved files without the microphone track (scoring never reads it)."""
    import soundfile as sf

    stem = Path(str(stem).removesuffix(".json"))
    meta = json.loads(Path(str(stem) + ".json").read_text())
    audio, _ = sf.read(str(stem) + ".flac", dtype="float32")
    return EpisodeRecord.from_meta(meta, audio)


def jsonable(x):
    """Plain JSON values: numpy scalars to Python numbers, NaN to null, keys to strings."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, float) and x != x:
        return None
    return x
