"""Overlap behaviours (the ``overlap`` set, after Full-Duplex-Bench v1.5): what the assistant did
when someone spoke over its answer.

Per episode one event (``overlap_event``): an ``interrupt`` (it should stop and answer the new
request), or a user backchannel, a side conversation or background speech (it should hold the
floor and go on with its answer). ``info["overlap"]`` (``OverlapScorer``)::

    {"event": "interruption" | "backchannel" | "side_conversation" | "background",
     "scene_id", "onset_s", "end_s", "paper": {...}, "fdb15_code": {...}}

with, in the ``paper`` profile (fdenv's Silero segments with the edge refinement, SPEC 5.1):

* ``met_speaking``: the onset falls in a stretch of speech (segments joined across pauses shorter
  than ``BRIEF_PAUSE_S``: mid-answer, between two sentences, counts) (the share of these is what the event
  draw on the assistant's speaking time makes meaningful: an agent that answers briefly meets
  fewer events while it speaks);
* ``stop_latency_s``: onset -> the end of the speech under way at the onset (segments joined
  across pauses shorter than ``BRIEF_PAUSE_S``, "a brief pause at most"); ``None`` when it was
  silent at the onset or ran past the window's end (``did_not_stop``);
* ``held``: it was speaking at the onset and still at the event's end (the ``hold`` behaviour);
* ``response_latency_s``: event end -> the first new segment after the onset that is not the
  speech under way and not a backchannel (SPEC 5.2), within ``(s, f + 10 s]`` (negative when it
  starts before the event ends);
* ``category``: Full-Duplex-Bench v1.5's content relation of what followed the event
  (``instruction/behavior.txt``'s tags: ``C_RESPOND`` it addresses the event, ``C_RESUME`` it goes
  on with the original answer, ``C_UNCERTAIN_HANDLING`` "sorry, I didn't catch that",
  ``C_UNKNOWN`` nothing after the event, or off target), by the judge (``judge.behaviour``: the
  offline rules, or Claude with the caching and coverage of SPEC 8); ``judge_failure`` says why a
  missing verdict is missing;
* ``addresses_event`` (interruptions) / ``continues_answer`` (the others): ``category`` is
  ``C_RESPOND`` / ``C_RESUME``.

and in the ``fdb15_code`` profile the public v1.5 timing rules (``fdb15_code_overlap``:
``stop_latency_s``, ``response_latency_s`` and their intervals), on microphone 0 as v1.5's
input track (``None`` for a record without it). v1.5's prosody and speech-quality measures
(UTMOSv2, pitch, intensity, speaking rate before and after the event) need models that cannot be
installed offline: out of scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..windows import OVERLAP_S, overlap_events
from . import vad
from .asr import Word
from . import fdb15
from .fdb import RESPONSE_GAP_S, is_backchannel
from .judge import BEHAVIOUR_RULES
from .segments import Segment, follow_on, text_of, word_in
from .sound import no_speech_warning

EVENTS = {"interrupt": "interruption", "bc": "backchannel", "side": "side_conversation", "background": "background"}
CATEGORIES = fdb15.BEHAVIOURS  # Full-Duplex-Bench v1.5's content-relation tags
PROFILES = ("paper", "fdb15_code")
BRIEF_PAUSE_S = 1.0  # speech that goes on after a pause shorter than this is the same stretch
# An agent that stops in the very frame the event begins (a privileged one can) leaves speech that
# ends at the onset; Silero's refined end can fall a few ms before it. Speech ending less than one
# 80 ms frame before the onset was under way when the event began (stop latency 0).
MET_TOLERANCE_S = 0.08
CONTEXT_S = 10.0  # the assistant's words this long before the event are its "before" (for the judge)
KEYS = ("met_speaking", "stop_latency_s", "did_not_stop", "held", "response_latency_s", "category")


@dataclass(frozen=True)
class OverlapEvent:
    kind: str  # one of EVENTS' values
    turns: tuple  # the played event turns (a side conversation has two)
    start: float
    end: float
    text: str  # what was said over the assistant
    gold: str | None  # an interruption's gold answer
    request: str  # the final turn the assistant was answering


def is_overlap_scene(record_or_scene) -> bool:
    scene = getattr(record_or_scene, "scene", record_or_scene)
    return scene.kind == "overlap"


def overlap_event(record) -> OverlapEvent | None:
    """The scored event of an overlap episode (played scripted turns only: a natural listener's
    own backchannel is not the event)."""
    scripted = {t.id for t in record.scene.turns}
    turns = [t for t in record.turns if t.id in scripted]
    events = [e for e in overlap_events(turns) if e[0][0].label in EVENTS]
    if not events:
        return None
    run, s, f = events[0]
    finals = [t for t in turns if t.label == "final" and t.start < s]
    request = finals[-1].text if finals else ""
    gold = run[0].gold_answer if run[0].label == "interrupt" else None
    return OverlapEvent(EVENTS[run[0].label], tuple(run), s, f, " ".join(t.text for t in run), gold, request)


def paper_overlap(segments: Sequence[Segment], words: Sequence[Word], event: OverlapEvent, judge=None) -> dict:
    """The ``paper`` measures of one event (see the module docstring)."""
    s, f = event.start, event.end
    w_end = f + OVERLAP_S
    out: dict = {k: None for k in KEYS}
    segs = sorted(segments)
    run = _stretch_at(segs, s)
    out["met_speaking"] = bool(run)
    run_end = run[-1][1] if run else None
    out["did_not_stop"] = bool(run) and run_end > w_end
    if run and not out["did_not_stop"]:
        out["stop_latency_s"] = max(0.0, run_end - s)
    out["held"] = bool(run) and run_end >= f
    fresh = [g for g in segs if s < g[0] <= w_end and g not in run and not is_backchannel(g, words)]
    response: list[Segment] = []
    if fresh:
        first = fresh[0]
        out["response_latency_s"] = first[0] - f
        response = follow_on(segs, first, RESPONSE_GAP_S)
    before = [w for w in words if w.start < s and s - CONTEXT_S <= w.start]
    after = [w for w in words if s <= w.start <= w_end]
    said = [w for w in words if any(word_in(w, g) for g in response)]
    out["response_text"] = text_of(said)
    if judge is not None:
        out["category"] = judge.behaviour(event.kind, event.text, event.request, before, after, said,
                                          gold=event.gold, held=bool(out["held"]), span=(s, f))
        out["judge"] = judge.name if judge.name != "offline" else f"offline ({BEHAVIOUR_RULES})"
        if out["category"] is None:
            out["judge_failure"] = getattr(judge, "last_failure", None) or "no verdict"
    cat = out["category"]
    if event.kind == "interruption":
        out["addresses_event"] = None if cat is None else cat == "C_RESPOND"
    else:
        out["continues_answer"] = None if cat is None else cat == "C_RESUME"
    return out


def fdb15_code_overlap(user_vad, model_vad, event: OverlapEvent) -> dict:
    """The ``fdb15_code`` timing of one event: v1.5's ``get_timing.py`` rules (``fdb15.timing``:
    Silero segments with the package's defaults, in samples, merged across 0.6 s user / 0.5 s
    model gaps; stop and response intervals) on the input track (every human voice: microphone 0)
    and the assistant's track, read for this event (``fdb15.event_timing`` over ``[s, f + 10 s]``)."""
    t = fdb15.timing(user_vad, model_vad, unit="samples")
    e = fdb15.event_timing(t, event.start, event.end + OVERLAP_S)
    return {"stop_latency_s": e["stop_latency_s"], "response_latency_s": e["response_latency_s"],
            "stop_interval": e["stop_interval"], "response_interval": e["response_interval"]}


def _stretch_at(segs: list[Segment], t: float) -> list[Segment]:
    """The stretch of speech under way at ``t``: segments joined across pauses shorter than
    ``BRIEF_PAUSE_S`` (one covers ``t``, or ``t`` falls in such a pause between two, or the
    stretch ends less than ``MET_TOLERANCE_S`` before ``t``), or ``[]``."""
    runs: list[list[Segment]] = []
    for g in segs:
        if runs and g[0] - runs[-1][-1][1] < BRIEF_PAUSE_S:
            runs[-1].append(g)
        else:
            runs.append([g])
    return next((r for r in runs if r[0][0] <= t <= r[-1][1] + MET_TOLERANCE_S), [])


class OverlapScorer:
    """Scores overlap episodes (``info["overlap"]``); ``None`` for other scenes.

    ``asr`` and ``judge`` as for ``FDBScorer``; ``min_speech_ms``: Silero's minimum speech (250).
    """

    info_key = "overlap"

    def __init__(self, profiles=PROFILES, asr="tiny.en", judge="offline", min_speech_ms: int = 250):
        from .fdb import FDBScorer

        self.profiles = (profiles,) if isinstance(profiles, str) else tuple(profiles)
        for p in self.profiles:
            if p not in PROFILES:
                raise ValueError(f"overlap profile must be among {PROFILES}, got {p!r}")
        self._fdb = FDBScorer(profiles=("paper",), asr=asr, judge=judge, min_speech_ms=min_speech_ms)
        self.judge = self._fdb.judge
        self.min_speech_ms = min_speech_ms

    def config(self) -> dict:
        cfg = self._fdb.config()
        cfg["profiles"] = list(self.profiles)
        cfg["vad"] = {"paper": cfg["vad"]["paper"], "fdb15_code": {"vad": "silero-vad", "defaults": True, "unit": "samples",
                                                                    "user_gap_s": fdb15.USER_MERGE_GAP_S,
                                                                    "model_gap_s": fdb15.MODEL_MERGE_GAP_S}}
        if self.judge.name == "offline":
            cfg["judge"]["behaviour_rules"] = BEHAVIOUR_RULES
        return cfg

    def score(self, record) -> dict | None:
        return self.score_details(record)[0]

    def score_details(self, record) -> tuple[dict | None, dict]:
        details: dict = {}
        if not is_overlap_scene(record):
            return None, details
        event = overlap_event(record)
        if event is None:
            raise ValueError(f"scene {record.scene.id}: an overlap episode needs a played event turn "
                             "(interrupt, bc, side or background) after its final turn")
        audio = record.assistant_16k()
        silent = record.assistant_silent
        segs = [] if silent else vad.segments(audio, "paper", min_speech_ms=self.min_speech_ms)
        # words where the rules and the judge read them: from CONTEXT_S before the event to the end
        # of its window (the recogniser costs the most; the rest of a long answer is not needed)
        lo, w_end = event.start - CONTEXT_S, event.end + OVERLAP_S
        spans = [(max(a, lo), min(b, w_end)) for a, b in segs if b >= lo and a <= w_end]
        words = [] if silent else self._fdb.words_for_spans(audio, spans)
        details["paper"] = {"segments": segs, "words": words}
        result = {"event": event.kind, "scene_id": record.scene.id, "onset_s": event.start, "end_s": event.end,
                  "paper": None, "fdb15_code": None}
        if "paper" in self.profiles:
            result["paper"] = _plain(paper_overlap(segs, words, event, self.judge))
        if "fdb15_code" in self.profiles and record.mic0 is not None:
            from ..audio import resample

            model = [] if silent else vad.silero_default_samples(audio)
            # With no assistant speech, v1.5's rules find no stop and no response whatever the input
            # holds: its VAD (the costliest part of scoring a silent agent) is skipped.
            user = vad.silero_default_samples(resample(record.mic0, record.sample_rate, vad.RATE)) if model else []
            details["fdb15_code"] = {"user_vad": user, "model_vad": model}
            result["fdb15_code"] = _plain(fdb15_code_overlap(user, model, event))
        if not silent:
            warning = no_speech_warning(audio, segs)
            if warning:
                result["warnings"] = [warning]
        return result, details


def _plain(d: dict) -> dict:
    """Plain Python numbers; None for NaN (results are JSON)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, (float, np.floating)):
            v = float(v) if np.isfinite(v) else None
        elif isinstance(v, np.bool_):
            v = bool(v)
        out[k] = v
    return out


def score_record(record, asr="tiny.en", judge="offline", min_speech_ms: int = 250) -> dict | None:
    return OverlapScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms).score(record)
