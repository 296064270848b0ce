"""Cache entries sealed with a digest of their inputs and their contents.

Every on-disk cache (rendered clips, Silero probabilities, transcripts, judge verdicts) stores,
next to its value, the key it was computed for (the hash of its inputs) and a sha256 over that key
and the value. A reader that finds a file that does not parse, was computed for other inputs, was
changed after it was written, or holds a value its cache cannot use, discards it with a
``CacheWarning`` naming the file and the reason and returns ``None``, so the caller recomputes it.
Writes are atomic (temporary file + rename): several processes may share one cache directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

from .errors import CacheWarning

SEAL_VERSION = 1


def _digest(key: str, blob: bytes) -> str:
    return hashlib.sha256(f"fdenv-seal/{SEAL_VERSION}/{key}/".encode() + blob).hexdigest()


def _array_blob(a: np.ndarray) -> bytes:
    return f"{a.dtype.str}{a.shape}".encode() + np.ascontiguousarray(a).tobytes()


def _json_blob(payload) -> bytes:
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, allow_nan=False).encode("utf-8")


def discard(path: Path, why: str) -> None:
    warnings.warn(f"{path}: cache entry discarded ({why}); computing it again", CacheWarning, stacklevel=3)
    try:
        Path(path).unlink()
    except OSError:
        pass


def _write(path: Path, write: Callable) -> bool:
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# ---- JSON values (transcripts, verdicts) ---------------------------------------------------


def save_json(path: Path, key: str, payload, **extra) -> bool:
    """Write ``payload`` (JSON data) for inputs ``key``; ``extra`` fields are kept for people who
    read the file (model, prompt version...), outside the seal. False when the disk refused."""
    data = {**extra, "key": key, "sha256": _digest(key, _json_blob(payload)), "payload": payload}
    blob = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return _write(path, lambda f: f.write(blob))


def load_json(path: Path, key: str, check: Callable[[object], str | None] = lambda p: None):
    """The payload stored for ``key``, or None (missing, or discarded with a warning).
    ``check(payload)`` returns why a well-sealed value is still unusable, or None."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        discard(path, f"unreadable: {type(e).__name__}")
        return None
    why = None
    if not isinstance(data, dict) or not {"key", "sha256", "payload"} <= set(data):
        why = "no seal (written by an older fdenv, or not a cache file)"
    elif data["key"] != key:
        why = "computed for other inputs"
    else:
        try:
            if data["sha256"] != _digest(key, _json_blob(data["payload"])):
                why = "contents changed after it was written"
        except (TypeError, ValueError):
            why = "contents are not plain JSON"
        if why is None:
            why = check(data["payload"])
    if why is not None:
        discard(path, why)
        return None
    return data["payload"]


# ---- arrays (clips, probabilities) -----------------------------------------------------------
# A small raw format, read in one call: clips are loaded by the hundred when an env starts warm.
# "FDSEAL1\n", one JSON line (key, dtype, shape, crc32 over key, dtype, shape and samples), the bytes.
# CRC-32 rather than sha256 here: it catches torn and changed files at a sixth of the cost, and the
# key (itself a sha256 of the inputs) is compared exactly.

_MAGIC = b"FDSEAL1\n"


def _crc(key: str, a: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(a).data, zlib.crc32(f"{key}/{a.dtype.str}/{a.shape}".encode()))


def save_array(path: Path, key: str, array: np.ndarray) -> bool:
    a = np.ascontiguousarray(array)
    head = json.dumps({"key": key, "dtype": a.dtype.str, "shape": list(a.shape), "crc32": _crc(key, a)})
    return _write(path, lambda f: (f.write(_MAGIC + head.encode() + b"\n"), f.write(a.data)))


def load_array(path: Path, key: str, check: Callable[[np.ndarray], str | None] = lambda a: None):
    """The array stored for ``key`` (read-only), or None (missing, or discarded with a warning)."""
    path = Path(path)
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        discard(path, f"unreadable: {type(e).__name__}")
        return None
    why, a = None, None
    try:
        if not blob.startswith(_MAGIC):
            raise ValueError("no seal (written by an older fdenv, or not a cache file)")
        end = blob.index(b"\n", len(_MAGIC))
        head = json.loads(blob[len(_MAGIC):end])
        a = np.frombuffer(blob, dtype=np.dtype(head["dtype"]), offset=end + 1).reshape(head["shape"])
        if head["key"] != key:
            why = "computed for other inputs"
        elif head["crc32"] != _crc(key, a):
            why = "contents changed after it was written"
        else:
            why = check(a)
    except (ValueError, TypeError, KeyError) as e:  # torn, truncated, or not ours
        why = str(e) if "seal" in str(e) else f"unreadable: {type(e).__name__}"
    if why is not None:
        discard(path, why)
        return None
    return a
