"""The cascade agent (VAD endpointing -> Whisper -> responder -> streamed TTS, with barge-in and
echo handling). Modules: ``agent`` (the pipeline and its knobs), ``vad`` (streaming Silero),
``echo`` (echo canceller and double-talk gate), ``asr`` (faster-whisper per turn),
``responder`` (offline / Claude), ``speaker`` (streamed TTS), ``text`` (words, numbers, names).
``turn_detector``: the cascade with a learned end-of-turn decision on words."""

from .agent import CascadeAgent
from .asr import FixedTranscriber, WhisperTranscriber
from .responder import ClaudeResponder, OfflineResponder, make_responder
from .turn_detector import TurnDetectorAgent

__all__ = ["CascadeAgent", "ClaudeResponder", "FixedTranscriber", "OfflineResponder", "WhisperTranscriber",
           "make_responder", "TurnDetectorAgent"]
