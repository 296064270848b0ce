"""The MPE pair design as checks: what every explicit/implicit pair must be, whoever wrote it.

Both back ends are held to these: the template generator's pairs pass them (a test runs them on
every shipped pair), and the Claude back end rejects an answer that fails them and asks again
with the problems. ``pair_problems(explicit, implicit)`` lists every way a pair of scene dicts
breaks the design (``docs/multiparty.md``):

* the twins share every turn, speaker, gap and field; only T's text (and its addressee) differ;
* the implicit T is a request to a device in the imperative ("Text Elena what each of us
  owes."), naming no assistant and opening with no leftover address ("Hey,", "Okay,");
* the explicit T is the same request with the assistant's name in one of ``EXPLICIT_FORMS``;
* T carries a gold answer and its key facts (``gold_facts``);
* before T: at least two ``ctx`` turns (the facts) and an ``N1`` turn saying the assistant will be
  asked ("I'll get Nova to split the bill"), which names it without addressing it.

``unnamed_human_questions(scene)`` counts the humans' questions to each other that name nobody
(an ``N2`` turn to a person, right after that person spoke, ending in "?"); a set has them in at
least 30 % of its scenes.
"""

from __future__ import annotations

import re

from .mpe import EXPLICIT_FORMS, explicit_request

# First words of a request to a device (imperative); anything else ("Hey,", "So", "Quick
# question,") is an address left over from an explicit request, or not a request.
DEVICE_VERBS = frozenset(
    "add book buy call cancel change check confirm create dial dim email find forward get log look make "
    "message move note order pay play post print put read record remind reserve ring save schedule send set "
    "share show split start switch tell text track transfer turn update work write".split())
_ASK_CUE = r"\b(ask|asking|get|getting|have|having|let|want|tell)\b[^.?!]*\b{A}\b|\b{A}\b(?: can| will| could| should|'ll)\b"


def _t(d: dict) -> tuple[int, dict] | tuple[None, None]:
    ts = [(i, t) for i, t in enumerate(d.get("turns") or []) if t.get("label") == "T"]
    return ts[0] if len(ts) == 1 else (None, None)


def _names(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def addresses(text: str, A: str) -> bool:
    """Whether ``text`` calls ``A`` (a vocative at the start: "Nova, ...", "Hey Nova ...", "Nova?")."""
    return re.match(rf"\W*(?:(?:hey|hi|okay|ok|so|right|sorry|excuse me),?\s+)?{re.escape(A)}\s*[,?!]", text, re.I) is not None


def is_ask_context(text: str, A: str) -> bool:
    """A turn that says the assistant will be asked ("I'll get Nova to ...", "Nova can ..."),
    without addressing it."""
    return re.search(_ASK_CUE.format(A=re.escape(A)), text, re.I) is not None and not addresses(text, A)


def device_request_problems(text: str, A: str) -> list[str]:
    """Why ``text`` is not an implicit request to a device (an empty list when it is one)."""
    out = []
    if _names(text, A):
        out.append(f"the implicit request names the assistant {A!r}")
    first = re.sub(r"\W", "", (text.split() or [""])[0]).lower()
    if first not in DEVICE_VERBS:
        out.append(f"the implicit request must start with a verb asking a device to do something "
                   f"(Text, Put, Set, Send, Book, ...), not {text.split()[0] if text.split() else text!r}")
    if not text.rstrip().endswith((".", "?", "!")):
        out.append("the implicit request must end with '.', '?' or '!'")
    return out


def pair_problems(explicit: dict, implicit: dict) -> list[str]:
    """Every way an (explicit, implicit) pair of scene dicts breaks the design (module text)."""
    out: list[str] = []
    if (explicit.get("condition"), implicit.get("condition")) != ("explicit", "implicit"):
        out.append("the pair must be (explicit, implicit) in that order")
    rest = lambda d: {k: v for k, v in d.items() if k not in ("id", "condition", "turns")}  # noqa: E731
    if rest(explicit) != rest(implicit):
        diff = sorted(k for k in set(rest(explicit)) | set(rest(implicit)) if explicit.get(k) != implicit.get(k))
        out.append(f"the twins differ in {diff}; only T's wording may differ")
    A = explicit.get("assistant_name", "Aria")
    (ie, te), (ii, ti) = _t(explicit), _t(implicit)
    if te is None or ti is None:
        return out + ["each twin has exactly one T turn"]
    ex_turns, im_turns = explicit.get("turns") or [], implicit.get("turns") or []
    strip = lambda t: {k: v for k, v in t.items() if k not in ("text", "addressee")}  # noqa: E731
    if ie != ii or [strip(t) if t["label"] == "T" else t for t in ex_turns] != \
            [strip(t) if t["label"] == "T" else t for t in im_turns]:
        out.append("the twins' turns differ outside T's wording (speakers, texts, gaps or fields)")
    if not te.get("gold_answer") or not te.get("gold_facts"):
        out.append("T needs a gold_answer and its gold_facts")
    out += device_request_problems(ti["text"], A)
    if ti.get("addressee") is not None:
        out.append("the implicit T has no addressee field")
    if te.get("addressee") != A:
        out.append(f"the explicit T's addressee must be {A!r}")
    if not any(explicit_request(f, ti["text"], A) == te["text"] for f in EXPLICIT_FORMS):
        out.append("the explicit T must be the implicit request with the assistant's name in one of EXPLICIT_FORMS")
    before = im_turns[1:ii]
    if sum(t["label"] == "ctx" for t in before) < 2:
        out.append("at least two ctx turns (the facts) come before T")
    if not any(t["label"] == "N1" and is_ask_context(t["text"], A) for t in before):
        out.append(f"before T, an N1 turn must say that {A} will be asked (\"I'll get {A} to ...\"), without addressing {A}")
    return out


def unnamed_human_questions(scene: dict) -> int:
    """The humans' questions to each other that name nobody (an N2 turn to a person who spoke
    just before it, ending in '?', without the person's name)."""
    turns = scene.get("turns") or []
    humans = set(scene.get("speakers") or [])
    n = 0
    for i, t in enumerate(turns):
        to = t.get("addressee")
        if t.get("label") == "N2" and to in humans and not _names(t["text"], to) and i > 0 \
                and turns[i - 1]["speaker"] == to and t["text"].rstrip().endswith("?"):
            n += 1
    return n
