"""Text-to-speech for scene clips (SPEC 2; DESIGN: TTS).

    from fdenv.render import Renderer, voice_map
    r = Renderer("espeak", sample_rate=16000)          # or "kokoro" (pip install -e '.[kokoro]')
    voices = voice_map(scene, r)                      # speaker -> voice, + "__duty__", "__assistant__"
    audio = r.clip("Shall we order pizza?", voices["Ben"])   # float32, trimmed, -23 dBFS active

Files: ``base`` (protocol, errors), ``espeak``/``kokoro`` (back ends), ``registry`` (by name),
``process`` (resample, trim, normalise), ``cache`` (clip cache), ``voices`` (voice map),
``renderer`` (``Renderer``).
"""

from .base import (
    BackendUnavailableError,
    EmptyTextError,
    TTSBackend,
    TTSError,
    UnknownBackendError,
    UnknownVoiceError,
)
from .registry import BACKENDS, get_backend
from .renderer import Renderer
from .voices import ASSISTANT, DUTY, turn_clips, voice_map

__all__ = [
    "ASSISTANT",
    "BACKENDS",
    "BackendUnavailableError",
    "DUTY",
    "EmptyTextError",
    "Renderer",
    "TTSBackend",
    "TTSError",
    "UnknownBackendError",
    "UnknownVoiceError",
    "get_backend",
    "turn_clips",
    "voice_map",
]
