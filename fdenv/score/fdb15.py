"""The ``fdb15_code`` profile: Full-Duplex-Bench v1.5's timing rules and behaviour categories.

Pure functions on plain inputs (no audio, no models), written for fdenv from the public v1.5
evaluation code's rules (``v1_v1.5/evaluation/get_timing.py`` and ``instruction/behavior.txt``);
tests/data/fdb15_golden holds the values the public functions compute and this module must
reproduce exactly (float for float).

Timing (one sample: the input track with every non-assistant voice, the assistant's output track)::

    t = timing(user_vad, model_vad, unit="samples")   # Silero's get_speech_timestamps output
    t = timing(user_segs, model_segs)                 # or segments in seconds
    t["latency_stop_list"]   # [[start, end], ...]: where user and model speech overlap
    t["latency_resp_list"]   # [[user_end, next_model_start], ...]
    e = event_timing(t, onset_s, until_s)             # one event's stop/response latency (fdenv)

The rules, step by step (``timing`` runs them in this order):

1. ``seconds_from_vad``: Silero segments in samples -> seconds (``sample / 16000``).
2. ``merge_segments``: sort; merge a segment into the previous one when ``start - previous end
   <= gap`` (computed in floats: ``1.6 - 1.0 > 0.6`` is not merged, ``0.85 - 0.25 == 0.6`` is);
   the user track with 0.6 s, the model track with 0.5 s.
3. ``stop_intervals``: a two-pointer walk over both lists (the pointer with the earlier end moves;
   on equal ends the model's) collects every intersection of positive length; of those ending in
   the same millisecond the shortest is kept (the first on a tie); rounded to 3 decimals and sorted
   by end. Its length is the stop latency: from the overlap's start (the later of the two onsets)
   to the first of the two to stop. A model that talks through a user segment gets that segment's
   length, as in v1.5.
4. ``response_intervals``: for each user segment, the first model start (in list order) strictly
   after its end; user segments sharing that start keep the latest (rounded) end, the first
   listed on a tie; ``[round(user end, 3), round(model start, 3)]``, sorted by the model start. A
   user segment with no later model start has none.

``event_timing`` is fdenv's reading of those lists for one event (v1.5 reports only the lists):
the first stop interval that meets ``[onset_s, until_s]`` and the first response interval whose
user end lies in it, with their lengths as ``stop_latency_s`` / ``response_latency_s``.

Behaviour categories (v1.5's C axis, one per event): ``BEHAVIOURS`` and ``BEHAVIOUR_DEFINITIONS``;
the judge prompt is ``prompts/behaviour_v1.txt`` (user template fields: ``BEHAVIOUR_FIELDS``),
its reply is read by ``parse_behaviour``, and ``behaviour_shares`` gives v1.5's per-tag shares.
Out of scope: v1.5's prosody and speech-quality measures (UTMOSv2, pitch, intensity, speaking
rate before/after the event) and its clean-reference replies (fdenv runs closed loop).
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Iterable, Mapping

SAMPLE_RATE = 16_000  # Silero runs on 16 kHz tracks; VAD outputs are sample indices at this rate
USER_MERGE_GAP_S = 0.6
MODEL_MERGE_GAP_S = 0.5
STOP_KEY = "latency_stop_list"
RESPONSE_KEY = "latency_resp_list"

Segment = tuple[float, float]
Interval = list[float]


# ------------------------------------------------------------------------------ input checks


def _time(x, where: str, unit: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{where}: expected a number of {unit}, got {type(x).__name__} {x!r}")
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{where}: {x!r} is not a time; give a finite number of {unit} >= 0")
    return float(x)  # exact for sample indices below 2**53; plain floats in every result


def _pairs(segments, name: str, unit: str) -> list[tuple]:
    """Validated ``(start, end)`` pairs of a segment list (pairs or Silero's ``{"start", "end"}``
    dicts), start <= end; order is free (the rules sort where v1.5 sorts)."""
    if isinstance(segments, (str, bytes, Mapping)) or not isinstance(segments, Iterable):
        raise TypeError(f"{name}: expected a list of [start, end] segments in {unit}, got {type(segments).__name__}")
    out = []
    for i, seg in enumerate(segments):
        where = f"{name}[{i}]"
        if isinstance(seg, Mapping):
            if "start" not in seg or "end" not in seg:
                raise ValueError(f"{where}: a VAD dict needs 'start' and 'end' keys, got {sorted(seg)}")
            pair = (seg["start"], seg["end"])
        else:  # a pair: tuple, list, a row of an array
            pair = tuple(seg) if isinstance(seg, Iterable) and not isinstance(seg, (str, bytes)) else ()
            if len(pair) != 2:
                raise ValueError(f"{where}: expected [start, end] in {unit}, got {seg!r}")
        s, e = _time(pair[0], f"{where} start", unit), _time(pair[1], f"{where} end", unit)
        if e < s:
            raise ValueError(f"{where}: end {e!r} is before start {s!r}; give [start, end] with start <= end")
        out.append((s, e))
    return out


def _gap(gap_s, name: str = "gap_s") -> float:
    return _time(gap_s, name, "seconds")


# ------------------------------------------------------------------------------ timing rules


def seconds_from_vad(timestamps, sample_rate: int = SAMPLE_RATE) -> list[Segment]:
    """Silero's ``get_speech_timestamps`` output (sample indices; ``{"start", "end"}`` dicts or
    ``[start, end]`` pairs) in seconds, ``sample / sample_rate``, in the given order."""
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, numbers.Integral) or sample_rate <= 0:
        raise ValueError(f"sample_rate: expected a positive whole number of Hz, got {sample_rate!r}")
    return [(s / sample_rate, e / sample_rate) for s, e in _pairs(timestamps, "timestamps", "samples")]


def merge_segments(segments, gap_s: float) -> list[Segment]:
    """Sorted segments (seconds) with those separated by at most ``gap_s`` merged (v1.5's rule:
    ``start - previous end <= gap_s`` in floats; a nested segment is absorbed)."""
    gap_s = _gap(gap_s)
    segs = sorted(_pairs(segments, "segments", "seconds"))
    merged: list[Segment] = []
    for s, e in segs:
        if merged and s - merged[-1][1] <= gap_s:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def stop_intervals(user, model) -> list[Interval]:
    """Overlaps of user and model speech (merged segment lists, seconds): ``[[start, end], ...]``
    rounded to ms, sorted by end; one per end millisecond (the shortest). See the module doc."""
    user, model = _pairs(user, "user", "seconds"), _pairs(model, "model", "seconds")
    shortest: dict[int, Segment] = {}
    i = j = 0
    while i < len(user) and j < len(model):
        s, e = max(user[i][0], model[j][0]), min(user[i][1], model[j][1])
        if e > s:
            key = int(round(e * 1000))
            if key not in shortest or e - s < shortest[key][1] - shortest[key][0]:
                shortest[key] = (s, e)
        if user[i][1] < model[j][1]:
            i += 1
        else:
            j += 1
    return [[round(s, 3), round(e, 3)] for s, e in sorted(shortest.values(), key=lambda iv: iv[1])]


def response_intervals(user, model) -> list[Interval]:
    """``[[user end, next model start], ...]`` (merged segment lists, seconds), rounded to ms,
    sorted by the model start; one per model start (the latest user end). See the module doc."""
    user, model = _pairs(user, "user", "seconds"), _pairs(model, "model", "seconds")
    by_start: dict[int, Interval] = {}
    for _, u_end in user:
        nxt = next((m_start for m_start, _ in model if m_start > u_end), None)
        if nxt is None:
            continue
        key = int(round(nxt * 1000))
        iv = [round(u_end, 3), round(nxt, 3)]
        if key not in by_start or iv[0] > by_start[key][0]:
            by_start[key] = iv
    return sorted(by_start.values(), key=lambda iv: iv[1])


def timing(user, model, *, unit: str = "s", sample_rate: int = SAMPLE_RATE,
           user_gap_s: float = USER_MERGE_GAP_S, model_gap_s: float = MODEL_MERGE_GAP_S) -> dict:
    """v1.5's ``latency_intervals.json`` for one sample, from the raw (unmerged) VAD segments of
    the input track (``user``: every voice but the assistant's) and the assistant's track.

    ``unit="s"``: segments in seconds; ``unit="samples"``: Silero's sample indices at
    ``sample_rate``. Returns ``{"latency_stop_list": [...], "latency_resp_list": [...],
    "user_segments": [...], "model_segments": [...]}`` (the last two: the merged segments, seconds).
    """
    if unit == "samples":
        user_s, model_s = seconds_from_vad(user, sample_rate), seconds_from_vad(model, sample_rate)
    elif unit == "s":
        user_s, model_s = _pairs(user, "user", "seconds"), _pairs(model, "model", "seconds")
    else:
        raise ValueError(f"unit: expected 's' (segments in seconds) or 'samples' (VAD sample indices), got {unit!r}")
    u = merge_segments(user_s, _gap(user_gap_s, "user_gap_s"))
    m = merge_segments(model_s, _gap(model_gap_s, "model_gap_s"))
    return {STOP_KEY: stop_intervals(u, m), RESPONSE_KEY: response_intervals(u, m),
            "user_segments": u, "model_segments": m}


def latencies(intervals) -> list[float]:
    """Each interval's length, ``end - start`` (seconds; of the rounded ends, so within 1 ms)."""
    return [e - s for s, e in _pairs(intervals, "intervals", "seconds")]


def event_timing(result: Mapping, onset_s: float, until_s: float = math.inf) -> dict:
    """One event's stop and response intervals from a ``timing`` result: the first stop interval
    meeting ``[onset_s, until_s]`` and the first response interval whose user end lies in it.

    ``until_s``: where this event's reach ends (the next event's onset, or the episode end).
    Returns ``{"stop_interval", "stop_latency_s", "response_interval", "response_latency_s"}``,
    ``None`` where there is none (no overlap: the assistant was silent at the event or stopped
    before it; no response: it never started again after the event's speech).
    """
    if not isinstance(result, Mapping) or STOP_KEY not in result or RESPONSE_KEY not in result:
        raise ValueError(f"result: expected a timing() result with {STOP_KEY!r} and {RESPONSE_KEY!r}")
    onset_s = _time(onset_s, "onset_s", "seconds")
    if not (isinstance(until_s, numbers.Real) and not isinstance(until_s, bool)) or math.isnan(until_s) or until_s < onset_s:
        raise ValueError(f"until_s: expected a time >= onset_s ({onset_s!r}), got {until_s!r}")
    stops = _pairs(result[STOP_KEY], STOP_KEY, "seconds")
    resps = _pairs(result[RESPONSE_KEY], RESPONSE_KEY, "seconds")
    stop = next((iv for iv in stops if iv[0] <= until_s and iv[1] >= onset_s), None)
    resp = next((iv for iv in resps if onset_s <= iv[0] <= until_s), None)
    return {"stop_interval": list(stop) if stop else None, "stop_latency_s": stop[1] - stop[0] if stop else None,
            "response_interval": list(resp) if resp else None,
            "response_latency_s": resp[1] - resp[0] if resp else None}


# ------------------------------------------------------------------------------ behaviour categories

# v1.5's content-relation axis: what the first new stretch of assistant speech after the overlap's
# start does (stretches that began before it do not count).
BEHAVIOUR_DEFINITIONS = {
    "C_RESPOND": "addresses what the overlapping speech said or introduced: answers it, clarifies, reacts to it",
    "C_RESUME": "ignores the overlapping speech and goes on with (or completes) the answer it was giving before",
    "C_UNCERTAIN_HANDLING": "signals that it did not hear or understand (asks to repeat, says it missed something) "
                            "without a content-specific answer",
    "C_UNKNOWN": "none of these: off-target or low-information speech, or no new stretch of speech after the "
                 "overlap at all",
}
BEHAVIOURS = tuple(BEHAVIOUR_DEFINITIONS)
# The fields of prompts/behaviour_v1.txt's user template.
BEHAVIOUR_FIELDS = ("request", "before", "overlap", "after")


def parse_behaviour(reply: str) -> str:
    """The tag of a judge reply that is exactly one JSON object ``{"behaviour": "<tag>"}`` (v1.5's
    one-element list ``{"behaviour": ["<tag>"]}`` too); ``ValueError`` naming the reply otherwise."""
    want = f'expected {{"behaviour": one of {list(BEHAVIOURS)}}}'
    try:
        data = json.loads(reply.strip())
    except (ValueError, AttributeError):
        raise ValueError(f"{want}, got a reply that is not one JSON object: {str(reply)[:80]!r}") from None
    if not isinstance(data, dict) or set(data) != {"behaviour"}:
        raise ValueError(f"{want}, got {str(reply)[:80]!r}")
    tag = data["behaviour"]
    if isinstance(tag, list) and len(tag) == 1:
        tag = tag[0]
    if tag not in BEHAVIOURS:
        raise ValueError(f"{want}, got {str(reply)[:80]!r}")
    return tag


def behaviour_shares(tags) -> dict:
    """Share of each tag among the verdicts had (``None`` = no verdict, left out; v1.5's
    ``count / total``): ``{tag: share}`` over all of ``BEHAVIOURS``, ``None`` shares when no verdict."""
    counts = dict.fromkeys(BEHAVIOURS, 0)
    for i, tag in enumerate(tags):
        if tag is None:
            continue
        if tag not in counts:
            raise ValueError(f"tags[{i}]: {tag!r} is not a behaviour category; use one of {list(BEHAVIOURS)} or None")
        counts[tag] += 1
    total = sum(counts.values())
    return {t: (n / total if total else None) for t, n in counts.items()}


def words_json(words) -> str:
    """Words as v1.5 gives them to its judge: compact JSON ``[{"text", "timestamp": [s, e]}]``, from
    ``(text, start, end)`` tuples or objects with ``text``, ``start``, ``end`` (an end may be None)."""
    out = []
    for i, w in enumerate(words):
        text, start, end = w if isinstance(w, tuple) else (getattr(w, "text", None), getattr(w, "start", None),
                                                           getattr(w, "end", None))
        if not isinstance(text, str):
            raise TypeError(f"words[{i}]: expected (text, start, end) or an object with .text/.start/.end, got {w!r}")
        out.append({"text": text, "timestamp": [round(float(start), 3), None if end is None else round(float(end), 3)]})
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)
