"""Sentence variety of generated sets: which sentences count, and how they are compared.

A *scored* sentence is the text of a turn that a measure looks at (``T``, ``N1``-``N3``,
``N4Q``/``N4R``; ``pause``, ``monologue``, ``final``, ``interrupt``). Sentences are compared after
normalisation: lower case, punctuation dropped, number words as digits, and the assistant's name
replaced by one placeholder (the same request to "Nova" and to "Aria" is the same sentence).
The closed class is exempt: the duty preamble (not a scored label) and sentences of three words or
fewer (backchannels, re-asks, fillers such as "Okay, okay, think.").
"""

from __future__ import annotations

import re

SCORED_LABELS = ("T", "N1", "N2", "N3", "N4Q", "N4R", "pause", "monologue", "final", "interrupt")
CLOSED_MAX_WORDS = 3
_MARKER = re.compile(r"\[[^\]]*\]")


_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
_NUMBERS.update({w: str(10 * i) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)})


def normalise_sentence(text: str, assistant: str | None = None) -> str:
    """Lower case, markers and punctuation dropped, each number word as digits, the assistant's
    name as one placeholder. (The scorer's normalisation also joins number words into one
    number; the scene layer does not import it, and the generators write each number one way.)"""
    text = _MARKER.sub(" ", text)
    if assistant:
        text = re.sub(rf"\b{re.escape(assistant)}\b", "assistantname", text)
    text = re.sub(r"[-\u2010-\u2015:/]", " ", text.lower())
    text = re.sub(r"[^\w\s]|_", "", text)
    return " ".join(_NUMBERS.get(w, w) for w in text.split())


def is_closed_class(norm: str) -> bool:
    return len(norm.split()) <= CLOSED_MAX_WORDS


def sentences(scenes: list[dict]) -> list[tuple[str, str]]:
    """(label, normalised sentence) of every turn of one generated item (a scene, or an MPE pair
    whose twins share every turn but T: a shared turn counts once); duty and closed class left out."""
    seen: dict = {}
    for d in scenes:
        for t in d["turns"]:
            if t["label"] == "duty":
                continue
            norm = normalise_sentence(t["text"], d.get("assistant_name", "Aria"))
            if not is_closed_class(norm):
                seen[(t["id"], norm)] = (t["label"], norm)
    return list(seen.values())


def scored_sentences(scenes: list[dict]) -> list[str]:
    """The normalised scored sentences of one generated item, closed class left out."""
    return [norm for label, norm in sentences(scenes) if label in SCORED_LABELS]


def share_cap(items_in_split: int) -> int:
    """How often an unscored sentence may occur in a split: under 2 % of a turn type that every
    item has at least once (more than 2 % of the items, as such a type has more turns), and at
    least 3 (a split too small for a type to reach 100 turns is not held to 2 %)."""
    return max(3, int(0.02 * items_in_split) + 1)
