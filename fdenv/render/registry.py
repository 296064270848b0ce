"""Back ends by name."""

from __future__ import annotations

from ..errors import short
from .base import TTSBackend, UnknownBackendError

BACKENDS = ("espeak", "kokoro")


def get_backend(name: str, **options) -> TTSBackend:
    """A new back end. Cheap: native libraries and models load on the first synthesis."""
    if name == "espeak":
        from .espeak import EspeakBackend

        return EspeakBackend(**options)
    if name == "kokoro":
        from .kokoro import KokoroBackend

        return KokoroBackend(**options)
    raise UnknownBackendError(f"unknown TTS back end {short(name)}; valid back ends: {', '.join(BACKENDS)}")
