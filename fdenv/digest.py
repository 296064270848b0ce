"""Digests that key run folders, so that a run is reused only when nothing that can change its
results has changed: fdenv's own source, the agent's source (its package, or its module) and
any file its configuration names (weights, checkpoints).

Files are hashed by content; a folder named in a configuration (a local model) by its file
names, sizes and modification times, which is cheap for gigabyte models.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
from pathlib import Path

SKIP_DIRS = {"__pycache__", ".git", ".pytest_cache"}


def tree_digest(root: str | os.PathLike) -> str:
    """sha256 of every file under ``root`` (relative names and contents), or of ``root`` itself."""
    root = Path(root)
    h = hashlib.sha256()
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file()
                                                 and not SKIP_DIRS.intersection(p.relative_to(root).parts))
    for p in files:
        if p.suffix == ".pyc":
            continue
        h.update(str(p.relative_to(root) if p != root else p.name).encode() + b"\0")
        h.update(_file_digest(str(p), *_stamp(p)).encode())
    return h.hexdigest()[:16]


def _stamp(p: Path) -> tuple[int, int]:
    st = p.stat()
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=4096)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:  # size and mtime: a changed file is read anew
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fdenv_digest() -> str:
    """fdenv's own source (the package folder, with its presets, prompts and shipped checkpoint)."""
    return tree_digest(Path(__file__).resolve().parent)


def agent_source(agent) -> Path | None:
    """The file or folder whose source makes the agent: its top-level package's folder, or its own
    module file (``None`` for a class without a file, one typed into a console)."""
    cls = type(getattr(agent, "inner", None) or agent)  # agent=python wraps the user's class
    try:
        path = Path(inspect.getfile(cls)).resolve()
    except (TypeError, OSError):
        return None
    top = sys.modules.get(cls.__module__.split(".")[0])
    top_file = getattr(top, "__file__", None)
    if top is not None and hasattr(top, "__path__") and top_file:
        return Path(top_file).resolve().parent
    return path


def agent_digest(agent, config: dict) -> dict:
    """``{"source": digest, "files": {name: digest}}``: the agent's source and every existing file
    or folder that its configuration names (weights, checkpoints, local models)."""
    source = agent_source(agent)
    files = {}
    for value in _strings(config):
        try:  # most strings are not paths (texts, names): only existing files and folders count
            p = Path(value).expanduser()
            if p.is_file():
                files[value] = tree_digest(p)
            elif value not in (".", "") and p.is_dir() and p.resolve() != Path.cwd().resolve():
                files[value] = _folder_stamp(p)
        except (OSError, ValueError):  # a name too long for the file system, a NUL byte
            continue
    return {"source": tree_digest(source) if source is not None and source.exists() else None, "files": files}


def _folder_stamp(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(q for q in root.rglob("*") if q.is_file()):
        size, mtime = _stamp(p)
        h.update(f"{p.relative_to(root)}\0{size}\0{mtime}\n".encode())
    return "stat:" + h.hexdigest()[:16]


def _strings(x):
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _strings(v)


def scenes_digest(scenes) -> str:
    """The scenes' own content (texts, speakers, labels): an edited scene file is a new run."""
    import json

    h = hashlib.sha256()
    for s in scenes:
        h.update(json.dumps(s.to_dict(), sort_keys=True, default=str).encode() + b"\n")
    return h.hexdigest()[:16]


def run_digests(agent, agent_config: dict, scenes) -> dict:
    """What a run key covers besides the configuration: fdenv's source, the agent's source and
    files, and the scenes' content."""
    return {"fdenv": fdenv_digest(), "agent": agent_digest(agent, agent_config), "scenes": scenes_digest(scenes)}
