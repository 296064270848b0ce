"""The TTS back-end protocol and the errors of the render package.

A back end turns one piece of text into mono float32 audio at its native rate. It must be cheap to
construct and picklable: native state (libraries, model sessions) is created lazily on the first
``synthesize`` call and dropped on pickling, because environments are sent to worker processes.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import TTSError  # noqa: F401  (re-exported: the render package's base error)


class BackendUnavailableError(TTSError):
    """A back end's library or model is not installed."""


class UnknownBackendError(TTSError, ValueError):
    """No back end of that name."""


class UnknownVoiceError(TTSError, ValueError):
    """The back end has no voice of that name."""


class EmptyTextError(TTSError, ValueError):
    """Nothing to say."""


@runtime_checkable
class TTSBackend(Protocol):
    name: str

    @property
    def version(self) -> str:
        """Identifies everything that changes the audio (library, model, voice table)."""

    @property
    def sample_rate(self) -> int:
        """Native sample rate of ``synthesize``'s output."""

    def voices(self) -> tuple[str, ...]:
        """The stable, ordered list of voice names."""

    def synthesize(self, text: str, voice: str) -> np.ndarray:
        """float32 mono audio at ``sample_rate``; not trimmed, not normalised."""


def check_voice(voice: str, valid: tuple[str, ...], backend: str) -> None:
    if voice not in valid:
        raise UnknownVoiceError(
            f"unknown voice {voice!r} for TTS back end {backend!r}; valid voices: {', '.join(valid)}"
        )


def check_text(text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise EmptyTextError(f"cannot render empty text ({text!r})")
    return text.strip()
