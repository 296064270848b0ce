"""A learned end-of-turn model on words: P(the assistant should answer now | what was said, how
long the silence has lasted).

What a streaming recogniser has heard when the user falls silent is the strongest cue to whether
the turn is over (a sentence that stops on "the" or "and" is not; one that ends on a question is),
and, with several people in the room, to whether the turn was for the assistant. The silence
itself is the other cue: the longer it lasts, the likelier the turn is over. The
``turn_detector`` agent transcribes the turn a short silence into it and then, at every 32 ms of
that silence, answers when the model is sure enough: at once after a finished question, later
after an ambiguous ending, not before its long endpointing silence after a cut-off sentence.

The model is a logistic regression on ``features``: the transcript's final punctuation, whether
it trails off (Whisper's ellipsis), whether its last word is a closed-class word
(``FUNCTION_WORDS``), whether it is empty, its length, whether the assistant's name was heard (the
agent decides that with the cascade's fuzzy name match), and the silence so far as steps at
``SILENCE_STEPS_S``. Words and silence add up in the logit, so the transcript sets how long a
silence the model needs. The words themselves (hashed last words, a bag of words) are left out:
the splits' sentences are disjoint, and on the validation split they lowered the per-frame ROC
AUC on pause and turn-taking silences from 0.79 and 0.89-0.90 to 0.67-0.72 and 0.73-0.81 (raising
it on MPE silences from 0.57-0.58 to 0.63-0.68; ``benchmarks/turn_end_features.py``,
docs/training_log.md, "A learned turn detector"). ``fit`` trains it on transcripts labelled by the env at each frame
of their silence, never at test. A checkpoint is a small JSON file: the settings, the weights, the
threshold chosen on validation and what it was trained on.

A model may also hear the sound of the turn's end (``sound_descriptor``: the log-mel of the turn's
last second up to the decision, against its own speech level, pooled by ``sound_features`` into
``N_SOUND`` more columns; ``fit(..., sounds=...)``; taken from the microphone, or with
``sound_from="denoised"`` noise-suppressed, which on the test split did no better), and read the
recogniser's confidence in the words it ends on (``confidence_features``: ``N_CONFIDENCE`` more
columns from the word probabilities; ``fit(..., words=...)``). Fitted on every scene set, neither
answers sooner, so the default shipped model (``words``) has neither. Together, on a single
user's silences, they answer most turn ends at the first look: the shipped ``single_user`` model
(``SHIPPED``; docs/training_log.md, "The recogniser's confidence, and a model for a single user"). A
model may also hear the pitch of
the turn's end (``pitch_descriptor``: the F0 contour of its last 1.2 s against the turn's
register; ``pitch_features``: ``N_PITCH`` more columns; ``fit(..., pitches=...)``; from the
microphone, or with ``pitch_from="denoised"`` noise-suppressed); beside the sound and the
confidence it added nothing on validation either way, so no shipped model has it
(docs/training_log.md, "The pitch of the turn's end, tried" and "The pitch heard noise-suppressed,
and unfinished words held, tried"). Nor has any the columns of Smart Turn v3,
an audio turn-end model trained on people's speech (``fdenv.train.smart_turn``: its probability
that the turn is complete; ``smart_turn_features``: ``N_SMART_TURN`` more columns;
``fit(..., smart_turns=...)``), which added nothing either ("Smart Turn v3, an audio turn-end
model, tried").
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import numpy as np

FORMAT = "fdenv.turn_end/5"
# /3: words and silence only; /4: and the sound; /5: and the recogniser's confidence
FORMATS = ("fdenv.turn_end/3", "fdenv.turn_end/4", FORMAT)
PUNCT = ("?", ".", "!", ",", "-")  # final punctuation classes (besides none)
ELLIPSES = ("...", "\u2026")  # Whisper's mark for words that trail off (a pause's, far more often than an end's)
# English closed-class words that rarely end a sentence (articles, prepositions, conjunctions,
# auxiliaries, subject pronouns, fillers): a cue that holds for words never seen in training.
FUNCTION_WORDS = frozenset("""a an the this these those my your his her our their some any every each no
to of in on at for with from by about into onto over under between after before through during without
and or but because so if when while although though than which who whose where how why
is are was were be been am do does did have has had can could will would shall should may might must
i you he she we they um uh hmm er like very really just not""".split())
# the silence so far: one column per step, 1 once the silence has lasted that long (seconds)
SILENCE_STEPS_S = (0.4, 0.55, 0.7, 0.85, 1.0, 1.2, 1.4)
# columns: final punctuation (len(PUNCT) + 1); function word, empty, log(1 + words), name heard,
# trailing ellipsis; the silence steps
N_TEXT = len(PUNCT) + 1 + 5
LENGTH_COLUMN = len(PUNCT) + 1 + 2  # log(1 + words): how much the user has said since the assistant last spoke
N_FEATURES = N_TEXT + len(SILENCE_STEPS_S)


def bare_words(text: str) -> list[str]:
    """The transcript's words, lower case, without surrounding punctuation or quotes."""
    return [b for b in (w.strip(".,?!-\"'").lower() for w in text.split()) if b]


def unfinished(text: str) -> bool:
    """The transcript stops where a sentence cannot: on a closed-class word ("What's a good exercise
    for?"), trailing off (Whisper's ellipsis) or in a cut word ("... ideas for g-"). A model that
    ``hold_unfinished`` never answers early after it, whatever the other cues say."""
    words = bare_words(text)
    text = text.strip()
    return bool(words) and (words[-1] in FUNCTION_WORDS or text.endswith(ELLIPSES) or text.endswith("-"))


def silence_features(silence_s: float) -> np.ndarray:
    return (silence_s >= np.array(SILENCE_STEPS_S) - 1e-9).astype(np.float32)


def features(text: str, named: bool = False, silence_s: float = 0.0) -> np.ndarray:
    """The transcript and the silence so far as a vector of ``N_FEATURES`` (see the module
    docstring); ``named``: the assistant's name was heard in it."""
    return np.concatenate([text_features(text, named), silence_features(silence_s)])


def text_features(text: str, named: bool = False) -> np.ndarray:
    v = np.zeros(N_TEXT, np.float32)
    words = text.split()
    bare = bare_words(text)
    tail = len(PUNCT) + 1
    v[tail + 3] = float(named)
    if not bare:
        v[tail + 1] = 1.0
        return v
    mark = words[-1][-1]
    v[PUNCT.index(mark) if mark in PUNCT else len(PUNCT)] = 1.0
    v[tail] = float(bare[-1] in FUNCTION_WORDS)
    v[LENGTH_COLUMN] = float(np.log1p(len(bare)))
    v[tail + 4] = float(words[-1].endswith(ELLIPSES))
    return v


# The sound of the turn's end: the log-mel spectrum of each 32 ms window (the cascade's window at
# 16 kHz) over the last SOUND_WINDOWS windows up to the decision, against the turn's own speech
# level (its loudest half of windows), so the talker's loudness and the room's gain drop out. A
# phrase cut by a pause keeps its level and pitch to its last word; a turn's end falls and fades.
SOUND_RATE = 16000
SOUND_WINDOW = 512  # samples: 32 ms
SOUND_WINDOWS = 32  # the last 1.024 s up to the decision
SOUND_BANDS = 16
SOUND_POOL = (4, 2)  # windows x bands averaged into one of the model's columns
# the signal the descriptor is taken from: the echo-cancelled microphone (what the recogniser
# hears), or the same noise-suppressed (what the voice-activity detector hears), in which a
# silence stays far below the speech in steady noise too
SOUND_SOURCES = ("microphone", "denoised")
N_SOUND = (SOUND_WINDOWS // SOUND_POOL[0]) * (SOUND_BANDS // SOUND_POOL[1])


# The recogniser's confidence in how the transcript ends. Whisper closes a phrase cut by a pause as
# if it were a sentence ("Remind me too.", "... pasta too?"), so the final mark says little; the
# word it ends on is one it is less sure of than the last word of a finished turn. Columns: the
# last word's probability, the same when the transcript ends in a sentence mark (0 otherwise), the
# lowest probability of the last three words.
SENTENCE_MARKS = ("?", ".", "!")
N_CONFIDENCE = 3


def confidence_features(text: str, words) -> np.ndarray:
    """The ``N_CONFIDENCE`` columns of a transcript ``text`` from the recogniser's ``words`` of it
    (``(word, probability)`` pairs). The transcript's own letters are the first of them: a second
    recognition pass may add a low-probability tail after them, left out here, and may split a
    word in two ("o", "'clock."), so they are matched by letters, not counted. No words: the
    columns of a sure ending."""
    tokens = text.split()
    letters, probs = len("".join(tokens)), []
    for w, p in words:
        if letters <= 0:
            break
        probs.append(float(p))
        letters -= len(w.replace(" ", ""))
    if not tokens or not probs:
        return np.array([1.0, 0.0, 1.0])
    closed = tokens[-1].endswith(SENTENCE_MARKS)
    return np.array([probs[-1], probs[-1] if closed else 0.0, min(probs[-3:])])


# The pitch of the turn's end. A phrase cut by a pause holds its pitch up to its last word; a
# finished statement falls to the speaker's floor and a yes/no question rises (the prosodic cues of
# end of turn: Ferrer, Shriberg & Stolcke 2002, "Is the speaker done yet?"; Gravano & Hirschberg
# 2011, "Turn-taking cues in task-oriented dialogue"). The contour is the F0 of the turn's last
# PITCH_FRAMES 10 ms frames up to the decision, in semitones against the turn's median F0 (so the
# speaker's register drops out), None where unvoiced (fdenv.render.prosody.f0_track).
PITCH_FRAMES = 120  # the last 1.2 s: the decision comes 0.25 s into the silence
PITCH_REGISTER_S = 8.0  # the turn's register (median F0) from at most its last 8 s: a bounded cost
PITCH_TAIL_S = (0.15, 0.4)  # the end's level: voiced frames this close to the last one; its slope: this close
N_PITCH = 4


def pitch_descriptor(windows: list[np.ndarray]) -> list[float | None]:
    """``PITCH_FRAMES`` values: the F0 contour of the end of a turn (``windows``: its 32 ms windows
    at 16 kHz so far, oldest first), semitones against the median voiced F0 of its last
    ``PITCH_REGISTER_S``, None where a frame is unvoiced; all None when too few frames are voiced
    for a median."""
    from fdenv.render.prosody import f0_track

    if not windows:
        raise ValueError("pitch_descriptor: no audio windows")
    recent = windows[-int(PITCH_REGISTER_S * SOUND_RATE / SOUND_WINDOW):]
    _, f0 = f0_track(np.concatenate([np.asarray(w, np.float64) for w in recent]), SOUND_RATE)
    voiced = ~np.isnan(f0)
    tail = np.full(PITCH_FRAMES, np.nan)
    if voiced.sum() >= 5:
        st = 12 * np.log2(f0 / np.median(f0[voiced]))
        n = min(PITCH_FRAMES, len(st))
        tail[PITCH_FRAMES - n:] = st[len(st) - n:]
    return [None if np.isnan(v) else round(float(v), 2) for v in tail]


def pitch_features(descriptor) -> np.ndarray:
    """A ``pitch_descriptor`` as the model's ``N_PITCH`` columns: whether the end is voiced, the
    level of its last ``PITCH_TAIL_S[0]`` s of voicing (semitones against the turn's median), its
    size, and the slope over the last ``PITCH_TAIL_S[1]`` s (semitones per 100 ms); zeros (bar the
    first) when fewer than 3 of those frames are voiced."""
    d = np.array([np.nan if v is None else v for v in descriptor], np.float64)
    if d.shape != (PITCH_FRAMES,):
        raise ValueError(f"pitch_features: a descriptor of {d.shape[0] if d.ndim == 1 else d.shape} values, "
                         f"expected {PITCH_FRAMES}")
    at = np.flatnonzero(~np.isnan(d))
    if len(at) < 3:
        return np.zeros(N_PITCH)
    level_at = at[at >= at[-1] - round(PITCH_TAIL_S[0] * 100)]
    slope_at = at[at >= at[-1] - round(PITCH_TAIL_S[1] * 100)]
    level = float(np.clip(np.median(d[level_at]), -12, 12))
    slope = float(np.clip(np.polyfit(slope_at / 10, d[slope_at], 1)[0], -6, 6)) if len(slope_at) >= 3 else 0.0
    return np.array([1.0, level / 6, abs(level) / 6, slope / 3])


# Smart Turn v3's P(complete) at the first look (fdenv.train.smart_turn) as two columns: the
# probability and its logit (clipped), so that the model can trust its sure answers more than a
# straight line in either would
SMART_TURN_LOGIT_CLIP = 6.0
N_SMART_TURN = 2


def smart_turn_features(p: float) -> np.ndarray:
    """Smart Turn's probability ``p`` as the model's ``N_SMART_TURN`` columns."""
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"smart_turn_features: a probability in [0, 1], got {p!r}")
    q = min(max(p, 1e-6), 1 - 1e-6)
    return np.array([p, float(np.clip(np.log(q / (1 - q)), -SMART_TURN_LOGIT_CLIP, SMART_TURN_LOGIT_CLIP)) / 3])


@functools.lru_cache(maxsize=1)
def _sound_filterbank() -> np.ndarray:
    from .features import mel_filterbank

    return mel_filterbank(SOUND_BANDS, SOUND_WINDOW, SOUND_RATE).astype(np.float64)


def sound_descriptor(windows: list[np.ndarray]) -> np.ndarray:
    """``(SOUND_WINDOWS, SOUND_BANDS)`` log-mel (natural log) of the last ``SOUND_WINDOWS`` of a
    turn's 32 ms windows at 16 kHz (``windows``: the turn's audio so far, oldest first), less the
    mean log-mel of the turn's loudest half of windows; a turn shorter than that is padded at its
    start with its quietest window."""
    if not windows:
        raise ValueError("sound_descriptor: no audio windows")
    x = np.stack([np.asarray(w, np.float64) for w in windows])
    if x.shape[1] != SOUND_WINDOW:
        raise ValueError(f"sound_descriptor: windows of {x.shape[1]} samples, expected {SOUND_WINDOW} (32 ms at 16 kHz)")
    power = np.abs(np.fft.rfft(x * np.hanning(SOUND_WINDOW), axis=1)) ** 2
    logmel = np.log(power @ _sound_filterbank().T + 1e-10)
    total = logmel.mean(axis=1)
    loud = total >= np.median(total)
    rel = logmel - logmel[loud].mean(axis=0)
    if len(rel) < SOUND_WINDOWS:
        rel = np.concatenate([np.repeat(rel[[int(np.argmin(total))]], SOUND_WINDOWS - len(rel), axis=0), rel])
    return rel[-SOUND_WINDOWS:].astype(np.float32)


def sound_features(descriptor) -> np.ndarray:
    """A ``sound_descriptor`` as the model's ``N_SOUND`` columns: its windows and bands averaged in
    blocks of ``SOUND_POOL`` (fewer numbers than the few thousand training silences can fit)."""
    d = np.asarray(descriptor, np.float32)
    if d.shape != (SOUND_WINDOWS, SOUND_BANDS):
        raise ValueError(f"sound_features: a descriptor of shape {d.shape}, expected {(SOUND_WINDOWS, SOUND_BANDS)}")
    tw, tb = SOUND_POOL
    return d.reshape(SOUND_WINDOWS // tw, tw, SOUND_BANDS // tb, tb).mean(axis=(1, 3)).ravel()


class TurnEndModel:
    """``prob(text, named, silence_s, sound, words)``: P(answer now). ``threshold``: the decision
    threshold chosen on validation (the agent's default). ``meta``: what it was trained on.
    ``sound_from``: the signal its sound descriptor is taken from (``SOUND_SOURCES``); ``pitch_from``:
    the same for its pitch contour.
    ``weights``: ``N_FEATURES`` of them (words and silence), then ``N_SOUND`` for a model that also
    hears the sound of the turn's end (``uses_sound``), then ``N_CONFIDENCE`` for one that also
    reads the recogniser's confidence in the words (``uses_confidence``), then ``N_PITCH`` for one
    that also hears the pitch of the turn's end (``uses_pitch``), then ``N_SMART_TURN`` for one that
    also hears Smart Turn (``uses_smart_turn``). ``hold_unfinished``: the words' closed-class end,
    ellipsis and cut word are a veto rather than terms of the sum (``unfinished``): P is 0 through
    such a silence, which is left to the agent's endpoint. ``answer_within_s``: the model answers
    only in the first that many seconds of a silence (None: at any time); past them P is 0 and the
    silence is left to the agent's endpoint. At 0.3 s it decides once, at its first look (0.256 s):
    answer now, or wait for the endpoint, as LiveKit's turn detector picks its short or its long
    endpointing delay at the end of speech. A latency target is met by the turn ends answered at
    once; an answer a second into a silence spends pauses that could have bought more of those."""

    # the columns after the words' and silence's: (sound, confidence, pitch, smart turn) by their
    # count (each sum is distinct; checked below)
    LAYOUTS = {N_SOUND * s + N_CONFIDENCE * c + N_PITCH * p + N_SMART_TURN * t: (bool(s), bool(c), bool(p), bool(t))
               for s in (0, 1) for c in (0, 1) for p in (0, 1) for t in (0, 1)}
    assert len(LAYOUTS) == 16, "two column layouts have the same count"

    def __init__(self, weights: np.ndarray, bias: float, threshold: float = 0.5, meta: dict | None = None,
                 sound_from: str = "microphone", pitch_from: str = "microphone", hold_unfinished: bool = False,
                 answer_within_s: float | None = None):
        weights = np.asarray(weights, np.float64)
        extra = weights.shape[0] - N_FEATURES if weights.ndim == 1 else None
        if extra not in self.LAYOUTS:
            raise ValueError(f"turn-end model: {weights.shape[0] if weights.ndim == 1 else weights.shape} weights, "
                             f"the features have {N_FEATURES} (plus {N_SOUND} with the sound, {N_CONFIDENCE} with "
                             f"the recogniser's confidence, {N_PITCH} with the pitch, {N_SMART_TURN} with Smart "
                             "Turn); retrain it with this version of fdenv")
        self.weights, self.bias, self.threshold = weights, float(bias), float(threshold)
        self.uses_sound, self.uses_confidence, self.uses_pitch, self.uses_smart_turn = self.LAYOUTS[extra]
        if sound_from not in SOUND_SOURCES:
            raise ValueError(f"turn-end model: sound_from={sound_from!r}; expected one of {list(SOUND_SOURCES)}")
        if pitch_from not in SOUND_SOURCES:
            raise ValueError(f"turn-end model: pitch_from={pitch_from!r}; expected one of {list(SOUND_SOURCES)}")
        if not isinstance(hold_unfinished, bool):
            raise ValueError(f"turn-end model: hold_unfinished={hold_unfinished!r}; expected true or false")
        self.sound_from, self.pitch_from, self.hold_unfinished = sound_from, pitch_from, hold_unfinished
        self.answer_within_s = check_answer_within(answer_within_s, "turn-end model: answer_within_s")
        self.meta = dict(meta or {})

    def prob(self, text: str, named: bool = False, silence_s: float = 0.0, sound=None, words=None,
             pitch=None, smart_turn=None) -> float:
        return self.prob_after(self.text_logit(text, named, sound, words, pitch, smart_turn), silence_s)

    def text_logit(self, text: str, named: bool = False, sound=None, words=None, pitch=None,
                   smart_turn=None) -> float:
        """The part of the logit fixed within a silence, computed once per silence: the words', and
        for a model that ``uses_sound`` the sound's (``sound``: a ``sound_descriptor``), for one that
        ``uses_confidence`` the recogniser's confidence (``words``: its ``(word, probability)``
        pairs of ``text``), for one that ``uses_pitch`` the pitch's (``pitch``: a
        ``pitch_descriptor``), for one that ``uses_smart_turn`` Smart Turn's (``smart_turn``: its
        probability, ``fdenv.train.smart_turn.smart_turn_probability``). Minus infinity for a
        model that ``hold_unfinished`` after ``unfinished`` words."""
        if self.hold_unfinished and unfinished(text):
            return -np.inf
        z = float(text_features(text, named) @ self.weights[:N_TEXT] + self.bias)
        at = N_FEATURES
        if self.uses_sound:
            if sound is None:
                raise ValueError("turn-end model: it hears the sound of the turn's end; pass its sound_descriptor")
            z += float(sound_features(sound) @ self.weights[at:at + N_SOUND])
            at += N_SOUND
        if self.uses_confidence:
            if words is None:
                raise ValueError("turn-end model: it reads the recogniser's confidence; pass the words with their "
                                 "probabilities")
            z += float(confidence_features(text, words) @ self.weights[at:at + N_CONFIDENCE])
            at += N_CONFIDENCE
        if self.uses_pitch:
            if pitch is None:
                raise ValueError("turn-end model: it hears the pitch of the turn's end; pass its pitch_descriptor")
            z += float(pitch_features(pitch) @ self.weights[at:at + N_PITCH])
            at += N_PITCH
        if self.uses_smart_turn:
            if smart_turn is None:
                raise ValueError("turn-end model: it hears Smart Turn; pass its probability of the turn's end")
            z += float(smart_turn_features(smart_turn) @ self.weights[at:at + N_SMART_TURN])
        return z

    def prob_after(self, text_logit: float, silence_s: float) -> float:
        """P(answer now) with the fixed part of the logit after ``silence_s`` seconds of silence."""
        if self.answer_within_s is not None and silence_s > self.answer_within_s + 1e-9:
            return 0.0  # past its window: the silence is the agent's endpoint's
        z = text_logit + float(silence_features(silence_s) @ self.weights[N_TEXT:N_FEATURES])
        return float(1.0 / (1.0 + np.exp(-z)))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"format": FORMAT, "silence_steps_s": list(SILENCE_STEPS_S),
                                          "sound": self.uses_sound, "confidence": self.uses_confidence,
                                          "threshold": self.threshold,
                                          "bias": self.bias, "weights": [round(float(w), 6) for w in self.weights],
                                          **({"pitch": True} if self.uses_pitch else {}),
                                          **({"smart_turn": True} if self.uses_smart_turn else {}),
                                          **({"sound_from": self.sound_from} if self.sound_from != "microphone" else {}),
                                          **({"pitch_from": self.pitch_from} if self.pitch_from != "microphone" else {}),
                                          **({"hold_unfinished": True} if self.hold_unfinished else {}),
                                          **({"answer_within_s": self.answer_within_s}
                                             if self.answer_within_s is not None else {}),
                                          "meta": self.meta}, indent=1))


def check_answer_within(value, name: str) -> float | None:
    """``value`` as an ``answer_within_s``: None, or seconds of silence, positive and finite; a
    clear error naming ``name`` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < float("inf"):
        raise ValueError(f"{name}={value!r}; seconds of silence, positive (0.3 decides at the first look), "
                         "or none to answer at any time")
    return float(value)


def load(path: str | Path) -> TurnEndModel:
    """A checkpoint written by ``TurnEndModel.save``; a clear error for anything else."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such turn-end checkpoint; train one with "
                                "`python -m fdenv.cli.turn_end fit` or leave the checkpoint unset for the shipped one") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a turn-end checkpoint (not JSON: {e})") from None
    if not isinstance(data, dict) or data.get("format") not in FORMATS:
        raise ValueError(f"{path}: not a turn-end checkpoint (expected \"format\": \"{FORMAT}\")")
    if data.get("silence_steps_s") != list(SILENCE_STEPS_S):
        raise ValueError(f"{path}: silence_steps_s={data.get('silence_steps_s')!r}, this fdenv uses "
                         f"{list(SILENCE_STEPS_S)}; retrain it")
    try:
        return TurnEndModel(np.array(data["weights"]), data["bias"], data.get("threshold", 0.5), data.get("meta"),
                            data.get("sound_from", "microphone"), data.get("pitch_from", "microphone"),
                            data.get("hold_unfinished", False), data.get("answer_within_s"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def fit(texts: list[str], named: list[bool], labels: list[int], silence_s: list[float] | None = None,
        l2: float = 1.0, sounds: list | None = None, words: list | None = None,
        pitches: list | None = None, smart_turns: list | None = None,
        weights: list[float] | None = None, sound_l2_scale: float = 1.0) -> TurnEndModel:
    """Logistic regression with an L2 penalty ``l2`` (on the weights, not the bias), fitted with
    L-BFGS: deterministic, so the same data gives the same checkpoint. One example per (transcript,
    silence so far, label); ``silence_s`` None: all at no silence. ``sounds``: each example's
    ``sound_descriptor`` (examples of one silence may share one object), for a model that hears
    the sound; ``words``: each example's recogniser words with their probabilities, for one that
    reads the recogniser's confidence; ``pitches``: each example's ``pitch_descriptor``, for one
    that hears the pitch; ``smart_turns``: each example's Smart Turn probability, for one that hears
    it; None for words and silence alone. ``weights``: each example's weight in the loss (say, so
    that every scene set counts alike); None: all 1. ``sound_l2_scale``: the sound's columns are
    penalised that many times ``l2`` (their 64 weights, fitted on a few thousand silences, vary
    from one draw of training rooms to the next far more than the words' do; a larger penalty
    holds them near 0)."""
    if isinstance(sound_l2_scale, bool) or not isinstance(sound_l2_scale, (int, float)) \
            or not 0.0 < sound_l2_scale < float("inf"):
        raise ValueError(f"fit: sound_l2_scale={sound_l2_scale!r}; a positive factor on the sound's penalty (1: as "
                         "the other columns')")
    if sound_l2_scale != 1.0 and sounds is None:
        raise ValueError(f"fit: sound_l2_scale={sound_l2_scale} scales the sound's penalty, and the model hears no "
                         "sound; pass sounds or leave it at 1")
    silence_s = [0.0] * len(labels) if silence_s is None else silence_s
    counts = [len(texts), len(named), len(silence_s), len(labels)] + [len(x) for x in (sounds, words, pitches,
                                                                                     smart_turns) if x is not None]
    if weights is not None and (len(weights) != len(labels) or not np.all(np.asarray(weights, np.float64) > 0)):
        raise ValueError(f"fit: {len(weights)} weights for {len(labels)} examples; expected one positive weight "
                         "per example")
    if len(set(counts)) != 1:
        raise ValueError(f"fit: {len(texts)} texts, {len(named)} name flags, {len(silence_s)} silences, "
                         f"{len(labels)} labels{'' if sounds is None else f', {len(sounds)} sounds'}"
                         f"{'' if words is None else f', {len(words)} word lists'}"
                         f"{'' if pitches is None else f', {len(pitches)} pitch contours'}"
                         f"{'' if smart_turns is None else f', {len(smart_turns)} Smart Turn probabilities'}; "
                         "expected one each")
    y = np.asarray(labels, np.float64)
    if not np.isin(y, (0, 1)).all() or len(np.unique(y)) < 2:
        raise ValueError("fit: labels must be 0 and 1, with both present")
    said: dict = {}  # many examples share a transcript, and a silence's examples its sound and words
    rows = [np.concatenate([_memo(said, (t, n), lambda: text_features(t, n)), silence_features(s)])
            for t, n, s in zip(texts, named, silence_s)]
    if sounds is not None:
        heard: dict = {}
        rows = [np.concatenate([r, _memo(heard, id(d), lambda: sound_features(d))]) for r, d in zip(rows, sounds)]
    if words is not None:
        sure: dict = {}
        rows = [np.concatenate([r, _memo(sure, (t, id(w)), lambda: confidence_features(t, w))])
                for r, t, w in zip(rows, texts, words)]
    if pitches is not None:
        tuned: dict = {}
        rows = [np.concatenate([r, _memo(tuned, id(d), lambda: pitch_features(d))]) for r, d in zip(rows, pitches)]
    if smart_turns is not None:
        rows = [np.concatenate([r, smart_turn_features(p)]) for r, p in zip(rows, smart_turns)]
    x = np.stack(rows).astype(np.float64)
    penalty = l2
    if sound_l2_scale != 1.0:  # the sound's columns follow the words' and silence's
        penalty = np.full(x.shape[1], float(l2))
        penalty[N_FEATURES:N_FEATURES + N_SOUND] *= sound_l2_scale
    wb = fit_logistic(x, y, penalty, None if weights is None else np.asarray(weights, np.float64))
    return TurnEndModel(wb[:-1], wb[-1], meta={"examples": len(y), "positives": int(y.sum()), "l2": l2,
                                               **({"sound_l2_scale": float(sound_l2_scale)}
                                                  if sound_l2_scale != 1.0 else {})})


def _memo(cache: dict, key, make):
    if key not in cache:
        cache[key] = make()
    return cache[key]


def fit_logistic(x: np.ndarray, y: np.ndarray, l2, sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Weights and bias (last) of an L2-penalised logistic regression of ``y`` on ``x`` (L-BFGS);
    ``l2``: one penalty for every weight, or one per column; ``sample_weight``: each row's weight in the log-likelihood (an integer weight k fits as k copies
    of the row would)."""
    from scipy.optimize import minimize

    s = np.ones(len(y)) if sample_weight is None else sample_weight

    def loss(wb):
        w, b = wb[:-1], wb[-1]
        z = x @ w + b
        # log(1 + e^z) - y z, stably
        nll = np.sum(s * (np.logaddexp(0.0, z) - y * z))
        r = s * (1.0 / (1.0 + np.exp(-z)) - y)
        g = np.concatenate([x.T @ r + l2 * w, [np.sum(r)]])
        return nll + 0.5 * l2 * w @ w, g

    return minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 2000}).x


# the shipped checkpoints, by the name the agent's ``checkpoint`` knob may give: ``words`` (the
# default: words and silence, every scene set, both voices) and ``single_user`` (words, silence,
# the sound and the recogniser's confidence, fitted on a single user's silences in Kokoro's voices;
# docs/training_log.md, "The recogniser's confidence, and a model for a single user"); and the same
# recipe fitted on two more draws of training rooms and humans (``collect --seed 1`` and ``2``;
# "Three training seeds of the single-user model"), to measure how much the draw decides; and the
# three again for an agent that hears each turn through the cascade's speech enhancement, their
# weights unchanged, their thresholds picked on validation heard so (``calibrate --enhance-db``;
# "Speech enhancement before the recogniser"), with the generator's 90 more validation pause
# scenes ("The enhanced seeds at the larger validation's thresholds"); and the recipe fitted on a
# four times larger pool of generated pause scenes, the scene sets weighed alike (``fit
# --balance-sets``), for an agent that hears so ("A larger pool of training scenes, tried"); and the
# three enhanced ones deciding once per silence, at their first look (``calibrate --answer-within-s
# 0.3``, the same validation; "Deciding at the first look")
SHIPPED = {"words": "turn_end.json", "single_user": "turn_end_single_user.json",
           "single_user_seed1": "turn_end_single_user_seed1.json",
           "single_user_seed2": "turn_end_single_user_seed2.json",
           "single_user_enhanced": "turn_end_single_user_enhanced.json",
           "single_user_enhanced_seed1": "turn_end_single_user_enhanced_seed1.json",
           "single_user_enhanced_seed2": "turn_end_single_user_enhanced_seed2.json",
           "single_user_pool_enhanced": "turn_end_single_user_pool_enhanced.json",
           "single_user_first_look": "turn_end_single_user_first_look.json",
           "single_user_first_look_seed1": "turn_end_single_user_first_look_seed1.json",
           "single_user_first_look_seed2": "turn_end_single_user_first_look_seed2.json"}


def default_checkpoint() -> Path:
    return checkpoint_path(None)


def checkpoint_path(checkpoint: str | os.PathLike | None) -> Path:
    """The file of a ``checkpoint`` knob: None, the default (``words``); a name in ``SHIPPED``, that
    shipped checkpoint; anything else, a path."""
    name = "words" if checkpoint is None else checkpoint
    if isinstance(name, str) and name in SHIPPED:
        return Path(__file__).parent / "checkpoints" / SHIPPED[name]
    return Path(checkpoint)
