"""Key facts in a spoken answer (SPEC 8, structured gold answers): the offline judge's reading.

``extract(text)`` finds the facts a sentence states, each of one kind:

* ``time``: a clock time as minutes on a 12-hour dial ("quarter past three", "3:15", "three
  fifteen pm" -> 195; "15:15" too: spoken times carry no day half, so 15:15 and 3:15 are one time);
* ``date``: (day, month or None) ("the 12th of March", "March twelfth", "on the 5th");
* ``number``: a value with the unit word after it, singular ("forty pounds each" -> 40 pound,
  "£40" -> 40 pound, "three pizzas" -> 3 pizza, "40" -> 40 no unit);
* ``polarity``: yes or no (the first of "yes/yeah/..." and "no/not/isn't/...");

and ``judge(answer, key)`` rules: correct iff every key fact is present and no conflicting fact of
the same kind is stated. A key is a list of entries (a scene's ``gold_facts``):

* ``"40 pounds"``, ``"15:15"``, ``"the 12th of March"``, ``"yes"``: a fact that must be present;
  an entry with no such fact ("the doctor", "Paper Moon") is a phrase whose content words must all
  be said;
* ``"given 100 pounds"``: a fact stated in the scene; repeating it is no conflict;
* ``"not the nurse"``: a wrong alternative; saying it (not negated) is a conflict.

Conflicts: another time or date than the key's and the given ones; a number with the key's unit
but another value; a number offered as an alternative ("40 or 45", "40 pounds, or maybe 45").
Numbers without a unit never conflict on their own (answers restate counts: "the three of you").
``key_from_sentence(gold)``: the key of a plain gold sentence: the facts of its first sentence
that has any are key, the facts of later sentences are given; ``None`` when it states none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import STOP_WORDS, _numbers_to_digits

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "thirtieth": 30,
}
_TENS_ORD = {"twenty": 20, "thirty": 30}
_CURRENCY_SIGNS = {"£": "pounds", "€": "euros", "$": "dollars"}
_UNIT_SYNONYMS = {"quid": "pound", "buck": "dollar", "min": "minute", "mins": "minute", "hr": "hour", "hrs": "hour",
                  "kilogram": "kilo", "kg": "kilo", "guest": "person", "adult": "person"}
_CURRENCIES = {"pound", "euro", "dollar"}
_UNIT_SKIP = {"large", "small", "big", "extra", "more", "whole", "full", "separate", "different", "new", "old",
              "other", "medium", "regular", "british", "us", "single", "double"}
_NOT_UNITS = {"each", "per", "apiece", "total", "altogether", "tonight", "tomorrow", "today", "sharp", "morning",
              "evening", "afternoon", "night", "then", "instead", "exactly", "please"}
_TIME_PREPS = {"at", "by", "until", "till", "around", "about", "before", "after", "from", "is", "its", "leave", "starts",
               "ends", "finishes", "start", "end", "finish"}
_YES = {"yes", "yeah", "yep", "yup", "correct", "indeed", "certainly", "affirmative"}
_NO = {"no", "nope", "nah", "not", "isnt", "arent", "doesnt", "dont", "wont", "cant", "cannot", "never", "wasnt",
       "didnt", "shouldnt", "neither"}
_NO_EXCEPT = {("no", "problem"), ("no", "worries"), ("not", "sure"), ("dont", "know"), ("cant", "say")}
_ALT = {"or", "maybe", "perhaps", "possibly"}
KINDS = ("time", "date", "number", "polarity", "phrase")


@dataclass(frozen=True)
class Fact:
    kind: str  # one of KINDS
    value: object  # minutes on the dial; (day, month|None); float; bool; tuple of content words
    unit: str | None = None
    alt: bool = False  # offered as an alternative to the fact before it ("or", "maybe")
    negated: bool = False  # a phrase said after "not" / "instead of" / "rather than"

    def matches(self, other: "Fact") -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == "date":
            (d1, m1), (d2, m2) = self.value, other.value
            return d1 == d2 and (m1 is None or m2 is None or m1 == m2)
        if self.kind == "number":
            return abs(self.value - other.value) < 1e-9 and (self.unit is None or other.unit is None or self.unit == other.unit)
        return self.value == other.value

    def __str__(self) -> str:
        if self.kind == "time":
            h, m = divmod(self.value, 60)
            return f"{h or 12}:{m:02d}"
        if self.kind == "date":
            d, m = self.value
            return f"day {d}" + (f" of {MONTHS[m - 1].capitalize()}" if m else "")
        if self.kind == "number":
            v = int(self.value) if float(self.value).is_integer() else self.value
            return f"{v} {self.unit}" if self.unit else str(v)
        if self.kind == "polarity":
            return "yes" if self.value else "no"
        return " ".join(self.value)


# ------------------------------------------------------------------------------ tokens


def tokens(text: str) -> list[str]:
    """Lower-case tokens with numbers as digits, clock times "H:MM" as one token "@H:MM",
    ordinals as "#N", decimals kept ("12.50" -> "12.5"), currency signs as the unit word after the
    number ("£40" -> "40 pounds")."""
    t = text.lower().replace("o'clock", " oclock ").replace("o’clock", " oclock ")
    t = re.sub(r"\ba\.?m\.?(?=\W|$)", " am ", t)
    t = re.sub(r"\bp\.?m\.?(?=\W|$)", " pm ", t)
    for sign, word in _CURRENCY_SIGNS.items():
        t = re.sub(re.escape(sign) + r"\s*(\d[\d,]*(?:\.\d+)?)", rf" \1 {word} ", t)
    t = re.sub(r"\b(\d{1,2}):(\d{2})\b", r" @\1:\2 ", t)
    t = re.sub(r"(\d),(\d{3})\b", r"\1\2", t)
    t = re.sub(r"\b(\d+)\.(\d+)\b", lambda m: " " + _num_str(float(m.group(0))) + " ", t)
    t = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r" #\1 ", t)
    t = re.sub(r"(\d)([a-z])", r"\1 \2", t)  # "3pm", "40p"
    t = re.sub(r"['\u2019]", "", t)  # "isn't" -> "isnt", as the stop words have it
    t = re.sub(r"[-\u2010-\u2015/]", " ", t)
    t = re.sub(r"[^\w\s@:#.]|_", " ", t)
    t = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", t)
    words = t.split()
    # ordinal words ("twenty first" -> #21) before number words become digits
    out: list[str] = []
    for w in words:
        if w in _ORDINALS:
            if out and out[-1] in _TENS_ORD and _ORDINALS[w] < 10:
                out[-1] = f"#{_TENS_ORD[out[-1]] + _ORDINALS[w]}"
            else:
                out.append(f"#{_ORDINALS[w]}")
        else:
            out.append(w)
    return _numbers_to_digits(out)


def _num_str(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _is_num(w: str) -> bool:
    return bool(re.fullmatch(r"\d+(\.\d+)?", w))


def _singular(w: str) -> str:
    w = _UNIT_SYNONYMS.get(w, w)
    irregular = {"people": "person", "children": "child", "loaves": "loaf", "knives": "knife", "halves": "half",
                 "men": "man", "women": "woman", "feet": "foot", "teeth": "tooth", "mice": "mouse", "quid": "pound"}
    if w in irregular:
        return irregular[w]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if re.search(r"(ch|sh|x|ss|zz)es$", w):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return _UNIT_SYNONYMS.get(w[:-1], w[:-1])
    return w


# ------------------------------------------------------------------------------ extraction


def extract(text: str) -> list[Fact]:
    """The facts ``text`` states, in order (times, dates, numbers, yes/no; see the module text)."""
    ws = tokens(text)
    used = [False] * len(ws)
    found: list[tuple[int, Fact]] = []

    def take(i, j, fact):
        for k in range(i, j):
            used[k] = True
        found.append((i, fact))

    n = len(ws)
    hour = lambda w: int(w) if _is_num(w) and 1 <= float(w) <= 12 and float(w).is_integer() else None  # noqa: E731
    for i, w in enumerate(ws):
        if used[i]:
            continue
        nxt = ws[i + 1] if i + 1 < n else ""
        nxt2 = ws[i + 2] if i + 2 < n else ""
        prev = ws[i - 1] if i > 0 else ""
        if w.startswith("@"):
            h, m = (int(x) for x in w[1:].split(":"))
            j = i + 1 + (nxt in ("am", "pm"))
            take(i, j, Fact("time", _dial(h, m, nxt)))
        elif w in ("noon", "midday", "midnight"):
            take(i, i + 1, Fact("time", 0))
        elif w in ("quarter", "half") and nxt in ("past", "to") and hour(nxt2):
            m = 15 if w == "quarter" else 30
            h = hour(nxt2)
            take(i, i + 3, Fact("time", _dial(h, m) if nxt == "past" else _dial(h - 1, 60 - m)))
        elif w in ("quarter", "half") and nxt in ("past", "to") and prev in _ALT:
            take(i, i + 2, Fact("time", -1, alt=True))  # "at eight or half past": another time, unsaid hour
        elif _is_num(w) and nxt in ("past", "to") and hour(nxt2) and 1 <= float(w) <= 30 and (
                nxt == "past" or prev in _TIME_PREPS) and not (i + 3 < n and _unit_at(ws, i + 3)):
            m = int(float(w))
            h = hour(nxt2)
            take(i, i + 3, Fact("time", _dial(h, m) if nxt == "past" else _dial(h - 1, 60 - m)))
        elif hour(w) and nxt == "oclock":
            take(i, i + 2, Fact("time", _dial(hour(w), 0)))
        elif hour(w) and nxt in ("am", "pm"):
            take(i, i + 2, Fact("time", _dial(hour(w), 0, nxt)))
        elif hour(w) and _is_num(nxt) and 0 <= float(nxt) < 60 and (nxt2 in ("am", "pm") or prev in _TIME_PREPS) \
                and not _unit_at(ws, i + 2):
            j = i + 2 + (nxt2 in ("am", "pm"))
            take(i, j, Fact("time", _dial(hour(w), int(float(nxt)), nxt2)))
        elif hour(w) and _is_num(nxt) and 10 <= float(nxt) < 60 and float(nxt).is_integer() and not _unit_at(ws, i + 2):
            take(i, i + 2, Fact("time", _dial(hour(w), int(nxt))))  # "five forty-five"
        elif hour(w) and prev in ("at", "by", "until", "till", "around") and not _unit_at(ws, i + 1) \
                and nxt not in ("each", "per", "apiece", "a", "percent", "of"):
            take(i, i + 1, Fact("time", _dial(hour(w), 0)))
    for i, w in enumerate(ws):  # dates
        if used[i]:
            continue
        nxt = ws[i + 1] if i + 1 < n else ""
        nxt2 = ws[i + 2] if i + 2 < n else ""
        prev = ws[i - 1] if i > 0 else ""
        day = int(w[1:]) if w.startswith("#") else None
        if day and nxt == "of" and nxt2 in MONTHS:
            take(i, i + 3, Fact("date", (day, MONTHS.index(nxt2) + 1)))
        elif day and nxt in MONTHS:
            take(i, i + 2, Fact("date", (day, MONTHS.index(nxt) + 1)))
        elif w in MONTHS and (nxt.startswith("#") or (_is_num(nxt) and 1 <= float(nxt) <= 31)):
            take(i, i + 2, Fact("date", (int(float(nxt.lstrip("#"))), MONTHS.index(w) + 1)))
        elif _is_num(w) and 1 <= float(w) <= 31 and nxt in MONTHS and nxt != "may":
            take(i, i + 2, Fact("date", (int(float(w)), MONTHS.index(nxt) + 1)))
        elif day and prev in ("the", "on") and 1 <= day <= 31:
            take(i, i + 1, Fact("date", (day, None)))
    last_unit = None
    for i, w in enumerate(ws):  # numbers
        if used[i] or not _is_num(w):
            continue
        unit = _unit_at(ws, i + 1)
        alt = any(ws[k] in _ALT for k in range(max(0, i - 2), i))
        if unit is None and alt:
            unit = last_unit  # "40 pounds, or maybe 45"
        if unit is None and i + 2 < len(ws) and ws[i + 1] in ("or", "to") and _is_num(ws[i + 2]):
            unit = _unit_at(ws, i + 3)  # "40 or 45 pounds"
        value, j = float(w), i + 1
        if unit in _CURRENCIES and i + 2 < n and not used[i + 2] and _is_num(ws[i + 2]) and ws[i + 1] != "or" \
                and float(ws[i + 2]) < 100 and _unit_at(ws, i + 3) is None:
            value, j = value + float(ws[i + 2]) / 100, i + 3  # "twelve pounds fifty"
        take(i, j, Fact("number", value, unit, alt=alt))
        last_unit = unit
    for i, w in enumerate(ws):  # yes / no: the first one said
        if used[i]:
            continue
        pair = (w, ws[i + 1] if i + 1 < n else "")
        if pair in _NO_EXCEPT:
            break
        if w in _YES or w in _NO:
            found.append((i, Fact("polarity", w in _YES)))
            break
    # an alternative: after "or"/"maybe" and a fact of the same kind before it ("seven, or maybe eight")
    found.sort(key=lambda x: x[0])
    for k, (i, f) in enumerate(found):
        hedge = any(ws[j] in _ALT for j in range(max(0, i - 2), i))
        earlier = any(g.kind == f.kind or (f.kind == "time" and g.kind == "number" and g.unit is None and g.value <= 12)
                      for _, g in found[:k])  # "seven or half past seven"
        alt = f.kind in ("time", "date", "number") and (f.alt or hedge) and earlier
        found[k] = (i, Fact(f.kind, f.value, f.unit, alt=alt))
    return [f for _, f in found]


def _dial(h: int, m: int, half: str = "") -> int:
    """Minutes on a 12-hour dial: a spoken time names no day half, so am/pm are read and dropped."""
    return ((h % 12) * 60 + m) % 720


def _unit_at(ws: list[str], i: int) -> str | None:
    """The unit word at ``ws[i]`` (skipping one adjective), singular; None for none."""
    for _ in range(2):
        if i >= len(ws):
            return None
        w = ws[i]
        if w in _UNIT_SKIP:
            i += 1
            continue
        if w in STOP_WORDS or w in _NOT_UNITS or not w.isalpha() or w in ("am", "pm", "oclock"):
            return None
        return _singular(w)
    return None


# ------------------------------------------------------------------------------ keys and rules


@dataclass(frozen=True)
class Key:
    """What an answer must say (``facts``), may repeat (``given``) and must not say (``wrong``)."""

    facts: tuple[Fact, ...]
    given: tuple[Fact, ...] = ()
    wrong: tuple[Fact, ...] = ()

    def describe(self) -> str:
        """The key facts as a short line for a judge's prompt."""
        out = "; ".join(str(f) for f in self.facts)
        if self.wrong:
            out += " (not: " + "; ".join(str(f) for f in self.wrong) + ")"
        return out


def _phrase(text: str) -> Fact:
    words = tuple(w for w in tokens(text) if w not in STOP_WORDS)
    return Fact("phrase", words)


def _entry_facts(text: str) -> list[Fact]:
    facts = [f for f in extract(text) if not f.alt]
    return facts or [_phrase(text)]


def parse_key(entries) -> Key:
    """A ``Key`` from a scene's ``gold_facts`` entries (see the module text)."""
    if isinstance(entries, str):
        entries = [entries]
    facts, given, wrong = [], [], []
    for e in entries:
        e = str(e).strip()
        low = e.lower()
        if low.startswith("given "):
            given.extend(_entry_facts(e[6:]))
        elif low.startswith("not "):
            wrong.extend(_entry_facts(e[4:]))
        elif e:
            facts.extend(_entry_facts(e))
    if not facts:
        raise ValueError(f"gold facts {list(entries)!r} name no key fact; give at least one entry without 'given'/'not'")
    return Key(tuple(facts), tuple(given), tuple(wrong))


def gold_problems(gold_answer: str, entries) -> list[str]:
    """Why a written gold answer and its ``gold_facts`` entries do not fit together (empty when
    they do): entries that name no key fact, or a gold answer this judge would reject."""
    try:
        key = parse_key(entries)
    except ValueError as e:
        return [str(e)]
    if not judge(gold_answer, key):
        return [f"the gold answer {gold_answer!r} does not state its key facts ({key.describe()}) as this judge reads them"]
    return []


def key_from_sentence(gold: str) -> Key | None:
    """The key of a plain gold sentence (see the module text); ``None`` when it states no fact."""
    key: list[Fact] = []
    given: list[Fact] = []
    for sentence in re.split(r"(?<=[.!?;])\s+", gold.strip()):
        first = (tokens(sentence) or [""])[0]
        # yes/no is a key fact only when the sentence opens with it ("No one paid" states no "no")
        fs = [f for f in extract(sentence) if not f.alt and (f.kind != "polarity" or first in _YES | {"no", "nope"})]
        if not fs:
            continue
        (given if key else key).extend(fs)
    if not key:
        return None
    return Key(tuple(key), tuple(given))


def _phrase_said(phrase: Fact, ws: list[str]) -> tuple[bool, bool]:
    """(said, said negated): all of the phrase's words in the answer; negated when a "not",
    "instead of", "rather than" or "over" comes in the two words before it."""
    words = phrase.value
    if not words:
        return False, False
    if not all(w in ws for w in words):
        return False, False
    first = ws.index(words[0])
    before = ws[max(0, first - 3):first]
    negated = bool({"not", "instead", "rather", "over", "than"} & set(before))
    return True, negated


def judge(answer: str, key: Key) -> bool:
    """Correct iff every key fact is present and no conflicting fact is stated."""
    said = extract(answer or "")
    ws = tokens(answer or "")
    for k in key.facts:
        if k.kind == "phrase":
            ok, neg = _phrase_said(k, ws)
            if not ok or neg:
                return False
        elif k.kind == "polarity":
            pol = [f for f in said if f.kind == "polarity"]
            if not pol or pol[0].value != k.value:
                return False
        elif not any(k.matches(f) for f in said if not f.alt):
            return False
    for f in said:
        if f.kind in ("phrase", "polarity"):
            continue
        keys = [k for k in key.facts if k.kind == f.kind]
        if not keys or any(k.matches(f) for k in keys) or any(g.matches(f) for g in key.given):
            continue
        if f.kind in ("time", "date") or f.alt:
            return False
        if f.kind == "number" and f.unit is not None and any(k.unit == f.unit for k in keys):
            return False
    for w in key.wrong:
        if w.kind == "phrase":
            ok, neg = _phrase_said(w, ws)
            if ok and not neg:
                return False
        elif any(w.matches(f) for f in said):
            return False
    return True
