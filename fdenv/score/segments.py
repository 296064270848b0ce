"""Segments and words: the helpers every measure shares (SPEC 5-7).

A segment is ``(start_s, end_s)`` of assistant speech; a window ``[a, b]`` is closed. A segment
*overlaps* ``[a, b]`` when ``start <= b and end >= a``; it *covers* ``t`` when ``start <= t < end``.
A word belongs to a segment if their open intervals intersect (``w.start < end and w.end >
start``); a word without an end (or of zero length) belongs if its start lies in the closed segment.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .asr import Word

Segment = tuple[float, float]


def overlaps(seg: Segment, a: float, b: float) -> bool:
    return seg[0] <= b and seg[1] >= a


def covers(seg: Segment, t: float) -> bool:
    return seg[0] <= t < seg[1]


def word_in(w: Word, seg: Segment) -> bool:
    a, b = seg
    if w.end is None or w.end <= w.start:
        return a <= w.start <= b
    return w.start < b and w.end > a


def words_in(seg: Segment, words: Iterable[Word]) -> list[Word]:
    return [w for w in words if word_in(w, seg)]


def text_of(words: Iterable[Word]) -> str:
    return " ".join(w.text for w in words)


def follow_on(segments: Sequence[Segment], first: Segment, gap_s: float, limit: float | None = None) -> list[Segment]:
    """``first`` and the segments after it with gaps under ``gap_s`` (an answer, a response);
    with ``limit``, only segments starting before it, each cut at it."""
    out = [first]
    for s in sorted(segments):
        if s[0] <= first[0]:
            continue
        if s[0] - out[-1][1] < gap_s and (limit is None or s[0] < limit):
            out.append(s)
        else:
            break
    return out if limit is None else [(a, min(b, limit)) for a, b in out]
