"""In-process LRU caches (per process: each worker of an async vector env has its own)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

import numpy as np


class LRU:
    """A small thread-safe LRU bounded by item count and/or total bytes."""

    def __init__(self, max_items: int | None = None, max_bytes: int | None = None):
        self.max_items, self.max_bytes = max_items, max_bytes
        self._d: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key):
        with self._lock:
            item = self._d.get(key)
            if item is None:
                self.misses += 1
                return None
            self._d.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key, value, nbytes: int = 0) -> None:
        with self._lock:
            if key in self._d:
                self._bytes -= self._d.pop(key)[1]
            if self.max_bytes is not None and nbytes > self.max_bytes:
                return
            self._d[key] = (value, nbytes)
            self._bytes += nbytes
            self._evict()

    def _evict(self) -> None:
        while self._d and (
            (self.max_items is not None and len(self._d) > self.max_items)
            or (self.max_bytes is not None and self._bytes > self.max_bytes)
        ):
            self._bytes -= self._d.popitem(last=False)[1][1]

    def resize(self, max_items: int | None = None, max_bytes: int | None = None) -> None:
        with self._lock:
            self.max_items, self.max_bytes = max_items, max_bytes
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._d)

    @property
    def nbytes(self) -> int:
        return self._bytes


def array_digest(x: np.ndarray) -> str:
    """Hash of an array's dtype, shape and bytes."""
    x = np.ascontiguousarray(x)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{x.dtype.str}{x.shape}".encode())
    h.update(memoryview(x).cast("B"))
    return h.hexdigest()


def frozen(x: np.ndarray) -> np.ndarray:
    """Mark an array read-only (cached arrays are shared)."""
    x.setflags(write=False)
    return x


# RoomSim by room key, bounded by their impulse responses' bytes (about 0.4 MB in the office):
# a whole test split's rooms (a few hundred) stay in memory for a second pass.
ROOMS = LRU(max_items=1024, max_bytes=192 * 2**20)
CALIBRATION = LRU(max_items=256)  # absorption by (size, rt60, order, probe geometry)
AUDIO = LRU(max_bytes=512 * 2**20)  # convolved clips and noise, bounded by bytes
IRS = LRU(max_bytes=256 * 2**20)  # simulated impulse responses by geometry (not noise, SNR or echo gain)


def clear_caches() -> None:
    """Empty every room cache of this process."""
    for c in (ROOMS, CALIBRATION, AUDIO, IRS):
        c.clear()


def set_audio_cache_bytes(max_bytes: int) -> None:
    """Bound the convolved-clip and noise cache (default 512 MiB per process)."""
    AUDIO.resize(max_bytes=int(max_bytes))
