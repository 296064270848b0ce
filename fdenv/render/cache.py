"""Content-addressed clip cache: an in-process LRU over an on-disk store of sealed files.

The key is the sha256 of everything that determines a clip's samples, so one memory tier serves
every ``ClipCache`` of the process (bounded by ``MEMORY_BYTES``). Files live under
``<cache dir>/clips/<2 hex>/<key>.clip`` (a clip's word times: ``<key>.words``) and are written atomically (temporary file + rename), so
several processes may share one directory. Each file is sealed with its key and a digest of its
samples (``fdenv.sealed``): a changed, torn or misplaced file is discarded with a warning and the
clip rendered again. The cache directory is the ``cache_dir`` argument,
else ``$FDENV_CACHE_DIR``, else ``~/.cache/fdenv``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..sealed import load_array, save_array

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


def _check_clip(audio: np.ndarray) -> str | None:
    if audio.dtype != np.float32 or audio.ndim != 1:
        return f"expected float32 samples (n,), found {audio.dtype} {audio.shape}"
    if not np.isfinite(audio).all():
        return "holds NaN or inf samples"
    return None


class ClipCache:
    """``get``/``put`` float32 clips by key: the process's memory tier, then ``<root>/clips``."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()
        self._warned = False

    @property
    def clip_dir(self) -> Path:
        return self.root / "clips"

    def path(self, key: str, kind: str = "clip") -> Path:
        """A clip's file (``kind="clip"``), or its word times' (``kind="words"``)."""
        return self.clip_dir / key[:2] / f"{key}.{kind}"

    def get(self, key: str, kind: str = "clip") -> np.ndarray | None:
        """The cached clip or word times (read-only, shared: copy before changing it), or None."""
        hit = _memory.get(f"{kind}:{key}")
        if hit is not None:
            return hit
        audio = load_array(self.path(key, kind), key, _check_clip)
        if audio is None:
            return None
        _memory.put(f"{kind}:{key}", audio)
        return audio

    def put(self, key: str, audio: np.ndarray, kind: str = "clip") -> None:
        audio = np.array(audio, np.float32, copy=True, order="C")
        _memory.put(f"{kind}:{key}", audio)
        if not save_array(self.path(key, kind), key, audio) and not self._warned:
            warnings.warn(f"fdenv clip cache: cannot write under {self.clip_dir}; clips stay in memory only")
            self._warned = True

    @staticmethod
    def clear_memory() -> None:
        """Empty the process's memory tier (all ``ClipCache`` objects share it)."""
        _memory.clear()

    def __repr__(self) -> str:
        return f"ClipCache({str(self.root)!r})"
