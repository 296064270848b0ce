"""``Renderer``: text + voice -> trimmed, level-normalised clips at the env's rate, with the time
of every word, cached.

A turn is synthesised in one piece (``turn``): the words before a ``[pause=S]`` keep the
prosody of a phrase that goes on, not an utterance's final fall. The pieces are cut at the word
boundary the back end reports (espeak-ng's word events, Kokoro's phoneme durations; Kokoro's
``onset_lead_s`` earlier, as its voices sound a word before its aligned time), trimmed,
and their inner silences longer than ``process.MAX_GAP_S`` shortened; one gain serves the whole
turn. The scheduler then places the pieces with the script's silences between them, so pause
times stay exact.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass

import numpy as np

from .base import TTSBackend, TTSError, check_text, check_voice
from .cache import ClipCache, clip_key
from .process import PROCESSING_VERSION, fade_edges, moved, shorten_gaps, trim_bounds, turn_gain
from .registry import get_backend
from ..audio import resample

# Names the back ends' phonemiser (espeak-ng, en-us, used by both) says wrongly, respelt for the
# synthesiser only (the text, the words and the cache key keep the name): "Aria" came out as
# "area" (/ˈɛɹiə/, not /ˈɑːriə/) and "Remy" as "Ramai"; Whisper tiny.en wrote them so.
SAY_AS = {"Aria": "Ahreea", "Remy": "Remmy"}
_SAY_AS = re.compile(r"\b(" + "|".join(map(re.escape, SAY_AS)) + r")\b")
_SAY_AS_ID = hashlib.sha256(repr(sorted(SAY_AS.items())).encode()).hexdigest()[:8]


def say_as(text: str) -> str:
    """``text`` as the synthesiser should read it (one word for one word: word times still map)."""
    return _SAY_AS.sub(lambda m: SAY_AS[m.group(1)], text)


@dataclass(frozen=True)
class Word:
    """One word of a clip (``text.split()``) and when it is spoken, in seconds from the clip's start."""

    text: str
    start: float
    end: float


@dataclass(frozen=True)
class Piece:
    """One rendered piece of a turn: its samples, cache key and words."""

    audio: np.ndarray
    key: str
    words: tuple[Word, ...]


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
    def _turn_version(self) -> str:
        """The back end's version of how it speaks turns of several pieces ("" if it has none) and
        the lead its cuts allow for: a change that reaches those turns only, so one-piece clips
        keep their cache keys."""
        lead = self._onset_lead_s
        return getattr(self.backend, "turn_version", "") + (f"; onset lead {lead:g} s" if lead else "")

    @property
    def _onset_lead_s(self) -> float:
        """How long before a word's reported start the back end's voice may already sound it."""
        return float(getattr(self.backend, "onset_lead_s", 0.0))

    @property
    def version(self) -> str:
        """Back-end version and processing version, for records."""
        tag = self._turn_version
        return f"{self.backend.version}{f'; {tag}' if tag else ''}; processing {PROCESSING_VERSION}"

    @property
    def voices(self) -> tuple[str, ...]:
        return tuple(self.backend.voices())

    def turn_keys(self, texts: list[str] | tuple[str, ...], voice: str) -> list[str]:
        """The cache key of each piece of a turn spoken as ``texts`` (pieces in order)."""
        texts = [check_text(t) for t in texts]
        base = clip_key(self.backend.name, self.backend.version, voice, "\x1f".join(texts), self.sample_rate,
                        f"{PROCESSING_VERSION}; say-as {_SAY_AS_ID}")
        if len(texts) == 1:
            return [base]
        return [hashlib.sha256(f"{base}:{i}{self._turn_version}".encode()).hexdigest() for i in range(len(texts))]

    def key(self, text: str, voice: str) -> str:
        return self.turn_keys([text], voice)[0]

    def turn(self, texts: list[str] | tuple[str, ...], voice: str) -> list[Piece]:
        """The pieces of one turn, synthesised as one utterance and cut at the word boundaries
        between them: float32 mono at ``sample_rate``, each trimmed, the turn's active level at
        -23 dBFS, with every word's start and end (``Word``) relative to its piece."""
        check_voice(voice, self.voices, self.backend.name)
        texts = [check_text(t) for t in texts]
        keys = self.turn_keys(texts, voice)
        hits = [(self.cache.get(k), self.cache.get(k, "words")) for k in keys]
        if all(a is not None and w is not None and len(w) == 2 * len(t.split()) for (a, w), t in zip(hits, texts)):
            return [Piece(a.copy(), k, _words(t, w)) for (a, w), k, t in zip(hits, keys, texts)]
        pieces = self._render_turn(texts, voice)
        self.synth_calls += 1
        for (audio, times), k in zip(pieces, keys):
            self.cache.put(k, audio)
            self.cache.put(k, times, "words")
        return [Piece(a.copy(), k, _words(t, w)) for (a, w), k, t in zip(pieces, keys, texts)]

    def _render_turn(self, texts: list[str], voice: str) -> list[tuple[np.ndarray, np.ndarray]]:
        native, words = _synthesize_words(self.backend, [say_as(t) for t in texts], voice)
        sr_in, sr = self.backend.sample_rate, self.sample_rate
        x = resample(native, sr_in, sr)
        scale = sr / sr_in
        words = [[(int(round(a * scale)), int(round(b * scale))) for a, b in ws] for ws in words]
        # Cut between the pieces where the last word before the boundary ends: a cut at the next
        # word's start left that word's onset before the pause (Kokoro aligns two words 25-100 ms
        # apart, and its voices sound a word before its aligned time), and the recogniser wrote
        # it ("I didn't [pause] know" heard as "I didn't know.").
        lead = int(round(self._onset_lead_s * sr))
        cuts = [0] + [min(len(x), _boundary(prev, nxt, lead)) for prev, nxt in zip(words[:-1], words[1:])] + [len(x)]
        cuts = list(np.maximum.accumulate(cuts))
        out = []
        for i, ws in enumerate(words):
            lo, hi = cuts[i], cuts[i + 1]
            seg = fade_edges(x[lo:hi], sr, head=i > 0, tail=i < len(words) - 1)
            a, b = trim_bounds(seg, sr)
            if b <= a:
                raise TTSError(f"{self.backend.name} voice {voice!r} produced no audible speech for {texts[i]!r}")
            seg, gaps = shorten_gaps(seg[a:b], sr)
            n = len(seg)
            times = []
            for s0, s1 in ws:
                s0 = min(n, max(0, moved(s0 - lo - a, gaps)))
                s1 = min(n, max(s0, moved(s1 - lo - a, gaps)))
                times += [s0 / sr, s1 / sr]
            out.append((seg, np.asarray(times, np.float32)))
        g = turn_gain([seg for seg, _ in out], sr)
        return [(np.asarray(seg * g, np.float32), t) for seg, t in out]

    def on_disk(self, key: str) -> bool:
        """Whether a piece's samples and word times are both in the disk cache."""
        return self.cache.path(key).is_file() and self.cache.path(key, "words").is_file()

    def save(self, piece: Piece) -> bool:
        """Write a piece that this process holds in memory to the disk cache (samples and word
        times), for later processes; True when both are on disk afterwards."""
        times = np.asarray([t for w in piece.words for t in (w.start, w.end)], np.float32)
        if not self.cache.path(piece.key).is_file():
            self.cache.put(piece.key, piece.audio)
        if not self.cache.path(piece.key, "words").is_file():
            self.cache.put(piece.key, times, "words")
        return self.on_disk(piece.key)

    def clip(self, text: str, voice: str) -> np.ndarray:
        """float32 mono at ``sample_rate``, trimmed to its voiced part, active level -23 dBFS."""
        return self.turn([text], voice)[0].audio

    def words(self, text: str, voice: str) -> tuple[Word, ...]:
        """When each word of ``clip(text, voice)`` is spoken (seconds from the clip's start)."""
        return self.turn([text], voice)[0].words

    def __getstate__(self):
        state = self.__dict__.copy()
        state["synth_calls"] = 0  # a count of this instance's work, not carried to copies
        return state

    def __repr__(self) -> str:
        return f"Renderer({self.backend.name!r}, sample_rate={self.sample_rate}, cache_dir={str(self.cache.root)!r})"


def _words(text: str, times: np.ndarray) -> tuple[Word, ...]:
    return tuple(Word(w, float(times[2 * i]), float(times[2 * i + 1])) for i, w in enumerate(text.split()))


def _boundary(before: list[tuple[int, int]], after: list[tuple[int, int]], lead: int) -> int:
    """The sample where two pieces of a turn part: the aligned end of the last word before the
    boundary (the start of the first word after, where that comes sooner), ``lead`` samples
    earlier for a voice that sounds its words before their aligned times, but never before that
    last word's aligned start."""
    if not after:
        return sys.maxsize
    at = after[0][0]
    if not before:
        return at
    start, end = before[-1]
    at = min(at, end)
    return max(at - lead, min(at, start))


def _synthesize_words(backend, texts: list[str], voice: str):
    """A back end's one-piece synthesis with word times; one without word events (a third-party
    back end with only ``synthesize``) speaks each piece on its own, its words spread evenly."""
    if hasattr(backend, "synthesize_words"):
        return backend.synthesize_words(texts, voice)
    parts, words, pos = [], [], 0
    for t in texts:
        a = np.asarray(backend.synthesize(t, voice), np.float32).ravel()
        edges = np.linspace(pos, pos + len(a), len(t.split()) + 1).round().astype(int)
        words.append([(int(edges[k]), int(edges[k + 1])) for k in range(len(t.split()))])
        parts.append(a)
        pos += len(a)
    return np.concatenate(parts), words
