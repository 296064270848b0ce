"""Content-addressed clip cache: an in-process LRU over an on-disk store of ``.npy`` files.

The key is the sha256 of everything that determines a clip's samples, so one memory tier serves
every ``ClipCache`` of the process (bounded by ``MEMORY_BYTES``). Files live under
``<cache dir>/clips/<2 hex>/<key>.npy`` and are written atomically (temporary file + rename), so
several processes may share one directory. The cache directory is the ``cache_dir`` argument,
else ``$FDENV_CACHE_DIR``, else ``~/.cache/fdenv``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections import OrderedDict
from pathlib import Path

import numpy as np

ENV_VAR = "FDENV_CACHE_DIR"
MEMORY_BYTES = 256 * 1024 * 1024


class _Memory:
    """A byte-bounded LRU of read-only clips, shared by the process."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._d: OrderedDict[str, np.ndarray] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> np.ndarray | None:
        with self._lock:
            hit = self._d.get(key)
            if hit is not None:
                self._d.move_to_end(key)
            return hit

    def put(self, key: str, audio: np.ndarray) -> None:
        audio.setflags(write=False)
        if audio.nbytes > self.max_bytes:
            return
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self._used -= old.nbytes
            self._d[key] = audio
            self._used += audio.nbytes
            while self._used > self.max_bytes:
                _, dropped = self._d.popitem(last=False)
                self._used -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._used = 0


_memory = _Memory(MEMORY_BYTES)


def default_cache_dir() -> Path:
    from ..paths import cache_dir  # the one definition of where fdenv caches live

    return cache_dir()


def clip_key(backend: str, version: str, voice: str, text: str, sample_rate: int, processing: str) -> str:
    blob = json.dumps(
        {"backend": backend, "version": version, "voice": voice, "text": text,
         "sample_rate": int(sample_rate), "processing": processing},
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ClipCache:
    """``get``/``put`` float32 clips by key: the process's memory tier, then ``<root>/clips``."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self._warned = False

    @property
    def clip_dir(self) -> Path:
        return self.root / "clips"

    def path(self, key: str) -> Path:
        return self.clip_dir / key[:2] / f"{key}.npy"

    def get(self, key: str) -> np.ndarray | None:
        """The cached clip (read-only, shared: copy before changing it), or None."""
        hit = _memory.get(key)
        if hit is not None:
            return hit
        try:
            audio = np.load(self.path(key), allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        if audio.dtype != np.float32 or audio.ndim != 1:
            return None
        _memory.put(key, audio)
        return audio

    def put(self, key: str, audio: np.ndarray) -> None:
        audio = np.array(audio, np.float32, copy=True, order="C")
        _memory.put(key, audio)
        path = self.path(key)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "wb") as f:
                np.save(f, audio, allow_pickle=False)
            os.replace(tmp, path)
            tmp = None
        except OSError as e:
            if not self._warned:
                warnings.warn(f"fdenv clip cache: cannot write under {self.clip_dir} ({e}); clips stay in memory only")
                self._warned = True
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    @staticmethod
    def clear_memory() -> None:
        """Empty the process's memory tier (all ``ClipCache`` objects share it)."""
        _memory.clear()

    def __repr__(self) -> str:
        return f"ClipCache({str(self.root)!r})"
