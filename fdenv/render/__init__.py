"""Text-to-speech for scene clips (SPEC 2; DESIGN: TTS).

    from fdenv.render import Renderer, voice_map
    r = Renderer("espeak", sample_rate=16000)          # or "kokoro" (pip install -e '.[kokoro]')
    voices = voice_map(scene, r)                      # speaker -> voice, + "__duty__", "__assistant__"
    audio = r.clip("Shall we order pizza?", voices["Ben"])   # float32, trimmed, -23 dBFS active
    pieces = r.turn(["Shall we order", "pizza?"], voices["Ben"])  # one utterance, cut between words
    pieces[1].audio, pieces[1].words                  # samples; Word(text, start, end) in s of the clip

Files: ``base`` (protocol, errors), ``espeak``/``kokoro`` (back ends), ``registry`` (by name),
``process`` (resample, trim, normalise), ``cache`` (clip cache), ``voices`` (voice map),
``renderer`` (``Renderer``, ``Word``, ``Piece``), ``prosody`` (F0 and silence measures).
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
from .renderer import Piece, Renderer, Word
from .voices import ASSISTANT, DUTY, turn_clips, voice_map

__all__ = [
    "ASSISTANT",
    "BACKENDS",
    "BackendUnavailableError",
    "DUTY",
    "EmptyTextError",
    "Piece",
    "Renderer",
    "TTSBackend",
    "TTSError",
    "UnknownBackendError",
    "UnknownVoiceError",
    "Word",
    "get_backend",
    "turn_clips",
    "voice_map",
]
