"""Duplex-MPE measures (SPEC 7) on an EpisodeRecord, SPEC 9's ``info["mpe"]`` counts, and their
aggregation to rates (``aggregate_mpe``) and MPE's per-run table (``format_mpe``).

Layers:

1. Pure rules on segments ``[(start_s, end_s)]`` (the ``paper`` profile's Silero segments of the
   assistant track, edges at the sound's edges) and played turns: ``request_measures``, ``answer_span``,
   ``silence_windows``, ``window_verdict``, ``n4_measures``. Hand-built cases test these directly.
2. ``MPEScorer``: segments, words (Whisper, only where a rule needs them) and judge verdicts for
   one record; ``score`` gives the counts, ``score_many`` the counts at several ``min_speech_ms``
   values from one Silero pass (the sensitivity sweep).
3. ``aggregate_mpe``: rates with bootstrap 95% intervals over scenes with pairs kept together,
   explicit and implicit side by side, paired differences with exact McNemar p values, failure
   kinds, request-position groups, window response; ``format_mpe`` prints MPE's table.

Conventions (SPEC 7, made precise here):

* A segment *overlaps* ``[a, b]`` when ``start <= b and end >= a`` (closed); it *covers* ``t`` when
  ``start <= t < end``.
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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from .. import windows as W
from ..windows import silence_windows  # noqa: F401  (part of this module's rules)
from . import stats, vad
from .asr import Word
from .fdb import text_of, words_in
from .sound import no_speech_warning

Segment = tuple[float, float]

RATE = vad.RATE
ANSWER_GAP_S = 1.0  # the answer ends at the first silence this long
DEFAULT_MAX_RESPONSE_S = W.KNOBS["max_response_s"]
ACK_MAX_S = 1.0
ACK_MAX_WORDS = 2
ACK_JUDGE_MAX_S = 2.0  # an LLM judge labels segments shorter than this
ASR_PIECE_S = 30.0  # a longer region is transcribed in pieces of this length
MIN_ELIGIBLE = 30  # yield rate reported only with this many eligible events
DEFAULT_MIN_SPEECH_MS = 250
CONDITIONS = ("explicit", "implicit")
COUNT_KEYS = (
    "requests", "presence", "fresh_onset", "answered", "correct", "silence_windows", "silence_judged",
    "silence_preserved", "n4_events", "window_response", "yield_eligible", "yield_judged", "yielded",
    "fail_still_speaking", "fail_spoke_again", "reasks", "answered_after_reask",
)

# ============================================================================ rules


def overlaps(seg: Segment, a: float, b: float) -> bool:
    return seg[0] <= b and seg[1] >= a


def covers(seg: Segment, t: float) -> bool:
    return seg[0] <= t < seg[1]


def request_measures(segments: Sequence[Segment], e: float) -> dict:
    """Presence and fresh onset for a request ending at ``e`` (SPEC 7)."""
    a, b = W.presence_window(e)
    hits = [s for s in segments if overlaps(s, a, b)]
    under_way = any(covers(s, e) for s in segments)
    onsets = [s for s in segments if e < s[0] <= b]
    return {
        "presence": bool(hits),
        "fresh_onset": (not under_way) and bool(onsets),
        "under_way": under_way,
        "first": min(hits) if hits else None,
        "onset_s": (min(onsets)[0] - e) if onsets else None,
    }


def answer_span(segments: Sequence[Segment], first: Segment, max_response_s: float = DEFAULT_MAX_RESPONSE_S,
                gap_s: float = ANSWER_GAP_S) -> list[Segment]:
    """``first`` and the segments after it with gaps under ``gap_s``, cut at ``max_response_s``
    after ``first``'s start."""
    limit = first[0] + max_response_s
    out = [first]
    for s in sorted(segments):
        if s[0] <= first[0]:
            continue
        if s[0] - out[-1][1] < gap_s and s[0] < limit:
            out.append(s)
        else:
            break
    return [(a, min(b, limit)) for a, b in out]


def window_verdict(segments: Sequence[Segment], a: float, b: float, is_ack) -> tuple[bool | None, list]:
    """(preserved?, intruding segments) for a silence window ``[a, b]``: preserved when every
    overlapping segment is an acknowledgement; ``None`` when some verdict is missing and none
    intrudes."""
    verdicts = [(s, is_ack(s)) for s in segments if overlaps(s, a, b)]
    intruding = [s for s, v in verdicts if v is False]
    if intruding:
        return False, intruding
    if any(v is None for _, v in verdicts):
        return None, []
    return True, []


def n4_measures(segments: Sequence[Segment], q_start: float, q: float, r: float, r_end: float, is_ack) -> dict:
    """Window response, eligibility and yield for one N4Q (``[q_start, q]``) and its N4R (start
    ``r``, end ``r_end``), SPEC 7. The gap before the answer runs to the played ``r`` (3 s after
    ``q`` by default, ``fdenv.windows``). ``failure``: ``still_speaking`` (a segment covers
    ``r + 2``), ``spoke_again`` (silent at ``r + 2``, then a non-acknowledgement segment in the
    window)."""
    out = {
        "window_response": any(overlaps(s, q_start, r) for s in segments),
        "spoke_during_question": any(overlaps(s, q_start, q) for s in segments),
        "started_in_gap": any(q < s[0] <= r for s in segments),
        "speaking_at_r": any(covers(s, r) for s in segments),
        "eligible": False, "yielded": None, "failure": None,
    }
    out["eligible"] = (not out["spoke_during_question"]) and out["started_in_gap"] and out["speaking_at_r"]
    if not out["eligible"]:
        return out
    deadline, w_end = W.yield_window(r, r_end)
    if any(covers(s, deadline) for s in segments):
        out["yielded"], out["failure"] = False, "still_speaking"
        return out
    preserved, _ = window_verdict(segments, deadline, w_end, is_ack)
    if preserved is False:
        # a segment under way at r that ends exactly at the deadline never stopped: still speaking
        through = any(covers(s, r) and s[1] >= deadline for s in segments)
        out["yielded"], out["failure"] = False, "still_speaking" if through else "spoke_again"
    else:
        out["yielded"] = preserved
    return out


def relative_position(scene, turn_id: str) -> float | None:
    """The request's relative index in the scene: index / number of turns (SPEC 7)."""
    ids = [t.id for t in scene.turns]
    return ids.index(turn_id) / len(ids) if turn_id in ids else None


# ============================================================================ segmentation


def scoring_audio(record, saved: bool | None = None) -> np.ndarray:
    """The 16 kHz assistant track on the saved file's 16-bit grid (``EpisodeRecord.assistant_16k``),
    so that live scoring and re-scoring a saved run see the same samples. ``saved`` is accepted
    for compatibility; the quantisation is idempotent, so it does not matter."""
    return record.assistant_16k()


# ============================================================================ scorer


@dataclass
class MPEScorer:
    """Scores EpisodeRecords of MPE scenes (SPEC 7, 9).

    ``asr``: a local CTranslate2 Whisper directory, an offline name (``"tiny.en"``), or a callable
    ``(audio16k, offset_s) -> [Word]``. ``judge``: a judge or a spec for ``judge.make_judge``.
    After ``score``, ``last_details`` holds the segments and words used (for the run log).
    """

    asr: object = "tiny.en"
    judge: object = "offline"
    min_speech_ms: int = DEFAULT_MIN_SPEECH_MS
    cache: bool = True
    last_details: dict = field(default_factory=dict, repr=False)

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
    def score(self, record, saved: bool | None = None) -> dict | None:
        """SPEC 9's per-episode counts, or ``None`` for a scene without MPE turns. ``saved``: the
        record was loaded from a run folder (see ``scoring_audio``; ``None`` detects it)."""
        if not _is_mpe(record.scene):
            self.last_details = {}
            return None
        return self.score_many(record, [self.min_speech_ms], saved=saved)[self.min_speech_ms]

    def score_many(self, record, values: Iterable[int], saved: bool | None = None) -> dict[int, dict]:
        """``{min_speech_ms: counts}`` from one Silero pass per region (the sensitivity sweep)."""
        values = [int(v) for v in values]
        if not _is_mpe(record.scene):
            return {v: None for v in values}
        audio = scoring_audio(record, saved)
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
                text = text_of(w for w in words if any(_word_in(w, s) for s in span))
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
        self.last_details = {"paper": {"segments": segs, "words": words}}
        warning = no_speech_warning(audio, segs)
        return {
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


def _sum_counts(dicts) -> dict:
    out: dict = {}
    for d in dicts:
        for k, n in d.items():
            out[k] = out.get(k, 0) + n
    return out


def _gold_facts(scene, turn_id: str):
    try:
        return scene.turn(turn_id).gold_facts
    except KeyError:
        return None


def _word_in(w: Word, seg: Segment) -> bool:
    from .fdb import word_in

    return word_in(w, seg)


def _seg(s: Segment) -> list[float]:
    return [round(s[0], 4), round(s[1], 4)]


def _is_mpe(scene) -> bool:
    return scene.kind == "mpe" or any(t.label in ("T", "N1", "N2", "N3", "N4Q") for t in scene.turns)


def score_record(record, asr="tiny.en", judge="offline", min_speech_ms: int = DEFAULT_MIN_SPEECH_MS) -> dict | None:
    """One episode's ``info["mpe"]`` (see ``MPEScorer``)."""
    return MPEScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms).score(record)


# ============================================================================ aggregation

CAPABILITIES = (  # key, label, numerator, denominator, denominator label
    ("presence", "response presence", "presence", "requests", "requests"),
    ("fresh_onset", "fresh-onset response rate", "fresh_onset", "requests", "requests"),
    ("accuracy", "conditional answer accuracy", "correct", "answered", "judged requests with presence"),
    ("silence_preservation", "silence preservation", "silence_preserved", "silence_judged", "silence windows"),
    ("yield", "answering-window yield", "yielded", "yield_judged", "eligible N4 events"),
)
DIAGNOSTICS = (
    ("window_response", "N4 window response", "window_response", "n4_events", "N4 events"),
    ("yield_eligibility", "N4 yield eligibility", "yield_eligible", "n4_events", "N4 events"),
)
MCNEMAR_ON = ("presence", "fresh_onset")


def _items(source) -> list[dict]:
    """Per-episode MPE counts from run lines, ``info["mpe"]`` dicts, records, or a run folder."""
    if isinstance(source, (str, Path)):
        from ..runs import read_run

        source = read_run(source)
    out = []
    scorer = None
    for i, item in enumerate(source):
        if isinstance(item, dict) and "requests" in item:
            out.append(dict(item))
        elif isinstance(item, dict) and "mpe" in item:
            if item["mpe"]:
                d = dict(item["mpe"])
                for k in ("pair_id", "condition", "scene_id", "seed"):
                    if d.get(k) is None and item.get(k) is not None:
                        d[k] = item[k]
                out.append(d)
        elif isinstance(item, dict):
            continue  # a run line of another kind (FDB)
        elif hasattr(item, "assistant") and hasattr(item, "turns"):
            if scorer is None:
                scorer = MPEScorer()
            d = scorer.score(item)
            if d is not None:
                out.append(d)
        else:
            raise TypeError(f"item {i}: expected a run line, an info['mpe'] dict or an EpisodeRecord, got {type(item).__name__}")
    return out


def _group(d: dict, i: int):
    return d.get("pair_id") or d.get("scene_id") or f"#{i}"


def _est(e: stats.Estimate, num: float, den: float, den_label: str) -> dict:
    return {"value": e.value, "lo": e.lo, "hi": e.hi, "n": int(round(den)), "num": int(round(num)),
            "den": int(round(den)), "den_label": den_label, "n_groups": e.n_groups}


def _rates(items: list[dict], groups: list, specs, boot: dict) -> dict:
    metrics = {key: ([d.get(num, 0) or 0 for d in items], [d.get(den, 0) or 0 for d in items]) for key, _, num, den, _ in specs}
    ests = stats.bootstrap_ratios(metrics, groups, **boot)
    out = {}
    for key, _, num, den, den_label in specs:
        out[key] = _est(ests[key], sum(metrics[key][0]), sum(metrics[key][1]), den_label)
    return out


def position_groups(items: list[dict]) -> tuple[list[float], list[int | None]]:
    """Quartile cut points of the requests' relative positions, and each item's group (1..4)."""
    pos = [d.get("t_position") for d in items]
    known = np.array([p for p in pos if p is not None], dtype=float)
    if known.size == 0:
        return [], [None] * len(items)
    cuts = [float(c) for c in np.quantile(known, [0.25, 0.5, 0.75])]
    return cuts, [None if p is None else 1 + int(np.searchsorted(cuts, p, side="left")) for p in pos]


def aggregate_mpe(source, n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED,
                  min_eligible: int = MIN_ELIGIBLE) -> dict:
    """MPE's per-run table from per-episode counts (run lines with ``"mpe"``, ``info["mpe"]``
    dicts, EpisodeRecords or a run folder).

    Returns ``{"n_episodes", "bootstrap", "conditions": {cond: {metric: estimate}}, "paired":
    {metric: {"diff": estimate (implicit - explicit), "mcnemar": {...} (presence, fresh onset)}},
    "failures": {cond: {...}}, "coverage": {cond: {...}}, "positions": {"cuts", cond: [...]},
    "headline": [(key, label, estimate), ...]}``. Estimates are dicts with ``value``, ``lo``,
    ``hi`` (95% bootstrap over scenes, pairs kept together), ``n`` (= ``den``, the denominator),
    ``num``. The yield rate is ``None`` (``"reported": False``) under ``min_eligible`` eligible
    events; its counts are always there.
    """
    items = _items(source)
    boot = {"n_resamples": n_resamples, "seed": seed}
    conds = [c for c in CONDITIONS if any(d.get("condition") == c for d in items)]
    subsets = {c: [d for d in items if d.get("condition") == c] for c in conds}
    subsets["all"] = items
    cuts, group_of = position_groups(items)
    out: dict = {
        "n_episodes": len(items),
        "bootstrap": {**boot, "level": stats.LEVEL, "unit": "pair (scene when no pair id)"},
        "min_eligible": min_eligible,
        "judge": sorted({d.get("judge") for d in items if d.get("judge")}),
        "min_speech_ms": sorted({d.get("min_speech_ms") for d in items if d.get("min_speech_ms") is not None}),
        "conditions": {}, "failures": {}, "coverage": {}, "positions": {"cuts": cuts}, "paired": {},
    }
    gidx = {id(d): g for d, g in zip(items, group_of)}
    for cond, sub in subsets.items():
        groups = [_group(d, i) for i, d in enumerate(sub)]
        rates = _rates(sub, groups, CAPABILITIES + DIAGNOSTICS, boot) if sub else {}
        if sub:
            y = rates["yield"]
            eligible = sum(d.get("yield_eligible", 0) for d in sub)
            y["eligible"] = eligible
            y["reported"] = eligible >= min_eligible
            if not y["reported"]:
                y.update(value=None, lo=None, hi=None, note=f"{eligible} eligible events (< {min_eligible}): rate not reported")
        out["conditions"][cond] = rates
        tot = {k: sum(d.get(k, 0) or 0 for d in sub) for k in COUNT_KEYS}
        out["failures"][cond] = {"eligible": tot["yield_eligible"], "yielded": tot["yielded"],
                                 "still_speaking": tot["fail_still_speaking"], "spoke_again": tot["fail_spoke_again"],
                                 "n4_events": tot["n4_events"], "window_response": tot["window_response"],
                                 "reasks": tot["reasks"], "answered_after_reask": tot["answered_after_reask"]}
        out["coverage"][cond] = {
            "accuracy": {"judged": tot["answered"], "of": tot["presence"]},
            "silence": {"judged": tot["silence_judged"], "of": tot["silence_windows"]},
            "yield": {"judged": tot["yield_judged"], "of": tot["yield_eligible"]},
            "missing": _sum_counts(d.get("judge_missing") or {} for d in sub),
        }
        out["positions"][cond] = _position_rates(sub, [gidx.get(id(d)) for d in sub], boot)
    if set(conds) == set(CONDITIONS):
        out["paired"] = _paired(subsets["explicit"], subsets["implicit"], boot, min_eligible)
    out["headline"] = _headline(out, conds or ["all"])
    return out


def _position_rates(items: list[dict], group_of: list, boot: dict) -> list[dict]:
    """Presence, fresh onset and accuracy per request-position group (1..4), from one draw over
    the condition's pairs (each metric counts only its group's requests)."""
    specs = CAPABILITIES[:3]
    metrics = {}
    for g in range(1, 5):
        inside = [1.0 if q == g else 0.0 for q in group_of]
        for key, _, num, den, _ in specs:
            metrics[(g, key)] = ([(d.get(num, 0) or 0) * w for d, w in zip(items, inside)],
                                 [(d.get(den, 0) or 0) * w for d, w in zip(items, inside)])
    ests = stats.bootstrap_ratios(metrics, [_group(d, i) for i, d in enumerate(items)], **boot) if items else {}
    out = []
    for g in range(1, 5):
        members = [d for d, q in zip(items, group_of) if q == g]
        if not members:
            out.append({"group": g, "n": 0})
            continue
        pos = [d["t_position"] for d in members]
        rates = {key: _est(ests[(g, key)], sum(metrics[(g, key)][0]), sum(metrics[(g, key)][1]), den_label)
                 for key, _, _, _, den_label in specs}
        out.append({"group": g, "n": len(members), "range": [min(pos), max(pos)], **rates})
    return out


def _paired(ex: list[dict], im: list[dict], boot: dict, min_eligible: int = MIN_ELIGIBLE) -> dict:
    specs = CAPABILITIES + DIAGNOSTICS
    side = lambda items: {key: ([d.get(num, 0) for d in items], [d.get(den, 0) for d in items])  # noqa: E731
                          for key, _, num, den, _ in specs}
    diffs = stats.bootstrap_ratio_diffs(side(ex), [_group(d, i) for i, d in enumerate(ex)],
                                        side(im), [_group(d, i) for i, d in enumerate(im)], **boot)
    out = {}
    for key, *_ in specs:
        e = diffs[key]
        out[key] = {"diff": {"value": e.value, "lo": e.lo, "hi": e.hi, "n": e.n_groups, "n_groups": e.n_groups}}
    # the yield rate is only reported from min_eligible events on, so is its difference
    eligible = min(sum(d.get("yield_eligible", 0) for d in side_) for side_ in (ex, im))
    if eligible < min_eligible:
        out["yield"]["diff"].update(value=None, lo=None, hi=None, reported=False,
                                    note=f"{eligible} eligible events in a condition (< {min_eligible}): not reported")
    # exact McNemar on presence and fresh onset: pairs matched by (pair id, seed)
    key_of = lambda d: (d.get("pair_id"), d.get("seed"))  # noqa: E731
    im_by = {key_of(d): d for d in im if d.get("pair_id")}
    matched = [(d, im_by[key_of(d)]) for d in ex if d.get("pair_id") and key_of(d) in im_by]
    for key in MCNEMAR_ON:
        a = [_all(d, key) for d, _ in matched]
        b = [_all(d, key) for _, d in matched]
        out[key]["mcnemar"] = stats.mcnemar_exact(a, b)
    return out


def _all(d: dict, key: str) -> int | None:
    """1 when every request of the episode had the outcome, 0 when not, None without requests."""
    n = d.get("requests", 0)
    return None if not n else int(d.get(key, 0) == n)


def _headline(agg: dict, conds: list[str]) -> list:
    rows = []
    for key, label, *_ in CAPABILITIES:
        for cond in conds:
            e = agg["conditions"].get(cond, {}).get(key)
            if e is not None:
                rows.append((f"{key}.{cond}", f"{label} ({cond})" if cond != "all" else label, e))
        if "explicit" in conds and "implicit" in conds and key in agg.get("paired", {}):
            p = agg["paired"][key]
            d = dict(p["diff"])
            if "mcnemar" in p:
                d["p"] = p["mcnemar"]["p"]
            rows.append((f"{key}.diff", f"{label} (implicit - explicit)", d))
    return rows


# ============================================================================ text table


def _fmt_rate(e: dict | None) -> str:
    if not e:
        return "-"
    frac = f"{e.get('num', 0)}/{e.get('den', e.get('n', 0))}"
    if e.get("value") is None:
        return f"- ({frac})" + (" <30 eligible" if e.get("reported") is False else "")
    ci = f" [{e['lo']:.3f}, {e['hi']:.3f}]" if e.get("lo") is not None else ""
    return f"{e['value']:.3f}{ci} ({frac})"


def _fmt_diff(p: dict | None) -> str:
    if not p or p.get("diff", {}).get("value") is None:
        return "-"
    d = p["diff"]
    s = f"{d['value']:+.3f}"
    if d.get("lo") is not None:
        s += f" [{d['lo']:+.3f}, {d['hi']:+.3f}]"
    if "mcnemar" in p and p["mcnemar"]["p"] is not None:
        s += f" p={p['mcnemar']['p']:.3g}"
    return s


def mpe_rows(agg: dict) -> list[dict]:
    """MPE's table as rows: capability, denominator, explicit, implicit, difference, p value."""
    rows = []
    for key, label, _, _, den_label in CAPABILITIES + DIAGNOSTICS:
        p = agg.get("paired", {}).get(key)
        rows.append({
            "key": key, "capability": label, "denominator": den_label,
            "explicit": agg["conditions"].get("explicit", {}).get(key),
            "implicit": agg["conditions"].get("implicit", {}).get(key),
            "all": agg["conditions"].get("all", {}).get(key),
            "diff": None if p is None else p["diff"],
            "p": None if p is None or "mcnemar" not in p else p["mcnemar"]["p"],
        })
    return rows


def format_mpe(agg: dict) -> str:
    """MPE's per-run table as text: each capability with its denominator and 95% interval,
    explicit and implicit side by side, the paired difference (implicit - explicit) with its
    exact McNemar p value (presence, fresh onset); then failure kinds, coverage and the
    request-position groups."""
    b = agg["bootstrap"]
    lines = [f"MPE: {agg['n_episodes']} episodes; 95% bootstrap intervals over pairs ({b['n_resamples']} resamples, "
             f"seed {b['seed']}); judge {', '.join(agg['judge']) or '-'}; min_speech_ms {agg['min_speech_ms']}"]
    head = ("capability", "denominator", "explicit", "implicit", "implicit - explicit")
    table = [head]
    for r in mpe_rows(agg):
        ex, im = r["explicit"], r["implicit"]
        if ex is None and im is None:
            ex = r["all"]
        table.append((r["capability"], r["denominator"], _fmt_rate(ex), _fmt_rate(im),
                      _fmt_diff(agg.get("paired", {}).get(r["key"]))))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for i, row in enumerate(table):
        lines.append("  ".join(c.ljust(widths[j]) for j, c in enumerate(row)).rstrip())
        if i == 0:
            lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
    for cond, f in agg["failures"].items():
        if cond == "all" and len(agg["failures"]) > 1:
            continue
        cov = agg["coverage"][cond]
        lines.append(f"{cond}: yield failures: still speaking at r+2 s {f['still_speaking']}, stopped then spoke again "
                     f"{f['spoke_again']} (of {f['eligible']} eligible, {f['n4_events']} N4 events, "
                     f"{f['window_response']} with window response); coverage: accuracy {cov['accuracy']['judged']}/"
                     f"{cov['accuracy']['of']}, silence {cov['silence']['judged']}/{cov['silence']['of']}, "
                     f"yield {cov['yield']['judged']}/{cov['yield']['of']}")
        if cov.get("missing"):  # verdicts the judge could not give, and why
            lines.append(f"{cond}: missing verdicts: " + ", ".join(f"{n} x {why}" for why, n in sorted(cov["missing"].items())))
    cuts = agg["positions"].get("cuts")
    if cuts:
        lines.append("request position quartiles (relative index cut at " + ", ".join(f"{c:.2f}" for c in cuts) + "):")
        for cond in ("explicit", "implicit", "all"):
            if cond not in agg["positions"] or (cond == "all" and len(agg["failures"]) > 1):
                continue
            cells = []
            for g in agg["positions"][cond]:
                if not g.get("n"):
                    cells.append(f"Q{g['group']} -")
                    continue
                cells.append(f"Q{g['group']} presence {_short(g['presence'])} fresh {_short(g['fresh_onset'])} "
                             f"acc {_short(g['accuracy'])}")
            lines.append(f"  {cond}: " + " | ".join(cells))
    return "\n".join(lines)


def _short(e: dict) -> str:
    return "-" if e.get("value") is None else f"{e['value']:.2f}"


def mpe_summary(source, n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED) -> str:
    """``format_mpe(aggregate_mpe(source))``: the table of a run folder, lines or records."""
    return format_mpe(aggregate_mpe(source, n_resamples=n_resamples, seed=seed))


def rank_correlation(aggs: Sequence[dict], metric_a: str = "fresh_onset", metric_b: str = "presence",
                     conditions: Sequence[str] = CONDITIONS) -> float | None:
    """Spearman correlation between the rankings of runs' entries (one per run and condition, as in
    MPE's sensitivity analysis) by two metrics: ``aggs`` are ``aggregate_mpe`` results (several
    runs, or one run under several ``min_speech_ms`` values against another metric)."""
    xs, ys = [], []
    for agg in aggs:
        for cond in conditions:
            c = agg["conditions"].get(cond)
            if not c:  # a condition without episodes
                continue
            xs.append(c[metric_a]["value"])
            ys.append(c[metric_b]["value"])
    return stats.spearman(xs, ys)
