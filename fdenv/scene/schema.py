"""Typed scene model (SPEC 2).

A scene is a script: who is in the room, what the assistant is called, and an ordered list of
turns. Each turn's text may carry inline markers that split it into clips:

* ``[pause=S]`` (``pause`` turns only): S seconds of silence between two clips;
* ``[trp]`` (``monologue`` turns only): a transition-relevance place between two clips.

Every text piece is rendered as its own clip, so pause and TRP times are exact for any TTS back
end. The model is immutable; loading and validation with precise errors live in ``load.py``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

FDB_LABELS = ("ctx", "pause", "monologue", "final", "interrupt")
MPE_LABELS = ("duty", "T", "N1", "N2", "N3", "N4Q", "N4R")
# Overlap events (Full-Duplex-Bench v1.5) while the assistant answers a `final` turn, which it
# should hold through: the user's backchannel (the label natural humans' own backchannels carry),
# two humans talking to each other, a TV or radio talker. The fourth event is an `interrupt`.
HOLD_LABELS = ("bc", "side", "background")
LABELS = FDB_LABELS + MPE_LABELS + HOLD_LABELS
SILENCE_LABELS = ("N1", "N2", "N3")
KINDS = ("pause", "backchannel", "turn_taking", "interruption", "mpe", "overlap", "custom")
CONDITIONS = ("explicit", "implicit")

DEFAULT_GAP_S = 0.3
# Silence between the clips of a monologue at a [trp] marker: a short breath, the place where a
# listener may nod. Long enough to be a place, short enough not to be a pause turn.
DEFAULT_TRP_GAP_S = 0.25

_MARKER = re.compile(r"\[(pause=[^\]]*|trp)\]")


@dataclass(frozen=True)
class Speaker:
    """A human (or a TV, a radio) in the room. ``voice`` pins a voice name; otherwise the voice map
    picks one. ``level_db`` plays this speaker's clips that much above (below, when negative) the
    rendered level (``None``: as rendered), e.g. a television quieter than the people in the room."""

    name: str
    voice: str | None = None
    level_db: float | None = None


@dataclass(frozen=True)
class Piece:
    """One clip of a turn: its text and the silence that follows it inside the turn."""

    text: str
    silence_after_s: float = 0.0
    trp_after: bool = False


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str
    label: str
    gap_s: float = DEFAULT_GAP_S
    addressee: str | None = None
    gold_answer: str | None = None
    # the gold answer's key facts ("40 pounds", "given 20 pounds", "not the nurse"; score/facts.py)
    gold_facts: tuple[str, ...] | None = None
    pair_id: str | None = None
    resolves: str | None = None  # N4R: id of the N4Q it answers

    @property
    def pieces(self) -> tuple[Piece, ...]:
        return split_pieces(self.text)

    @property
    def spoken_text(self) -> str:
        """The words without markers (what a listener hears)."""
        return " ".join(p.text for p in self.pieces)


@dataclass(frozen=True)
class Scene:
    id: str
    kind: str
    speakers: tuple[Speaker, ...]
    turns: tuple[Turn, ...]
    assistant_name: str = "Aria"
    duty: str = ""
    duty_voice: str | None = None
    condition: str | None = None  # MPE: explicit / implicit
    pair_id: str | None = None
    trp_gap_s: float = DEFAULT_TRP_GAP_S
    # FDB backchannel: an explicit target distribution over the monologue (SPEC 6.2), if any.
    bc_distribution: tuple[float, ...] | None = None
    attributes: dict = field(default_factory=dict, compare=False, hash=False)

    def speaker(self, name: str) -> Speaker:
        for s in self.speakers:
            if s.name == name:
                return s
        raise KeyError(name)

    def turn(self, turn_id: str) -> Turn:
        for t in self.turns:
            if t.id == turn_id:
                return t
        raise KeyError(turn_id)

    def to_dict(self) -> dict:
        """Plain data, the same shape that ``load.scene_from_dict`` reads."""
        d = asdict(self)
        d["speakers"] = [{k: v for k, v in s.items() if v is not None} for s in d["speakers"]]
        turns = []
        for t in d["turns"]:
            out = {k: (list(v) if k == "gold_facts" else v) for k, v in t.items() if v is not None}
            out["gap"] = out.pop("gap_s")
            if out["gap"] == DEFAULT_GAP_S:
                del out["gap"]
            turns.append(out)
        d["turns"] = turns
        d["trp_gap"] = d.pop("trp_gap_s")
        if d["bc_distribution"] is not None:
            d["bc_distribution"] = list(d["bc_distribution"])
        return {k: v for k, v in d.items() if v is not None and v != {}}


def split_pieces(text: str) -> tuple[Piece, ...]:
    """Split a turn's text at its markers into clips. Markers are validated by the loader."""
    pieces: list[Piece] = []
    pos = 0
    for m in _MARKER.finditer(text):
        chunk = text[pos : m.start()].strip()
        marker = m.group(1)
        if chunk:
            pieces.append(Piece(chunk))
        if pieces:
            last = pieces[-1]
            if marker == "trp":
                pieces[-1] = Piece(last.text, last.silence_after_s, True)
            else:
                pieces[-1] = Piece(last.text, last.silence_after_s + float(marker.split("=", 1)[1]), last.trp_after)
        pos = m.end()
    tail = text[pos:].strip()
    if tail:
        pieces.append(Piece(tail))
    return tuple(pieces)


def markers(text: str) -> list[str]:
    return [m.group(1) for m in _MARKER.finditer(text)]
