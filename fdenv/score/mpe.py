"""Duplex-MPE's scorer (SPEC 7): SPEC 9's ``info["mpe"]`` counts of one EpisodeRecord.

The four jobs live in four modules: ``mpe_rules`` (pure rules on segments and played turns,
re-exported here), ``mpe`` (``MPEScorer``: segments, words where a rule needs them, judge verdicts;
``score_many`` gives the counts at several ``min_speech_ms`` values from one Silero pass),
``mpe_aggregate`` (rates with bootstrap intervals, paired differences, McNemar, position groups)
and ``mpe_table`` (MPE's per-run table as text).

Conventions (SPEC 7, made precise here):

* Acknowledgement: a segment shorter than 1 s with at most 2 words (the offline judge's rule);
  with an LLM judge, the judge labels every segment shorter than 2 s (acknowledgement vs
  intrusion); longer segments are intrusions. Words are those of the region ASR (below).
* The answer to ``T`` (end ``e``): the first segment overlapping ``[e, e + 5]`` and the segments
  that follow it with gaps under 1 s, cut at ``max_response_s`` (the record's scheduler setting,
  default 20 s) after its start; its words go to the judge with the gold answer.
* Re-asks (natural humans, ``reask`` turns): the asker calls the assistant again no earlier than
  5 s after an unanswered request, so presence, fresh onset and accuracy are scored before it;
  ``answered_after_reask`` counts re-asks that a segment overlapping ``[re-ask start, re-ask end
  + 5 s]`` answered.
* Words: Whisper on each non-silent *region* of the track (``vad.regions``: independent of
  ``min_speech_ms``) that a rule needs, a region longer than 30 s in 30 s pieces; the units do
  not depend on the segmentation, so the sweep reuses the cached transcripts.
* The track is scored as it is saved (16-bit PCM, the FLAC next to each run line), so re-scoring a
  saved run reproduces the live numbers exactly.
* A verdict that could not be had (the judge gave none) is ``None``: the event is left out of the
  rate's denominator and counted in its coverage (``answered`` of ``presence``, ``silence_judged``
  of ``silence_windows``, ``yield_judged`` of ``yield_eligible``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .. import windows as W
from . import vad
from .asr import Word
from .mpe_rules import (  # noqa: F401  (the rules are part of this module's interface)
    DEFAULT_MAX_RESPONSE_S, Segment, answer_span, n4_measures, relative_position, request_measures, silence_windows,
    window_verdict,
)
from .segments import overlaps, text_of, word_in, words_in
from .sound import no_speech_warning


RATE = vad.RATE
ACK_MAX_S = 1.0
ACK_MAX_WORDS = 2
ACK_JUDGE_MAX_S = 2.0  # an LLM judge labels segments shorter than this
ASR_PIECE_S = 30.0  # a longer region is transcribed in pieces of this length
MIN_ELIGIBLE = 30  # yield rate reported only with this many eligible events
DEFAULT_MIN_SPEECH_MS = 250
CONDITIONS = ("explicit", "implicit")
MPE_LABELS = ("T", "N1", "N2", "N3", "N4Q")  # turns that only MPE scores
COUNT_KEYS = (
    "requests", "presence", "fresh_onset", "answered", "correct", "silence_windows", "silence_judged",
    "silence_preserved", "n4_events", "window_response", "yield_eligible", "yield_judged", "yielded",
    "fail_still_speaking", "fail_spoke_again", "reasks", "answered_after_reask",
)

# ============================================================================ segmentation


def scoring_audio(record) -> np.ndarray:
    """The 16 kHz assistant track on the saved file's 16-bit grid (``EpisodeRecord.assistant_16k``),
    so that live scoring and re-scoring a saved run see the same samples."""
    return record.assistant_16k()


# ============================================================================ scorer


@dataclass
class MPEScorer:
    """Scores EpisodeRecords of MPE scenes (SPEC 7, 9).

    ``asr``: a local CTranslate2 Whisper directory, an offline name (``"tiny.en"``), or a callable
    ``(audio16k, offset_s) -> [Word]``. ``judge``: a judge or a spec for ``judge.make_judge``.
    ``score_details`` also returns the segments and words used (for the run log).

    Example:
        >>> import numpy as np
        >>> from fdenv.sim.env import RoomEnv
        >>> env = RoomEnv(scene_set="mpe", split="test")
        >>> obs, info = env.reset(seed=0)
        >>> while "record" not in info:  # a silent assistant
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> counts = MPEScorer().score(info["record"])
        >>> counts["requests"], counts["presence"], counts["fresh_onset"]
        (1, 0, 0)
    """

    asr: object = "tiny.en"
    judge: object = "offline"
    min_speech_ms: int = DEFAULT_MIN_SPEECH_MS
    cache: bool = True

    def __post_init__(self):
        from .judge import make_judge

        self.judge = make_judge(self.judge)

    def config(self) -> dict:
        asr_id = getattr(self.asr, "name", getattr(self.asr, "__name__", "custom")) if callable(self.asr) else str(self.asr)
        if not callable(self.asr):
            try:
                from .asr import model_id

                asr_id = model_id(self.asr)
            except Exception:  # the model may be missing here; name it as configured
                pass
        from .asr import DECODE

        return {"measures": "mpe", "vad": vad.params("paper", self.min_speech_ms),
                "asr": {"model": asr_id, "decode": None if callable(self.asr) else dict(DECODE), "unit": "region"},
                "judge": {"name": self.judge.name, "prompt_version": getattr(self.judge, "prompt_version", None)},
                "acknowledgement": {"max_s": ACK_MAX_S, "max_words": ACK_MAX_WORDS, "judge_max_s": ACK_JUDGE_MAX_S},
                "min_eligible": MIN_ELIGIBLE}

    # ---- public ----------------------------------------------------------------------
    def score(self, record) -> dict | None:
        """SPEC 9's per-episode counts, or ``None`` for a scene without MPE turns."""
        return self.score_details(record)[0]

    def score_details(self, record) -> tuple[dict | None, dict]:
        """``(counts, details)``: ``score``'s counts and ``{"paper": {"segments", "words"}}``, the
        segments and words they used (``{}`` for a scene without MPE turns)."""
        if not is_mpe_scene(record.scene):
            return None, {}
        return self._score_many(record, [self.min_speech_ms])[self.min_speech_ms]

    def score_many(self, record, values: Iterable[int]) -> dict[int, dict]:
        """``{min_speech_ms: counts}`` from one Silero pass per region (the sensitivity sweep)."""
        values = [int(v) for v in values]
        if not is_mpe_scene(record.scene):
            return {v: None for v in values}
        return {v: counts for v, (counts, _) in self._score_many(record, values).items()}

    def _score_many(self, record, values: list[int]) -> dict[int, tuple[dict, dict]]:
        audio = scoring_audio(record)
        probs = vad.region_probs(audio, cache=self.cache)
        regions = [(a, b) for a, b, _ in probs]
        words_memo: dict = {}
        out = {}
        for v in values:
            segs = vad.segments_from_probs(audio, probs, v)
            out[v] = self._measure(record, audio, segs, regions, words_memo, v)
        return out

    # ---- words -----------------------------------------------------------------------
    def _words(self, audio, regions, spans, memo) -> list[Word]:
        """Words of the regions that the spans touch. The unit is the whole region, or, in a region
        longer than 30 s (a talker's), the 30 s pieces of it (from its start) that a span touches:
        units never depend on the segmentation, so the sweep finds every transcript cached."""
        out: list[Word] = []
        piece = int(ASR_PIECE_S * RATE)
        for a, b in regions:
            if b - a <= piece:
                units = [(a, b)]
            else:
                units = [(u, min(b, u + piece)) for u in range(a, b, piece)]
            for ua, ub in units:
                lo, hi = ua / RATE, ub / RATE
                if not any(s <= hi and e >= lo for s, e in spans):
                    continue
                if (ua, ub) not in memo:
                    x = audio[ua:ub]
                    if callable(self.asr):
                        memo[(ua, ub)] = list(self.asr(x, lo))
                    else:
                        from .asr import transcribe

                        memo[(ua, ub)] = transcribe(x, model=self.asr, offset=lo, cache=self.cache)
                out.extend(memo[(ua, ub)])
        return sorted(out, key=lambda w: w.start)

    # ---- measures --------------------------------------------------------------------
    def _measure(self, record, audio, segs, regions, memo, min_speech_ms) -> dict:
        scene = record.scene
        judge = self.judge
        offline = judge.name == "offline"
        max_resp = float((record.config or {}).get("scheduler", {}).get("max_response_s", DEFAULT_MAX_RESPONSE_S))
        turns = list(record.turns)
        counts = {k: 0 for k in COUNT_KEYS}
        details: dict = {"requests": [], "silence": [], "n4": []}

        # which short segments need words for the acknowledgement rule
        short_limit = ACK_MAX_S if offline else ACK_JUDGE_MAX_S
        win_spans = [(a, b) for _, a, b in silence_windows(turns)]
        n4 = W.n4_pairs(turns)
        win_spans += [W.yield_window(r.start, r.end) for _, r in n4]
        need = [s for s in segs if s[1] - s[0] < short_limit and any(overlaps(s, a, b) for a, b in win_spans)]
        requests = [t for t in turns if t.label == "T"]
        answers = {}
        for t in requests:
            m = request_measures(segs, t.end)
            if m["first"] is not None:
                answers[t.id] = answer_span(segs, m["first"], max_resp)
        spans = need + [s for span in answers.values() for s in span]
        words = self._words(audio, regions, spans, memo) if spans else []

        ack_cache: dict = {}
        missing: dict = {}  # why verdicts are missing (SPEC 8): reason -> count, in the result

        def note(verdict):
            if verdict is None:
                why = getattr(judge, "last_failure", None) or "no verdict"
                missing[why] = missing.get(why, 0) + 1
            return verdict

        def is_ack(seg, context=""):
            if seg in ack_cache:
                return ack_cache[seg]
            dur = seg[1] - seg[0]
            if dur >= short_limit:
                v = False
            else:
                ws = words_in(seg, words)
                v = note(judge.acknowledgement(text_of(ws), dur, len(ws), context))
            ack_cache[seg] = v
            return v

        # requests
        for t in requests:
            m = request_measures(segs, t.end)
            counts["requests"] += 1
            counts["presence"] += m["presence"]
            counts["fresh_onset"] += m["fresh_onset"]
            d = {"turn": t.id, "e": round(t.end, 4), "presence": m["presence"], "fresh_onset": m["fresh_onset"],
                 "under_way": m["under_way"], "onset_s": None if m["onset_s"] is None else round(m["onset_s"], 4),
                 "position": relative_position(scene, t.id), "gold": t.gold_answer, "answer": None, "correct": None}
            if t.id in answers:
                span = answers[t.id]
                text = text_of(w for w in words if any(word_in(w, s) for s in span))
                facts = _gold_facts(scene, t.id)
                verdict = note(judge.correct(text, t.gold_answer, t.text, facts=facts)) if t.gold_answer else None
                d["answer"], d["correct"] = text, verdict
                d["span"] = [round(span[0][0], 4), round(span[-1][1], 4)]
                if verdict is not None:
                    counts["answered"] += 1
                    counts["correct"] += bool(verdict)
            reask = next((u for u in turns if u.label == "reask" and u.resolves == t.id), None)
            if reask is not None:  # natural humans: the asker called again (scored on its own)
                counts["reasks"] += 1
                after = any(overlaps(s, *W.reask_window(reask.start, reask.end)) for s in segs)
                counts["answered_after_reask"] += after
                d["reask"] = {"start": round(reask.start, 4), "answered": after}
            details["requests"].append(d)

        # silence windows
        for t, a, b in silence_windows(turns):
            context = t.text
            preserved, intruding = window_verdict(segs, a, b, lambda s, c=context: is_ack(s, c))
            counts["silence_windows"] += 1
            if preserved is not None:
                counts["silence_judged"] += 1
                counts["silence_preserved"] += bool(preserved)
            acks = [s for s in segs if overlaps(s, a, b) and is_ack(s, context) is True]
            details["silence"].append({"turn": t.id, "label": t.label, "window": [round(a, 4), round(b, 4)],
                                       "preserved": preserved, "intrusions": [_seg(s) for s in intruding],
                                       "acknowledgements": [_seg(s) for s in acks]})

        # N4 events
        for q, r in n4:
            m = n4_measures(segs, q.start, q.end, r.start, r.end, lambda s, c=r.text: is_ack(s, c))
            counts["n4_events"] += 1
            counts["window_response"] += m["window_response"]
            if m["eligible"]:
                counts["yield_eligible"] += 1
                if m["yielded"] is not None:
                    counts["yield_judged"] += 1
                    counts["yielded"] += bool(m["yielded"])
                counts["fail_still_speaking"] += m["failure"] == "still_speaking"
                counts["fail_spoke_again"] += m["failure"] == "spoke_again"
            details["n4"].append({"question": q.id, "resolution": r.id, "q": [round(q.start, 4), round(q.end, 4)],
                                  "r": [round(r.start, 4), round(r.end, 4)], **m})

        positions = [d["position"] for d in details["requests"] if d["position"] is not None]
        warning = no_speech_warning(audio, segs)
        counts_out = {
            **({"warnings": [warning]} if warning else {}),
            **counts,
            "condition": scene.condition,
            "pair_id": scene.pair_id,
            "scene_id": scene.id,
            "seed": record.seed,
            "t_position": positions[0] if len(positions) == 1 else (float(np.mean(positions)) if positions else None),
            "min_speech_ms": int(min_speech_ms),
            "judge": judge.name,
            "judge_missing": missing,
            "details": details,
        }
        return counts_out, {"paper": {"segments": segs, "words": words}}


def _gold_facts(scene, turn_id: str):
    try:
        return scene.turn(turn_id).gold_facts
    except KeyError:
        return None


def _seg(s: Segment) -> list[float]:
    return [round(s[0], 4), round(s[1], 4)]


def is_mpe_scene(scene) -> bool:
    """The one rule for "this scene is scored with MPE's measures": a scene of kind ``mpe``, or one
    with a request, a silence turn or an N4 question (a hand-written multi-party scene)."""
    return scene.kind == "mpe" or any(t.label in MPE_LABELS for t in scene.turns)


def score_record(record, asr="tiny.en", judge="offline", min_speech_ms: int = DEFAULT_MIN_SPEECH_MS) -> dict | None:
    """One episode's ``info["mpe"]`` (see ``MPEScorer``)."""
    return MPEScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms).score(record)
