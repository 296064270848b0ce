"""Scene loading with validation: one clear error naming the file, the field and the problem."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from .schema import (
    CONDITIONS,
    DEFAULT_GAP_S,
    DEFAULT_TRP_GAP_S,
    KINDS,
    LABELS,
    SILENCE_LABELS,
    Scene,
    Speaker,
    Turn,
    markers,
    split_pieces,
)


class SceneError(ValueError):
    """A scene that cannot be used. The message names the source, the field and the fix."""

    def __init__(self, source: str, field: str, problem: str):
        self.source, self.field, self.problem = source, field, problem
        super().__init__(f"{source}: {field}: {problem}")


_SCENE_KEYS = {
    "id", "kind", "speakers", "turns", "assistant_name", "duty", "duty_voice", "condition",
    "pair_id", "trp_gap", "bc_distribution", "attributes",
}
_TURN_KEYS = {"id", "speaker", "text", "label", "gap", "addressee", "gold_answer", "pair_id", "resolves"}


def load_scene(path: str | Path) -> Scene:
    """Read one scene YAML file."""
    path = Path(path)
    if not path.is_file():
        raise SceneError(str(path), "file", "no such file; give the path of a scene .yaml file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        raise SceneError(str(path), where, f"not valid YAML ({getattr(e, 'problem', e)})") from None
    except UnicodeDecodeError:
        raise SceneError(str(path), "file", "not UTF-8 text") from None
    return scene_from_dict(data, source=str(path))


def scene_from_dict(data: Any, source: str = "<scene>") -> Scene:
    """Validate plain data (as read from YAML) into a ``Scene``."""

    def fail(field: str, problem: str):
        raise SceneError(source, field, problem)

    if not isinstance(data, dict):
        fail("top level", f"expected a mapping with id, kind, speakers and turns, got {type(data).__name__}")
    unknown = sorted(set(data) - _SCENE_KEYS)
    if unknown:
        fail(unknown[0], f"unknown field; valid fields are {sorted(_SCENE_KEYS)}")
    for key in ("id", "kind", "speakers", "turns"):
        if key not in data:
            fail(key, "missing (required)")
    sid = _str(data["id"], "id", fail)
    kind = data["kind"]
    if kind not in KINDS:
        fail("kind", f"{kind!r} is not one of {list(KINDS)}")

    speakers_raw = data["speakers"]
    if not isinstance(speakers_raw, list) or not speakers_raw:
        fail("speakers", "expected a non-empty list of {name, voice?}")
    speakers: list[Speaker] = []
    for i, s in enumerate(speakers_raw):
        if isinstance(s, str):
            s = {"name": s}
        if not isinstance(s, dict) or "name" not in s:
            fail(f"speakers[{i}]", "expected a mapping with a 'name' (and optional 'voice')")
        extra = sorted(set(s) - {"name", "voice"})
        if extra:
            fail(f"speakers[{i}].{extra[0]}", "unknown field; valid fields are ['name', 'voice']")
        name = _str(s["name"], f"speakers[{i}].name", fail)
        if any(p.name == name for p in speakers):
            fail(f"speakers[{i}].name", f"duplicate speaker {name!r}")
        voice = s.get("voice")
        if voice is not None:
            voice = _str(voice, f"speakers[{i}].voice", fail)
        speakers.append(Speaker(name, voice))
    names = {s.name for s in speakers}

    assistant_name = _str(data.get("assistant_name", "Aria"), "assistant_name", fail)
    if assistant_name in names:
        fail("assistant_name", f"{assistant_name!r} is also a human speaker's name")
    duty = data.get("duty", "") or ""
    if not isinstance(duty, str):
        fail("duty", "expected text")
    condition = data.get("condition")
    if condition is not None and condition not in CONDITIONS:
        fail("condition", f"{condition!r} is not one of {list(CONDITIONS)}")
    trp_gap = _num(data.get("trp_gap", DEFAULT_TRP_GAP_S), "trp_gap", fail, lo=0.0, hi=5.0)

    turns_raw = data["turns"]
    if not isinstance(turns_raw, list) or not turns_raw:
        fail("turns", "expected a non-empty list of turns")
    turns: list[Turn] = []
    ids: set[str] = set()
    for i, t in enumerate(turns_raw):
        where = f"turns[{i}]"
        if not isinstance(t, dict):
            fail(where, f"expected a mapping with speaker, text and label, got {type(t).__name__}")
        extra = sorted(set(t) - _TURN_KEYS)
        if extra:
            fail(f"{where}.{extra[0]}", f"unknown field; valid fields are {sorted(_TURN_KEYS)}")
        for key in ("speaker", "text", "label"):
            if key not in t:
                fail(f"{where}.{key}", "missing (required)")
        tid = _str(t.get("id", f"t{i}"), f"{where}.id", fail)
        if tid in ids:
            fail(f"{where}.id", f"duplicate turn id {tid!r}")
        ids.add(tid)
        label = t["label"]
        if label not in LABELS:
            fail(f"{where}.label", f"{label!r} is not one of {list(LABELS)}")
        speaker = _str(t["speaker"], f"{where}.speaker", fail)
        if speaker not in names:
            fail(f"{where}.speaker", f"{speaker!r} is not among the speakers {sorted(names)}")
        text = _str(t["text"], f"{where}.text", fail)
        _check_markers(text, label, f"{where}.text", fail)
        gap = _num(t.get("gap", DEFAULT_GAP_S), f"{where}.gap", fail, lo=-30.0, hi=60.0)
        addressee = t.get("addressee")
        if addressee is not None:
            addressee = _str(addressee, f"{where}.addressee", fail)
        gold = t.get("gold_answer")
        if gold is not None:
            gold = _str(gold, f"{where}.gold_answer", fail)
        turns.append(
            Turn(
                id=tid, speaker=speaker, text=text, label=label, gap_s=gap, addressee=addressee,
                gold_answer=gold, pair_id=_opt_str(t.get("pair_id"), f"{where}.pair_id", fail),
                resolves=_opt_str(t.get("resolves"), f"{where}.resolves", fail),
            )
        )

    _check_structure(turns, kind, fail)
    bc = data.get("bc_distribution")
    if bc is not None:
        if not isinstance(bc, list) or not bc or not all(_is_num(x) and x >= 0 for x in bc) or sum(bc) <= 0:
            fail("bc_distribution", "expected a non-empty list of non-negative numbers with a positive sum")
        bc = tuple(float(x) for x in bc)
    attributes = data.get("attributes", {}) or {}
    if not isinstance(attributes, dict):
        fail("attributes", "expected a mapping")
    return Scene(
        id=sid, kind=kind, speakers=tuple(speakers), turns=tuple(turns), assistant_name=assistant_name,
        duty=duty, duty_voice=_opt_str(data.get("duty_voice"), "duty_voice", fail), condition=condition,
        pair_id=_opt_str(data.get("pair_id"), "pair_id", fail), trp_gap_s=trp_gap, bc_distribution=bc,
        attributes=dict(attributes),
    )


def _check_markers(text: str, label: str, where: str, fail) -> None:
    found = markers(text)
    open_brackets = text.count("[")
    if open_brackets != len(found):
        fail(where, "unrecognised [...] marker; only [pause=S] (pause turns) and [trp] (monologue turns) exist")
    for m in found:
        if m == "trp" and label != "monologue":
            fail(where, f"[trp] is only allowed in monologue turns, not in a {label!r} turn")
        if m.startswith("pause="):
            if label != "pause":
                fail(where, f"[pause=S] is only allowed in pause turns, not in a {label!r} turn")
            value = m.split("=", 1)[1]
            try:
                s = float(value)
            except ValueError:
                fail(where, f"[pause={value}]: S must be a number of seconds, e.g. [pause=0.8]")
            if not (0.05 <= s <= 10.0) or math.isnan(s):
                fail(where, f"[pause={value}]: S must be between 0.05 and 10 seconds")
    pieces = split_pieces(text)
    if not pieces:
        fail(where, "no words to speak")
    if pieces[-1].silence_after_s > 0 or pieces[-1].trp_after or text.strip().startswith("["):
        fail(where, "a marker must stand between two pieces of text, not at the start or end")
    if label == "pause" and len(pieces) < 2:
        fail(where, "a pause turn needs at least one [pause=S] marker between two pieces of text")
    if label == "monologue" and len(pieces) < 2:
        fail(where, "a monologue turn needs at least one [trp] marker between two pieces of text")


def _check_structure(turns: list[Turn], kind: str, fail) -> None:
    by_id = {t.id: t for t in turns}
    for i, t in enumerate(turns):
        where = f"turns[{i}]"
        if t.label == "interrupt" and (i == 0 or turns[i - 1].label != "final"):
            fail(f"{where}.label", "an interrupt turn must directly follow a final turn")
        if t.label == "duty" and i != 0:
            fail(f"{where}.label", "the duty turn must be the first turn")
        if t.label == "N4R":
            if t.resolves is None:
                fail(f"{where}.resolves", "an N4R turn must name the N4Q turn it resolves")
            if t.resolves not in by_id or by_id[t.resolves].label != "N4Q":
                fail(f"{where}.resolves", f"{t.resolves!r} is not the id of an N4Q turn")
            if i == 0 or turns[i - 1].id != t.resolves:
                fail(f"{where}.resolves", "an N4R turn must directly follow the N4Q it resolves")
        if t.label == "N4Q" and (i + 1 >= len(turns) or turns[i + 1].label != "N4R"):
            fail(f"{where}.label", "an N4Q turn must be followed by its N4R turn")
        if t.label == "T" and not t.gold_answer:
            fail(f"{where}.gold_answer", "a T turn needs a gold_answer")
        if t.label in SILENCE_LABELS + ("T", "N4Q") and kind not in ("mpe", "custom"):
            fail(f"{where}.label", f"{t.label!r} turns belong to mpe scenes, not {kind!r}")
    labels = [t.label for t in turns]
    required = {"pause": "pause", "backchannel": "monologue", "turn_taking": "final", "interruption": "interrupt", "mpe": "T"}
    need = required.get(kind)
    if need and need not in labels:
        fail("turns", f"a {kind!r} scene needs a {need!r} turn")
    if kind == "mpe" and labels.count("T") != 1:
        fail("turns", f"an mpe scene has exactly one T turn, found {labels.count('T')}")


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _str(value, where, fail) -> str:
    if not isinstance(value, str) or not value.strip():
        fail(where, f"expected non-empty text, got {value!r}")
    return value.strip()


def _opt_str(value, where, fail):
    return None if value is None else _str(value, where, fail)


def _num(value, where, fail, lo: float, hi: float) -> float:
    if not _is_num(value) or math.isnan(value):
        fail(where, f"expected a number of seconds, got {value!r}")
    if not lo <= value <= hi:
        fail(where, f"{value} is out of range [{lo}, {hi}]")
    return float(value)
