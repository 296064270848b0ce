"""The cascade agent (VAD endpointing -> Whisper -> responder -> streamed TTS, with barge-in and
echo handling). Modules: ``agent`` (the pipeline and its knobs), ``vad`` (streaming Silero),
``echo`` (echo canceller and double-talk gate), ``asr`` (faster-whisper per turn),
``responder`` (offline / Claude), ``speaker`` (streamed TTS), ``text`` (words, numbers, names)."""

from .agent import CascadeAgent
from .asr import FixedTranscriber, WhisperTranscriber
from .responder import ClaudeResponder, OfflineResponder, make_responder

__all__ = ["CascadeAgent", "ClaudeResponder", "FixedTranscriber", "OfflineResponder", "WhisperTranscriber",
           "make_responder"]
