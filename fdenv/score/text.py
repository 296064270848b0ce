"""SPEC 8's text normalisation for the offline judge and its key facts: lower case; hyphens, colons
and slashes to spaces; other punctuation removed; number-word runs to digits ("three hundred and
forty" -> "340", "seven thirty" -> "7 30"); stop words dropped by ``content_tokens``."""

from __future__ import annotations

import re

# Compared after normalisation, which removes apostrophes: "don't" is "dont" here.
STOP_WORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from as into onto about over under
    is are was were be been being am do does did doing have has had having will would shall should
    can could may might must i me my mine we us our ours you your yours he him his she her hers it its
    they them their theirs this that these those there here what which who whom whose when where why
    how not no yes just very really also too only well oh um uh hmm mm ah okay ok like up down out off
    again than all any both each few more most other some such own same s t dont let lets""".split()
)

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_WORDS = set(_UNITS) | set(_TENS) | set(_SCALES)


def normalise(text: str) -> list[str]:
    """Normalised tokens of ``text`` (stop words kept; see ``content_tokens``)."""
    t = text.lower()
    t = re.sub(r"[-\u2010-\u2015:/]", " ", t)
    t = re.sub(r"[^\w\s]|_", "", t)
    return _numbers_to_digits(t.split())


def content_tokens(text: str) -> list[str]:
    """Normalised tokens without stop words."""
    return [w for w in normalise(text) if w not in STOP_WORDS]


def _numbers_to_digits(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i] not in _NUMBER_WORDS:
            out.append(tokens[i])
            i += 1
            continue
        # a run of number words, with "and" allowed between two number words
        run = []
        while i < n:
            w = tokens[i]
            if w in _NUMBER_WORDS:
                run.append(w)
                i += 1
            elif w == "and" and run and i + 1 < n and tokens[i + 1] in _NUMBER_WORDS:
                i += 1
            else:
                break
        out.extend(str(v) for v in _parse_run(run))
    return out


def _parse_run(words: list[str]) -> list[int]:
    """Numbers spoken in a run of number words: "three hundred forty" -> [340],
    "seven thirty" -> [7, 30], "twenty one" -> [21], "one two" -> [1, 2]."""
    numbers: list[int] = []
    total = group = 0  # total: the thousands/millions part; group: the part below a thousand
    last = None  # kind of the previous word: "unit" (0-9), "teen" (10-19), "tens", "hundred", "scale"
    last_scale = None

    def flush():
        nonlocal total, group, last, last_scale
        if last is not None:
            numbers.append(total + group)
        total = group = 0
        last = last_scale = None

    for w in words:
        if w in _UNITS:
            v = _UNITS[w]
            kind = "unit" if v < 10 else "teen"
            # "thirty five" joins; "seven eight", "thirty twelve", "thirty zero" start a new number
            if last in ("unit", "teen") or (last == "tens" and (kind == "teen" or v == 0)):
                flush()
            group += v
            last = kind
        elif w in _TENS:
            if last in ("unit", "teen", "tens"):
                flush()  # "seven thirty" -> 7 30, "nineteen eighty" -> 19 80
            group += _TENS[w]
            last = "tens"
        elif w == "hundred":
            if group >= 100 or last == "hundred":
                flush()
            group = (group or 1) * 100
            last = "hundred"
        else:
            scale = _SCALES[w]
            if last_scale is not None and scale >= last_scale:
                flush()
            total += (group or 1) * scale
            group = 0
            last, last_scale = "scale", scale
    flush()
    return numbers
