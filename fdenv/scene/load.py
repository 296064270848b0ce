"""Scene loading with validation: one clear error naming the file, the field and the problem."""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from ..errors import SceneError, short  # SceneError re-exported: fdenv.scene.load.SceneError
from .schema import (
    CONDITIONS,
    DEFAULT_GAP_S,
    DEFAULT_TRP_GAP_S,
    HOLD_LABELS,
    KINDS,
    LABELS,
    SILENCE_LABELS,
    Scene,
    Speaker,
    Turn,
    markers,
    split_pieces,
)




_SCENE_KEYS = {
    "id", "kind", "speakers", "turns", "assistant_name", "duty", "duty_voice", "condition",
    "pair_id", "trp_gap", "bc_distribution", "attributes",
}
_TURN_KEYS = {"id", "speaker", "text", "label", "gap", "addressee", "gold_answer", "gold_facts", "pair_id", "resolves"}


class _DuplicateKey(yaml.MarkedYAMLError):
    pass


# Bounds on what a scene file may expand to: YAML aliases share nodes, so 469 bytes of nested
# aliases can stand for billions of values (an "alias bomb") that only blow up when written out.
MAX_NODES = 100_000
MAX_DEPTH = 40


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Safe YAML that refuses a key given twice in one mapping (PyYAML keeps the last silently).
    Merge keys (``<<: *base``) work; a key given explicitly overrides the merged one, as YAML says."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                dup = key in seen
            except TypeError:
                continue  # unhashable: the base class reports it
            if dup:
                raise _DuplicateKey(None, None, f"duplicate key {short(key)}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_scene(path: str | Path) -> Scene:
    """Read one scene YAML file."""
    path = Path(path)
    if path.is_dir():
        raise SceneError(str(path), "file", "is a folder; give the path of a scene .yaml file")
    if not path.is_file():
        raise SceneError(str(path), "file", "no such file; give the path of a scene .yaml file")
    try:
        text = path.read_text(encoding="utf-8")
        data = _load_yaml(text, str(path))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        raise SceneError(str(path), where, f"not valid YAML ({getattr(e, 'problem', None) or e})") from None
    except UnicodeDecodeError:
        raise SceneError(str(path), "file", "not UTF-8 text") from None
    except OSError as e:
        raise SceneError(str(path), "file", f"cannot be read ({e.strerror or e})") from None
    if data is None:
        raise SceneError(str(path), "top level", "the file is empty; a scene needs id, kind, speakers and turns")
    return scene_from_dict(data, source=str(path))


def _load_yaml(text: str, source: str):
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_size(node, source)
        return loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


def _check_size(root, source: str) -> None:
    """Refuse a node graph that refers to itself or expands past MAX_NODES / MAX_DEPTH."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in on_path:
            raise SceneError(source, _where(node), "an alias refers to the node that contains it (a self-reference); "
                             "write the value out instead")
        if depth > MAX_DEPTH:
            raise SceneError(source, _where(node), f"nested deeper than {MAX_DEPTH} levels; a scene is flat data")
        on_path.add(key)
        n = 1
        if isinstance(node.value, list):
            for item in node.value:
                for child in item if isinstance(item, tuple) else (item,):
                    n += size(child, depth + 1)
                    if n > MAX_NODES:
                        raise SceneError(source, _where(node), f"expands to more than {MAX_NODES} values (nested YAML "
                                         "aliases?); a scene needs far fewer: write the values out")
        on_path.discard(key)
        sizes[key] = n
        return n

    size(root, 0)


def _where(node) -> str:
    mark = node.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"


def scene_from_dict(data: Any, source: str = "<scene>") -> Scene:
    """Validate plain data (as read from YAML) into a ``Scene``."""

    def fail(field: str, problem: str):
        raise SceneError(source, field, problem)

    if not isinstance(data, dict):
        fail("top level", f"expected a mapping with id, kind, speakers and turns, got {type(data).__name__}")
    unknown = sorted(set(data) - _SCENE_KEYS, key=str)
    if unknown:
        fail(str(unknown[0]), _unknown_field(unknown[0], _SCENE_KEYS))
    for key in ("id", "kind", "speakers", "turns"):
        if key not in data:
            fail(key, "missing (required)")
    sid = _str(data["id"], "id", fail)
    kind = data["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        fail("kind", f"{short(kind)} is not one of {list(KINDS)}{_did_you_mean(kind, KINDS)}")

    speakers_raw = data["speakers"]
    if not isinstance(speakers_raw, list) or not speakers_raw:
        fail("speakers", "expected a non-empty list of {name, voice?}")
    speakers: list[Speaker] = []
    for i, s in enumerate(speakers_raw):
        if isinstance(s, str):
            s = {"name": s}
        if not isinstance(s, dict) or "name" not in s:
            fail(f"speakers[{i}]", "expected a mapping with a 'name' (and optional 'voice', 'level_db')")
        extra = sorted(set(s) - {"name", "voice", "level_db"}, key=str)
        if extra:
            fail(f"speakers[{i}].{extra[0]}", _unknown_field(extra[0], {"name", "voice", "level_db"}))
        name = _str(s["name"], f"speakers[{i}].name", fail)
        if any(p.name == name for p in speakers):
            fail(f"speakers[{i}].name", f"duplicate speaker {short(name)}")
        voice = s.get("voice")
        if voice is not None:
            voice = _str(voice, f"speakers[{i}].voice", fail)
        level = s.get("level_db")
        if level is not None:
            if not _is_num(level) or math.isnan(level):
                fail(f"speakers[{i}].level_db", f"expected a number of decibels, got {short(level)}")
            if not -40.0 <= level <= 10.0:
                fail(f"speakers[{i}].level_db", f"{level} is out of range [-40, 10] dB")
            level = float(level)
        speakers.append(Speaker(name, voice, level))
    names = {s.name for s in speakers}

    assistant_name = _str(data.get("assistant_name", "Aria"), "assistant_name", fail)
    if assistant_name in names:
        fail("assistant_name", f"{short(assistant_name)} is also a human speaker's name")
    duty = data.get("duty", "") or ""
    if not isinstance(duty, str):
        fail("duty", "expected text")
    condition = data.get("condition")
    if condition is not None and condition not in CONDITIONS:
        fail("condition", f"{short(condition)} is not one of {list(CONDITIONS)}")
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
        extra = sorted(set(t) - _TURN_KEYS, key=str)
        if extra:
            if t[extra[0]] is None and " " in str(extra[0]).strip():
                fail(f"{where}.{extra[0]}", "looks like the rest of a text cut at a comma: in {...} flow style a comma "
                     "ends the value, so put text that has commas in quotes")
            fail(f"{where}.{extra[0]}", _unknown_field(extra[0], _TURN_KEYS))
        for key in ("speaker", "text", "label"):
            if key not in t:
                fail(f"{where}.{key}", "missing (required)")
        tid = _str(t.get("id", f"t{i}"), f"{where}.id", fail)
        if tid in ids:
            fail(f"{where}.id", f"duplicate turn id {short(tid)}")
        ids.add(tid)
        label = t["label"]
        if not isinstance(label, str) or label not in LABELS:
            fail(f"{where}.label", f"{short(label)} is not one of {list(LABELS)}{_did_you_mean(label, LABELS)}")
        speaker = _str(t["speaker"], f"{where}.speaker", fail)
        if speaker not in names:
            fail(f"{where}.speaker", f"{short(speaker)} is not among the speakers {sorted(names)}"
                 f"{_did_you_mean(speaker, names)}; add it to 'speakers' or fix the name")
        text = _str(t["text"], f"{where}.text", fail)
        _check_markers(text, label, f"{where}.text", fail)
        gap = _num(t.get("gap", DEFAULT_GAP_S), f"{where}.gap", fail, lo=-30.0, hi=60.0)
        if i == 0 and gap < 0:
            fail(f"{where}.gap", f"{gap} is negative, but the first turn has nothing to overlap; use 0 or more")
        addressee = t.get("addressee")
        if addressee is not None:
            addressee = _str(addressee, f"{where}.addressee", fail)
            if addressee == speaker:
                fail(f"{where}.addressee", f"{short(speaker)} cannot address themselves; name who the turn is addressed to")
        gold = t.get("gold_answer")
        if gold is not None:
            gold = _str(gold, f"{where}.gold_answer", fail)
        facts = _gold_facts(t.get("gold_facts"), gold, f"{where}.gold_facts", fail)
        turns.append(
            Turn(
                id=tid, speaker=speaker, text=text, label=label, gap_s=gap, addressee=addressee,
                gold_answer=gold, gold_facts=facts, pair_id=_opt_str(t.get("pair_id"), f"{where}.pair_id", fail),
                resolves=_opt_str(t.get("resolves"), f"{where}.resolves", fail),
            )
        )

    _check_structure(turns, kind, fail)
    bc = data.get("bc_distribution")
    if bc is not None:
        if (not isinstance(bc, list) or not bc or not all(_is_num(x) and math.isfinite(x) and x >= 0 for x in bc)
                or not 0 < sum(bc) < math.inf):
            fail("bc_distribution", "expected a non-empty list of non-negative numbers with a positive, finite sum "
                 "(relative weights per 200 ms bin, e.g. [0.1, 0.3, 0.6])")
        bc = tuple(float(x) for x in bc)
    attributes = data.get("attributes", {}) or {}
    if not isinstance(attributes, dict):
        fail("attributes", "expected a mapping")
    _check_plain(attributes, "attributes", fail)
    return Scene(
        id=sid, kind=kind, speakers=tuple(speakers), turns=tuple(turns), assistant_name=assistant_name,
        duty=duty, duty_voice=_opt_str(data.get("duty_voice"), "duty_voice", fail), condition=condition,
        pair_id=_opt_str(data.get("pair_id"), "pair_id", fail), trp_gap_s=trp_gap, bc_distribution=bc,
        attributes=dict(attributes),
    )


def _check_markers(text: str, label: str, where: str, fail) -> None:
    found = markers(text)
    if text.count("[") != len(found) or text.count("]") != len(found):
        stray = re.sub(r"\[(pause=[^\]]*|trp)\]", " ", text)
        m = re.search(r"\[[^\]]*\]?|\]", stray)
        bad = m.group(0) if m else "["
        fail(where, f"unrecognised marker {short(bad)}; only [pause=S] (pause turns) and [trp] (monologue turns) exist")
    for m in found:
        if m == "trp" and label != "monologue":
            fail(where, f"[trp] is only allowed in monologue turns, not in a {short(label)} turn")
        if m.startswith("pause="):
            if label != "pause":
                fail(where, f"[pause=S] is only allowed in pause turns, not in a {short(label)} turn")
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
    for p in pieces:
        if not any(c.isalnum() for c in p.text):
            fail(where, f"{short(p.text)} has nothing to say (no letter or digit); write the words to speak")
    if re.search(r"\]\s*\[", text):
        fail(where, "two markers in a row; put words between markers (or one [pause=S] with the summed time)")
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
                fail(f"{where}.resolves", f"{short(t.resolves)} is not the id of an N4Q turn")
            if i == 0 or turns[i - 1].id != t.resolves:
                fail(f"{where}.resolves", "an N4R turn must directly follow the N4Q it resolves")
        if t.resolves is not None and t.label != "N4R":
            fail(f"{where}.resolves", f"only N4R turns resolve an N4Q; this turn is {short(t.label)}")
        if t.label == "N4Q" and (i + 1 >= len(turns) or turns[i + 1].label != "N4R"):
            fail(f"{where}.label", "an N4Q turn must be followed by its N4R turn")
        if t.label == "T" and not t.gold_answer:
            fail(f"{where}.gold_answer", "a T turn needs a gold_answer")
        if t.label in SILENCE_LABELS + ("T", "N4Q") and kind not in ("mpe", "custom"):
            fail(f"{where}.label", f"{short(t.label)} turns belong to mpe scenes, not {short(kind)}")
        if t.label in HOLD_LABELS:
            if kind not in ("overlap", "custom"):
                fail(f"{where}.label", f"{short(t.label)} turns belong to overlap scenes, not {short(kind)}")
            if i == 0 or turns[i - 1].label not in ("final", "side"):
                fail(f"{where}.label", f"an overlap event ({short(t.label)}) must directly follow the final turn it "
                     "overlaps (a side conversation: or the side turn before it)")
    labels = [t.label for t in turns]
    required = {"pause": "pause", "backchannel": "monologue", "turn_taking": "final", "interruption": "interrupt", "mpe": "T",
                "overlap": "final"}
    need = required.get(kind)
    if need and need not in labels:
        fail("turns", f"a {short(kind)} scene needs a {short(need)} turn")
    if kind == "overlap" and sum(lab in HOLD_LABELS + ("interrupt",) and (i == 0 or labels[i - 1] == "final")
                                 for i, lab in enumerate(labels)) != 1:
        fail("turns", "an overlap scene has exactly one event (interrupt, bc, side or background) right after its final turn")
    if kind == "mpe" and labels.count("T") != 1:
        fail("turns", f"an mpe scene has exactly one T turn, found {labels.count('T')}")


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _str(value, where, fail) -> str:
    if isinstance(value, bool):
        fail(where, f"expected text, got {short(value)} (YAML reads yes/no/on/off/true/false as booleans; put the text in quotes)")
    if isinstance(value, (int, float)):
        fail(where, f"expected text, got the number {short(value)}; put it in quotes: '{value}'")
    if not isinstance(value, str) or not value.strip():
        fail(where, f"expected non-empty text, got {short(value)}")
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cs") and c not in "\n\t\r"), None)
    if bad is not None:
        fail(where, f"contains the control character {short(bad)} at position {value.index(bad)} (text-to-speech stops "
             "there); remove it")
    return value.strip()


def _check_plain(value, where: str, fail, budget: list | None = None, depth: int = 0) -> None:
    """JSON-ready data (str keys; str, number, bool, null, lists, mappings), flat and small enough
    to be written with every record: no self-reference, no alias bomb."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        fail(where, f"holds more than {MAX_NODES} values (nested YAML aliases?); keep attributes small")
    if depth > MAX_DEPTH:
        fail(where, f"nested deeper than {MAX_DEPTH} levels (or refers to itself); keep attributes flat")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                fail(where, f"key {short(k)} is not text; attribute keys are strings")
            _check_plain(v, f"{where}.{k}", fail, budget, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_plain(v, f"{where}[{i}]", fail, budget, depth + 1)
    elif isinstance(value, float) and not math.isfinite(value):
        fail(where, f"{value} is not a finite number (records are JSON)")
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        fail(where, f"a {type(value).__name__} cannot be stored in a record; use text, numbers, lists or mappings")


def _did_you_mean(value, choices) -> str:
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
    if not close:
        close = [c for c in choices if str(c).lower() == value.lower()]
    return f"; did you mean {short(close[0])}?" if close else ""


def _unknown_field(key, valid) -> str:
    return f"unknown field{_did_you_mean(key, valid)}; valid fields are {sorted(valid)}"


def _opt_str(value, where, fail):
    return None if value is None else _str(value, where, fail)


def _num(value, where, fail, lo: float, hi: float) -> float:
    if not _is_num(value) or math.isnan(value):
        hint = " (write seconds as a plain number, e.g. 0.5)" if isinstance(value, str) else ""
        fail(where, f"expected a number of seconds, got {short(value)}{hint}")
    if not lo <= value <= hi:
        fail(where, f"{value} is out of range [{lo}, {hi}]")
    return float(value)


def _gold_facts(value, gold, where, fail):
    """A turn's ``gold_facts``: a list of fact entries, next to a ``gold_answer``."""
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(x, str) and x.strip() for x in value):
        fail(where, "expected a non-empty list of facts as text, e.g. ['40 pounds', 'given 20 pounds']")
    if gold is None:
        fail(where, "gold_facts need a gold_answer (the reference sentence) on the same turn")
    if all(x.strip().lower().startswith(("given ", "not ")) for x in value):
        fail(where, "no key fact: every entry starts with 'given' or 'not'; add the fact the answer must state")
    return tuple(value)
