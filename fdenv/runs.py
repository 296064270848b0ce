"""Run folders (SPEC 9): where a run's lines and records go, and how they are read back.

A run folder is ``<out>/<key>/`` where ``key`` hashes the configuration that affects results. It
holds ``config.json``, ``episodes.jsonl`` (one line per finished episode, flushed as it ends),
``failures.jsonl`` (episodes an agent failed; a rerun retries them) and
``episodes/<scene>-<hash>.s<seed>.{json,flac}`` (the EpisodeRecords). The runner writes them
through this module, holding the folder's lock (``locked``); scoring, summaries, reports and plots
read them through it. It knows records, never the runner, the env, the scorers or an agent.
An episode copied from a sibling folder (the same run but for the agent's knobs, when the agent
vouches that it plays it exactly so: ``fdenv.run.run``'s ``reuse_alike``) keeps its line and
files, its line naming that folder under ``adopted_from``.

Reading checks every line: a line that is not a JSON object with ``scene_id`` (text), ``seed``
(integer) and ``record`` (a path inside the folder), or that repeats an episode, raises
``RunFolderError`` naming the file, the line and the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from glob import escape as glob_escape
from pathlib import Path

import numpy as np

from .errors import RunFolderError, RunLockedError
from .record import EpisodeRecord

EPISODES = "episodes.jsonl"
FAILURES = "failures.jsonl"  # episodes a live model failed (not in EPISODES: a rerun retries them)
CONFIG = "config.json"
LOCK = ".lock"  # flock'ed by the runner that writes the folder; holds that runner's pid and host


# ---- writing (the runner) ----------------------------------------------------------------------


def config_key(config: dict) -> str:
    """The folder name of a run: a hash of the configuration that affects results."""
    blob = json.dumps(jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def open_run(out: str | os.PathLike, config: dict) -> Path:
    """Create (or reopen) the folder of ``config`` under ``out``; returns its path."""
    folder = Path(out) / config_key(config)
    (folder / "episodes").mkdir(parents=True, exist_ok=True)
    path = folder / CONFIG
    if not path.is_file():  # same key, same config: never rewritten (a finished read-only folder reruns)
        tmp = folder / f".{CONFIG}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(config, indent=1, sort_keys=True))
        os.replace(tmp, path)
    return folder


def record_stem(scene_id: str, seed: int) -> str:
    """Where an episode's record goes, relative to the run folder: a readable prefix of the scene
    id and a hash of all of it, so that ids a file name would merge ("demo x", "demo/x") never
    share a file."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in scene_id)[:48].strip("._") or "scene"
    digest = hashlib.sha256(scene_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"episodes/{safe}-{digest}.s{seed}"


def record_exists(folder: str | os.PathLike, line: dict) -> bool:
    stem = Path(folder) / line["record"]
    return Path(str(stem) + ".json").is_file() and Path(str(stem) + ".flac").is_file()


@contextmanager
def locked(folder: str | os.PathLike, wait: bool = True, notice=None):
    """Hold the run folder's OS lock (``flock`` on ``.lock``) while writing it. The kernel releases
    it when the holder exits or is killed, so a crashed run never leaves the folder locked.
    Another holder: wait for it (``notice`` is told who it is) or, with ``wait=False``, raise
    ``RunLockedError`` naming it. Yields False in a folder that cannot be written (nothing to
    lock: the caller must not write there)."""
    import fcntl
    import socket
    import time

    path = Path(folder) / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only folder: no writer can be in it
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if not wait:
                raise RunLockedError(f"{folder}: another runner is writing this run folder ({holder}); wait for it to "
                                     "finish or stop it (its finished episodes are kept), then run again") from None
            if notice is not None:
                notice(f"{folder}: waiting for the runner that holds it ({holder})")
            fcntl.flock(fd, fcntl.LOCK_EX)
        me = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%d %H:%M:%S")})
        os.ftruncate(fd, 0)
        os.pwrite(fd, me.encode(), 0)
        yield True
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {info['pid']} on {info['host']} since {info['since']}"
    except (ValueError, KeyError, TypeError, OSError):
        return "a runner that has not written its name yet"


def drop_lines(folder: str | os.PathLike, keep: list[dict]) -> None:
    """Rewrite ``episodes.jsonl`` with only ``keep`` (the runner, under the lock: episodes whose
    record file is missing are dropped, then done again)."""
    path = Path(folder) / EPISODES
    tmp = path.with_name(f".{EPISODES}.{os.getpid()}.tmp")
    tmp.write_text("".join(json.dumps(line) + "\n" for line in keep), encoding="utf-8")
    os.replace(tmp, path)


def append_line(log, line: dict) -> None:
    """One finished episode into an open ``episodes.jsonl``, flushed at once (SPEC 9)."""
    log.write(json.dumps(line) + "\n")
    log.flush()


def sibling_runs(folder: str | os.PathLike, config: dict) -> list[tuple[Path, dict]]:
    """The other run folders beside ``folder`` whose configuration is ``config`` but for the
    agent's knobs (same agent name, env, scenes, scoring, versions and source digests): each as
    (folder, its agent configuration). Folders without a readable ``config.json`` are skipped."""
    folder = Path(folder)
    rest = {k: v for k, v in config.items() if k != "agent"}
    out = []
    for other in sorted(p for p in folder.parent.iterdir() if p.is_dir() and p != folder):
        theirs = read_config(other)
        if not isinstance(theirs, dict) or not isinstance(theirs.get("agent"), dict):
            continue
        if {k: v for k, v in theirs.items() if k != "agent"} == rest \
                and theirs["agent"].get("name") == config["agent"].get("name"):
            out.append((other, theirs["agent"]))
    return out


ADOPTED_FROM = "adopted_from"  # a line copied from a sibling run folder names that folder


def adopt_episode(source: str | os.PathLike, line: dict, folder: str | os.PathLike, log) -> None:
    """Copy one finished episode (its record files, then its line, marked ``adopted_from``) from
    the run folder ``source`` into ``folder`` (the runner, under ``folder``'s lock, with
    ``episodes.jsonl`` open as ``log``). The caller vouches that this
    folder's agent plays the episode exactly so."""
    import shutil

    source, folder = Path(source), Path(folder)
    stem = source / line["record"]
    target = (folder / line["record"]).parent
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(stem.parent.glob(glob_escape(stem.name) + ".*")):  # .json, .flac, .mic0.flac
        shutil.copyfile(path, target / path.name)
    append_line(log, {**line, ADOPTED_FROM: source.name})


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
    data = path.read_bytes()
    raws = data.splitlines(keepends=True)
    lines, good, seen = [], 0, {}
    for i, raw in enumerate(raws):
        try:
            line = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            if i == len(raws) - 1 and not raw.endswith(b"\n"):
                break  # the torn tail of a line being (or killed while being) written
            raise RunFolderError(f"{path}: line {i + 1} is not a JSON line; remove it and rerun to do that episode "
                                 "again (the other lines are intact)") from None
        problem = _line_problem(line)
        if problem:
            raise RunFolderError(f"{path}: line {i + 1}: {problem}; remove the line and rerun to do that episode again")
        key = (line["scene_id"], line["seed"])
        if key in seen:
            raise RunFolderError(f"{path}: line {i + 1} repeats the episode of line {seen[key]} (scene "
                                 f"{line['scene_id'][:80]!r}, seed {line['seed']}); remove one of the two lines")
        seen[key] = i + 1
        lines.append(line)
        good += len(raw)
    if repair and (good != len(data) or (data and not data.endswith(b"\n"))):
        with open(path, "r+b") as f:  # drop the torn tail, keep every complete line
            f.truncate(good)
            if good and not data[:good].endswith(b"\n"):
                f.seek(good)
                f.write(b"\n")
    return lines


def _line_problem(line) -> str | None:
    """What is wrong with the shape of one episodes.jsonl line, or None."""
    if not isinstance(line, dict):
        return f"expected a JSON object (one episode), got {type(line).__name__}"
    if not isinstance(line.get("scene_id"), str):
        return "scene_id: missing or not text"
    seed = line.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int):
        return "seed: missing or not an integer"
    rec = line.get("record")
    if not isinstance(rec, str) or not rec or rec.startswith(("/", "\\")) or ".." in Path(rec).parts:
        return "record: missing, or not a path inside the run folder"
    return None


def read_run(folder: str | os.PathLike) -> list[dict]:
    """``read_episodes`` for a folder that must be a run folder (a clear error otherwise)."""
    folder = Path(folder)
    if not (folder / EPISODES).is_file():
        raise FileNotFoundError(f"{folder}: no {EPISODES} here (not a run folder)")
    return read_episodes(folder)


def load_records(folder: str | os.PathLike, limit: int | None = None) -> list[EpisodeRecord]:
    """The records of a run folder's episodes, in order; only the first ``limit`` are loaded."""
    folder = Path(folder)
    lines = read_episodes(folder)[:limit]
    missing = next((ln for ln in lines if not record_exists(folder, ln)), None)
    if missing is not None:
        raise RunFolderError(f"{folder / missing['record']}.json/.flac: the record of scene {missing['scene_id'][:80]!r}, "
                             f"seed {missing['seed']} is missing; rerun the same command to do that episode again")
    return [EpisodeRecord.load(folder / line["record"]) for line in lines]


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
