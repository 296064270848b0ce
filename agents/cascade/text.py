"""Small text tools for the cascade: words, number words, the assistant's name."""

from __future__ import annotations

import difflib
import re

STOP = frozenset(
    """a an the and or but if then so of to in on at by for with from as into onto about over under
    is are was were be been being am do does did doing have has had having will would shall should
    can could may might must i me my mine we us our ours you your yours he him his she her hers it its
    they them their theirs this that these those there here what which who whom whose when where why
    how not no yes just very really also too only well oh um uh hmm mm ah okay ok like up down out off
    again than all any both each few more most other some such own same s t don't let lets let's hey
    please tell know think get got go going want need much many thing things something anything quite
    i'm it's that's what's we're you're they're i've we've i'll we'll can't won't isn't aren't one
    wait actually sorry only""".split()
)

UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "a dozen": 12, "dozen": 12,
    "half": 0.5,
}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how is are was were do does did can could will would "
    "shall should may might have has had am".split()
)


def words(text: str) -> list[str]:
    """Lower-case words; hyphens and slashes split words, other punctuation is dropped
    (a decimal point and a thousands comma inside a number are kept)."""
    t = text.lower().replace("-", " ").replace("/", " ")
    t = re.sub(r"(?<=\d),(?=\d{3})", "", t)
    t = re.sub(r"[^\w\s.']|_", " ", t)
    t = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", t)
    return [w.strip("'") for w in t.split() if w.strip("'")]


def number_words(text: str) -> list[str]:
    """``words(text)`` with number-word runs turned to digits; runs never cross punctuation
    ("three hundred and forty, four tickets" -> ``["340", "4", "tickets"]``)."""
    out: list[str] = []
    for part in re.split(r"[,;:!?]|\.(?!\d)", text):
        out.extend(numbers_to_digits(words(part)))
    return out


def numbers_to_digits(tokens: list[str]) -> list[str]:
    """Number-word runs to digits: ``["four", "hundred", "and", "five"]`` -> ``["405"]``."""
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        w = tokens[i]
        if w in UNITS and w != "half" or w in TENS:
            total, current, j = 0, 0, i
            while j < n:
                t = tokens[j]
                if t in UNITS and t != "half":
                    current += UNITS[t]
                elif t in TENS:
                    current += TENS[t]
                elif t in SCALES:
                    if t == "hundred":
                        current = max(current, 1) * 100
                    else:
                        total += max(current, 1) * SCALES[t]
                        current = 0
                elif t == "and" and j + 1 < n and (tokens[j + 1] in UNITS or tokens[j + 1] in TENS) and j > i \
                        and tokens[j - 1] in SCALES:
                    pass
                else:
                    break
                j += 1
            out.append(_fmt(total + current))
            i = j
        else:
            out.append(w)
            i += 1
    return out


def _fmt(x: float) -> str:
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def number(token: str) -> float | None:
    try:
        return float(token.replace(",", ""))
    except ValueError:
        return None


def content_words(text: str, drop: tuple[str, ...] = ()) -> list[str]:
    """Content words in order of first appearance, without stop words or ``drop``."""
    seen, out = set(drop), []
    for w in words(text):
        if w in STOP or w in seen or len(w) < 3 and not w.isdigit():
            continue
        seen.add(w)
        out.append(w)
    return out


def is_question(text: str) -> bool:
    ws = words(text)
    if text.strip().endswith("?"):
        return True
    return bool(ws) and (ws[0] in QUESTION_WORDS or (len(ws) > 1 and ws[0] in ("so", "and", "hey") and ws[1] in QUESTION_WORDS))


def similar(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def name_heard(transcript: str, name: str, threshold: float = 0.65) -> bool:
    """Whether ``name`` (one or more words) is in ``transcript``, allowing ASR misspellings
    ("Aria" heard as "Arya", "Area", "Ariel")."""
    target = words(name)
    if not target:
        return False
    ws = words(transcript)
    k = len(target)
    for i in range(len(ws) - k + 1):
        if similar(" ".join(ws[i : i + k]), " ".join(target)) >= threshold:
            return True
    return False


_NAME_PATTERNS = (
    r"\b(?i:your name is) ([A-Z][\w'-]*)",
    r"\b(?i:you are|you're) (?:(?i:called|named) )?([A-Z][\w'-]*)",
    r"\b(?i:called|named) ([A-Z][\w'-]*)",
    r"\b(?:I am|I'm) ([A-Z][\w'-]*)",
    r"\b(?i:this is) ([A-Z][\w'-]*)",
)
_NOT_NAMES = frozenset("A An The Your You I It This That Here There Now Today Please".split())


def name_from_duty(duty: str) -> str | None:
    """The assistant's name as stated in its duty text ("You are Aria, ...", "Your name is Max")."""
    for pat in _NAME_PATTERNS:
        for m in re.finditer(pat, duty or ""):
            name = m.group(1).strip("'-")
            if name and name not in _NOT_NAMES:
                return name
    return None
