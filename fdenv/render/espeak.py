"""espeak-ng back end: libespeak-ng through ctypes, synthesised in memory.

The library comes from the ``espeakng-loader`` wheel (library + data), else from a system
``libespeak-ng``. libespeak-ng keeps process-global state (one voice, one set of parameters, one
callback, and synthesis state no call resets), so every call holds one module lock, and each
synthesis runs on a freshly loaded private copy of the library (see ``_Engine``): clips are
bit-identical whatever was rendered before, in any process. Nothing native is touched at import;
``EspeakBackend`` objects hold no native state and pickle freely.
"""

from __future__ import annotations

import _ctypes
import ctypes
import ctypes.util
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
import warnings
from dataclasses import dataclass

import numpy as np

from .base import BackendUnavailableError, TTSError, check_text, check_voice
from .cache import default_cache_dir

# espeak_AUDIO_OUTPUT, espeak_PARAMETER, espeak_POSITION_TYPE and flags (speak_lib.h).
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_RATE, _VOLUME, _PITCH, _RANGE = 1, 2, 3, 4
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_EE_OK = 0
_BUFFER_MS = 200
_RAND_SEED = 1

_INSTALL_HINT = "pip install espeakng-loader (or: apt install libespeak-ng1)"


@dataclass(frozen=True)
class VoiceSpec:
    """One fdenv voice: an espeak-ng language voice, a variant, and prosody parameters."""

    language: str  # espeak-ng voice file: en (British), en-us, en-gb-scotland, ...
    variant: str  # espeak-ng variant file in voices/!v: m1..m8, f1..f5
    pitch: int  # espeakPITCH, 0..100 (50 = the variant's own base)
    range: int  # espeakRANGE, 0..100 (intonation range)
    rate: int  # espeakRATE, words per minute


# The stable voice list. Names say accent + variant; order is part of the voice map's contract,
# so append new voices at the end, never reorder. Each differs from every other in at least two of
# F0, formants (variant) and rate.
VOICES: dict[str, VoiceSpec] = {
    "en-us+m3": VoiceSpec("en-us", "m3", 50, 55, 165),
    "en-gb+f2": VoiceSpec("en", "f2", 40, 60, 160),
    "en-us+f4": VoiceSpec("en-us", "f4", 70, 50, 170),
    "en-gb-scotland+m1": VoiceSpec("en-gb-scotland", "m1", 25, 45, 155),
    "en-gb-x-rp+m6": VoiceSpec("en-gb-x-rp", "m6", 65, 60, 175),
    "en-us+f1": VoiceSpec("en-us", "f1", 30, 55, 150),
    "en-us+m8": VoiceSpec("en-us", "m8", 55, 40, 165),
    "en-gb+f5": VoiceSpec("en", "f5", 75, 60, 170),
}

_VOICE_TABLE_ID = hashlib.sha256(
    json.dumps({k: v.__dict__ for k, v in VOICES.items()}, sort_keys=True).encode()
).hexdigest()[:10]

_EVENT_LIST_TERMINATED, _EVENT_WORD = 0, 1


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    """espeak_EVENT (speak_lib.h): a word event gives the word's character position in the text
    (1-based) and its start in the audio (ms)."""

    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", _EventId)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


class _Engine:
    """This process's espeak-ng (one per process, created on first use; call with ``_lock`` held).

    libespeak-ng keeps synthesis state in C statics that no API call resets (the pitch-flutter
    phase, the wave generator's cycle phase, the echo buffer), so a clip would depend on what was
    said before it, and it seeds its noise generator from the clock. For bit-identical clips every
    synthesis runs on a freshly loaded library, seeded with a constant: a private copy of the
    shared object (so no other loader in the process pins it) is opened, initialised, used and
    closed again. That costs about 2 ms a clip. (Libraries older than espeak-ng 1.52 have no seed
    call: their breathy voices vary slightly from run to run.)
    """

    def __init__(self) -> None:
        src, self.data_path = _find_library()
        self.lib_path, self.reload = _private_copy(src)
        self._chunks: list[np.ndarray] = []
        self._words: list[tuple[int, int]] = []  # (character position, audio position in ms)
        self._callback = _CALLBACK(self._collect)  # keep a reference: the library holds the pointer
        self._lib = None
        lib = self._open()
        self.library_version = (lib.espeak_Info(None) or b"?").decode()
        self._close()

    def _open(self) -> ctypes.CDLL:
        if self._lib is not None:
            return self._lib
        try:
            lib = ctypes.CDLL(self.lib_path)
        except OSError as e:
            raise BackendUnavailableError(f"cannot load libespeak-ng from {self.lib_path}: {e}; {_INSTALL_HINT}") from e
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetSynthCallback.argtypes = [_CALLBACK]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
            ctypes.c_uint, ctypes.POINTER(ctypes.c_uint), ctypes.c_void_p,
        ]
        lib.espeak_Synchronize.restype = ctypes.c_int
        lib.espeak_Terminate.restype = ctypes.c_int
        lib.espeak_Info.restype = ctypes.c_char_p
        lib.espeak_Info.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
        path = self.data_path.encode() if self.data_path else None
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, _BUFFER_MS, path, _INITIALIZE_DONT_EXIT)
        if rate <= 0:
            raise BackendUnavailableError(
                f"libespeak-ng failed to initialise (data path {self.data_path!r}); {_INSTALL_HINT}"
            )
        self.sample_rate = int(rate)
        # espeak_Initialize seeds the noise generator (breathy voices) from the clock.
        if hasattr(lib, "espeak_ng_SetRandSeed"):
            lib.espeak_ng_SetRandSeed.restype = None
            lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
            lib.espeak_ng_SetRandSeed(_RAND_SEED)
        lib.espeak_SetSynthCallback(self._callback)
        self._lib = lib
        return lib

    def _close(self) -> None:
        if self.reload and self._lib is not None:
            self._lib.espeak_Terminate()
            _ctypes.dlclose(self._lib._handle)
            self._lib = None

    def _collect(self, wav, n, events) -> int:
        if n > 0 and wav:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        if events:
            i = 0
            while events[i].type != _EVENT_LIST_TERMINATED:
                if events[i].type == _EVENT_WORD:
                    self._words.append((events[i].text_position, events[i].audio_position))
                i += 1
        return 0

    def synthesize(self, text: str, spec: VoiceSpec) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The audio and the word events: (character position, 1-based; start in ms)."""
        lib = self._open()
        try:
            name = f"{spec.language}+{spec.variant}"
            if lib.espeak_SetVoiceByName(name.encode()) != _EE_OK:
                raise TTSError(f"espeak-ng has no voice {name!r} (is its data complete?)")
            for param, value in ((_RATE, spec.rate), (_PITCH, spec.pitch), (_RANGE, spec.range), (_VOLUME, 100)):
                lib.espeak_SetParameter(param, value, 0)
            data = text.encode("utf-8")
            self._chunks, self._words = [], []
            err = lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
            if err != _EE_OK:
                raise TTSError(f"espeak_Synth failed with code {err}")
            lib.espeak_Synchronize()
            chunks, self._chunks = self._chunks, []
            words, self._words = self._words, []
        finally:
            self._close()
        if not chunks:
            return np.zeros(0, np.float32), words
        return np.concatenate(chunks).astype(np.float32) / 32768.0, words


def words_from_events(pieces: list[str], events: list[tuple[int, int]], sr: int, n: int) -> list[list[tuple[int, int]]]:
    """(start, end) samples of each whitespace word of each piece (joined by one space), from word
    events (character position, 1-based; ms). A word espeak-ng gave no event of its own (a lone
    dash, say) starts where the word before it ends."""
    spans, pos = [], 0  # (piece, character start, character end) of every word
    for i, piece in enumerate(pieces):
        for m in re.finditer(r"\S+", piece):
            spans.append((i, pos + m.start(), pos + m.end()))
        pos += len(piece) + 1
    starts: list[int | None] = [None] * len(spans)
    for char, ms in events:
        c = char - 1
        for k, (_, a, b) in enumerate(spans):
            if a <= c < b:
                if starts[k] is None:
                    starts[k] = min(n, int(round(ms * sr / 1000)))
                break
    last = 0
    for k in range(len(starts)):
        starts[k] = last = max(last, starts[k] if starts[k] is not None else last)
    out: list[list[tuple[int, int]]] = [[] for _ in pieces]
    for k, (i, _, _) in enumerate(spans):
        end = starts[k + 1] if k + 1 < len(spans) else n
        out[i].append((starts[k], max(starts[k], end)))
    return out


def _find_library() -> tuple[str, str | None]:
    """(shared object path, data path): the espeakng-loader wheel first, then the system library."""
    errors = []
    try:
        import espeakng_loader

        path = espeakng_loader.get_library_path()
        if os.path.exists(path):
            return path, espeakng_loader.get_data_path()
        errors.append(f"espeakng-loader: no library at {path}")
    except ImportError as e:
        errors.append(f"espeakng-loader not installed ({e})")
    except (OSError, RuntimeError) as e:
        errors.append(f"espeakng-loader: {e}")
    for cand in (ctypes.util.find_library("espeak-ng"), "libespeak-ng.so.1", "libespeak-ng.so"):
        if not cand:
            continue
        try:
            lib = ctypes.CDLL(cand)
        except OSError as e:
            errors.append(f"{cand}: {e}")
            continue
        path = _mapped_path("libespeak-ng") or cand
        _ctypes.dlclose(lib._handle)
        return path, None
    raise BackendUnavailableError(
        f"cannot load libespeak-ng ({'; '.join(errors) or 'not found'}); {_INSTALL_HINT}"
    )


def _mapped_path(fragment: str) -> str | None:
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and fragment in os.path.basename(parts[5].strip()):
                    return parts[5].strip()
    except OSError:
        pass
    return None


def _private_copy(src: str) -> tuple[str, bool]:
    """(path to load, reload per clip?): a content-named copy of ``src`` that only fdenv loads."""
    if not os.path.isabs(src):
        return src, False
    try:
        st = os.stat(src)
        tag = hashlib.sha256(f"{os.path.realpath(src)}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]
    except OSError:
        return src, False
    dirs = [os.path.join(tempfile.gettempdir(), f"fdenv-espeak-{os.getuid() if hasattr(os, 'getuid') else 0}")]
    dirs.append(str(default_cache_dir() / "lib"))
    for d in dirs:
        dst = os.path.join(d, f"libespeak-ng-{tag}{os.path.splitext(src)[1] or '.so'}")
        try:
            if not (os.path.exists(dst) and os.path.getsize(dst) == st.st_size):
                os.makedirs(d, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
                os.close(fd)
                shutil.copyfile(src, tmp)
                os.replace(tmp, dst)
            _ctypes.dlclose(ctypes.CDLL(dst)._handle)  # loadable from there (not a noexec mount)?
            return dst, True
        except OSError:
            continue
    warnings.warn("fdenv: cannot make a private copy of libespeak-ng; espeak clips may vary from run to run")
    return src, False


_lock = threading.Lock()
_engine: _Engine | None = None


def _reset_in_child() -> None:
    # A fork taken while another thread synthesised copies a held lock and an open library into
    # the child: start the child clean.
    global _lock
    _lock = threading.Lock()
    if _engine is not None and _engine._lib is not None and _engine.reload:
        try:
            _ctypes.dlclose(_engine._lib._handle)
        except OSError:
            pass
        _engine._lib = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)


def _get_engine() -> _Engine:
    """This process's engine; call with ``_lock`` held."""
    global _engine
    if _engine is None:
        _engine = _Engine()
    return _engine


class EspeakBackend:
    """espeak-ng voices (see ``VOICES``), 22050 Hz native."""

    name = "espeak"

    def __init__(self) -> None:
        self._version: str | None = None

    @property
    def sample_rate(self) -> int:
        with _lock:
            return _get_engine().sample_rate

    @property
    def version(self) -> str:
        if self._version is None:
            with _lock:
                lib_version = _get_engine().library_version
            self._version = f"espeak-ng {lib_version}; voices {_VOICE_TABLE_ID}"
        return self._version

    def voices(self) -> tuple[str, ...]:
        return tuple(VOICES)

    def synthesize(self, text: str, voice: str) -> np.ndarray:
        return self.synthesize_words([text], voice)[0]

    def synthesize_words(self, pieces: list[str], voice: str) -> tuple[np.ndarray, list[list[tuple[int, int]]]]:
        """The pieces as one utterance, and (start, end) samples of every word (``piece.split()``)
        from espeak-ng's word events: a word ends where the next one starts (the last: at the end)."""
        check_voice(voice, self.voices(), self.name)
        pieces = [check_text(p) for p in pieces]
        text = " ".join(pieces)
        with _lock:
            engine = _get_engine()
            audio, events = engine.synthesize(text, VOICES[voice])
            sr = engine.sample_rate
        return audio, words_from_events(pieces, events, sr, len(audio))

    def __repr__(self) -> str:
        return "EspeakBackend()"
