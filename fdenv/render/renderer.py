"""``Renderer``: text + voice -> a trimmed, level-normalised clip at the env's rate, cached."""

from __future__ import annotations

import os

import numpy as np

from .base import TTSBackend, TTSError, check_text, check_voice
from .cache import ClipCache, clip_key
from .process import PROCESSING_VERSION, process
from .registry import get_backend


class Renderer:
    """Renders clips with one back end at one sample rate.

    ``backend`` is a name (``"espeak"``, ``"kokoro"``) or a back-end object. Clips are cached in
    memory and on disk (``cache_dir``, else ``$FDENV_CACHE_DIR``, else ``~/.cache/fdenv``).
    Picklable; native state is created again, lazily, in the receiving process.
    """

    def __init__(
        self,
        backend: str | TTSBackend = "espeak",
        sample_rate: int = 16000,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        self.backend = get_backend(backend) if isinstance(backend, str) else backend
        if int(sample_rate) != sample_rate or not 8000 <= sample_rate <= 192000:
            raise ValueError(f"sample_rate must be an integer in [8000, 192000], got {sample_rate!r}")
        self.sample_rate = int(sample_rate)
        self.cache = ClipCache(cache_dir)
        self.synth_calls = 0  # back-end syntheses made by this instance (cache misses)

    @property
    def backend_name(self) -> str:
        return self.backend.name

    @property
    def version(self) -> str:
        """Back-end version and processing version, for records."""
        return f"{self.backend.version}; processing {PROCESSING_VERSION}"

    @property
    def voices(self) -> tuple[str, ...]:
        return tuple(self.backend.voices())

    def key(self, text: str, voice: str) -> str:
        return clip_key(
            self.backend.name, self.backend.version, voice, check_text(text), self.sample_rate, PROCESSING_VERSION
        )

    def clip(self, text: str, voice: str) -> np.ndarray:
        """float32 mono at ``sample_rate``, trimmed to its voiced part, active level -23 dBFS."""
        check_voice(voice, self.voices, self.backend.name)
        text = check_text(text)
        key = self.key(text, voice)
        audio = self.cache.get(key)
        if audio is None:
            native = self.backend.synthesize(text, voice)
            self.synth_calls += 1
            audio = process(native, self.backend.sample_rate, self.sample_rate)
            if len(audio) == 0:
                raise TTSError(f"{self.backend.name} voice {voice!r} produced no audible speech for {text!r}")
            self.cache.put(key, audio)
        return audio.copy()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["synth_calls"] = 0  # a count of this instance's work, not carried to copies
        return state

    def __repr__(self) -> str:
        return f"Renderer({self.backend.name!r}, sample_rate={self.sample_rate}, cache_dir={str(self.cache.root)!r})"
