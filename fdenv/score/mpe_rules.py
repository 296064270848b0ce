"""Duplex-MPE's rules (SPEC 7) on segments and played turns: pure functions, tested on hand-built
cases. Segments ``[(start_s, end_s)]`` are the ``paper`` profile's Silero segments of the assistant
track; windows come from ``fdenv.windows``.

* A segment *overlaps* ``[a, b]`` when ``start <= b and end >= a`` (closed); it *covers* ``t`` when
  ``start <= t < end`` (``fdenv.score.segments``).
* The answer to ``T`` (end ``e``): the first segment overlapping ``[e, e + 5]`` and the segments
  that follow it with gaps under 1 s, cut at ``max_response_s`` (the record's scheduler setting,
  default 20 s) after its start.
"""

from __future__ import annotations

from typing import Sequence

from .. import windows as W
from ..windows import silence_windows  # noqa: F401  (one of MPE's rules; it lives with the windows)
from .segments import Segment, covers, follow_on, overlaps

ANSWER_GAP_S = 1.0  # the answer ends at the first silence this long
DEFAULT_MAX_RESPONSE_S = W.KNOBS["max_response_s"]


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
    return follow_on(segments, first, gap_s, limit=first[0] + max_response_s)


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
