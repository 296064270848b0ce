"""Responders: what the cascade says to a user turn.

* ``OfflineResponder`` (``name == "offline"``): deterministic, no network. It computes simple
  arithmetic from facts heard earlier in the episode when the request asks for it ("four tickets
  at twelve each" + "how much did we spend?" -> "4 tickets at 12 each comes to 48."), else
  answers a question with the earlier sentence that shares most of its words ("who has the
  tickets?" -> "From what I heard: Hugo, you've got the tickets."), and otherwise says a fitting
  sentence that reuses the content words of what it heard.
* ``ClaudeResponder`` (``name == "claude:<model>"``): Claude through the ``anthropic`` SDK, with
  the duty text as system prompt and the episode's transcript as the conversation. On an API
  failure it says the offline responder's answer and counts the failure.

``make_responder("offline" | "claude", model=...)``: ``"claude"`` without ``ANTHROPIC_API_KEY``
gives the offline responder, with a warning.
"""

from __future__ import annotations

import os
import re
import warnings

from .text import _fmt, content_words, is_question, number, number_words, words

DEFAULT_CLAUDE_MODEL = "claude-haiku-4-5"

_EACH = ("each", "apiece", "per", "a piece", "a head")
_SPLIT = ("split", "share", "divide", "divided", "per person", "each of us", "each person", "each pay",
          "between", "among", "everyone pay", "each owe", "per head", "each")
_TOTAL = ("total", "altogether", "all together", "together", "combined", "in all", "sum", "spend", "spent",
          "cost", "costs", "pay", "owe", "come to", "comes to", "how much", "how many")
_LEFT = ("left", "remain", "remaining", "change", "more than", "difference", "how much more", "leaves", "short")
_PEOPLE = ("of us", "people", "ways", "friends", "persons", "guests", "of you", "of them", "kids", "players")


def _has(text: str, cues) -> bool:
    t = f" {' '.join(words(text))} "
    return any(f" {c} " in t for c in cues)


def _products(tokens: list[str]) -> list[tuple[float, float, str, float]]:
    """(count, unit, item, product) for each "C <item> at/for P each" found."""
    out = []
    for i, w in enumerate(tokens):
        if w not in ("each", "apiece", "per") and not (w == "a" and i + 1 < len(tokens) and tokens[i + 1] in ("piece", "head")):
            continue
        j = i - 1
        while j >= 0 and j >= i - 2 and number(tokens[j]) is None:
            j -= 1  # "12 dollars each"
        if j < 0 or number(tokens[j]) is None:
            continue
        unit = number(tokens[j])
        k = j - 1
        while k >= 0 and k >= j - 7 and number(tokens[k]) is None:
            k -= 1
        if k < 0 or number(tokens[k]) is None:
            continue
        count = number(tokens[k])
        item = [t for t in tokens[k + 1 : j] if t not in ("at", "for", "of", "cost", "costs", "costing", "that", "which", "were", "was", "is", "are")]
        out.append((count, unit, " ".join(item), count * unit))
    return out


def _people(tokens: list[str]) -> float | None:
    text = " ".join(tokens)
    found = None
    for i, w in enumerate(tokens):
        n = number(w)
        if n is None or n < 2 or n > 100 or not n.is_integer():
            continue
        after = " ".join(tokens[i + 1 : i + 3])
        if any(after.startswith(p) for p in _PEOPLE):
            found = n
    if found is None and ("both of us" in text or "the two of us" in text):
        found = 2
    return found


def arithmetic(request: str, facts: list[str]) -> str | None:
    """A sentence with the computed answer, or None when no computation applies."""
    req = number_words(request)
    fact_tokens = number_words(" . ".join(facts[-12:]))
    tokens = fact_tokens + ["."] + req
    products = _products(tokens)
    nums = [number(t) for t in tokens if number(t) is not None]
    if _has(request, _SPLIT) and not _products(req) or any(p in " ".join(req) for p in ("per person", "each of us", "split")):
        people = _people(req) or _people(fact_tokens)
        if people:
            if products:
                total = sum(p[3] for p in products) if _has(request, ("total", "altogether", "all")) and len(products) > 1 else products[-1][3]
            else:
                money = [n for n in nums if n != people]
                total = money[-1] if money else None
            if total:
                return f"{_fmt(total)} split {_fmt(people)} ways is {_fmt(total / people)} each."
    if products and _has(request, _TOTAL):
        if len(products) > 1 and _has(request, ("total", "altogether", "all together", "together", "combined", "in all", "both")):
            total = sum(p[3] for p in products)
            parts = " and ".join(f"{_fmt(c)} {it + ' ' if it else ''}at {_fmt(u)} each" for c, u, it, _ in products)
            return f"{parts} comes to {_fmt(total)} altogether."
        c, u, it, total = products[-1]
        return f"{_fmt(c)} {it + ' ' if it else ''}at {_fmt(u)} each comes to {_fmt(total)}."
    if _has(request, _LEFT) and len(nums) >= 2:
        a, b = sorted(nums[-4:])[-1], sorted(nums[-4:])[-2]
        return f"That leaves {_fmt(a - b)}."
    if _has(request, ("total", "altogether", "all together", "combined", "in all", "sum")) and len(nums) >= 2:
        return f"Altogether that comes to {_fmt(sum(nums))}."
    return None


def _topic(ws: list[str]) -> str:
    return ws[0] if len(ws) == 1 else ", ".join(ws[:-1]) + " and " + ws[-1]


def fitting(request: str, name: str = "") -> str:
    """A deterministic reply that reuses the request's content words."""
    drop = tuple(w for w in words(name))
    cw = content_words(request, drop=drop)[:4]
    if not cw:
        return "Sure, I can help with that. Just tell me what you need."
    topic = _topic(cw)
    if is_question(request):
        return f"Good question about {topic}. I think the {cw[0]} matters most here, so let us look at {topic} together."
    return f"Okay, {topic}. Thank you for telling me about the {cw[-1]}, I will keep that in mind."


def _stem(w: str) -> str:
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def recall(request: str, facts: list[str], name: str = "") -> str | None:
    """The earlier sentence that shares the most content words with a question, as an answer
    ("who has the tickets?" + "Hugo, you've got the tickets." -> "From what I heard: Hugo,
    you've got the tickets."), or None."""
    if not is_question(request):
        return None
    drop = tuple(words(name))
    want = {_stem(w) for w in content_words(request, drop=drop)}
    if not want:
        return None
    best, best_score = None, 0
    for fact in facts[-20:]:
        for sent in re.split(r"(?<=[.!?])\s+", fact):
            have = {_stem(w) for w in content_words(sent, drop=drop)}
            score = len(want & have)
            if score >= best_score and score > 0 and not is_question(sent):
                best, best_score = sent.strip(), score
    if best is None:
        return None
    return f"From what I heard: {best.rstrip('.!?')}."


class OfflineResponder:
    name = "offline"

    def __init__(self):
        self.failures = 0

    def respond(self, request: str, history: list[dict], duty: str = "", assistant_name: str = "") -> str:
        facts = [h["text"] for h in history if h["role"] == "user" and not h.get("duty")]
        if facts and facts[-1] == request:
            facts = facts[:-1]
        return arithmetic(request, facts) or recall(request, facts, assistant_name) or fitting(request, assistant_name)


SYSTEM = (
    "You are {name}, a voice assistant in a room where several people talk. Your duty: {duty}\n"
    "You hear the room through a microphone; the user messages are transcripts of what was said "
    "(other people's speech included). Reply with what you say out loud: one to three short "
    "spoken sentences, plain text, no lists or markup. Use facts said earlier when they answer "
    "the question, and do the arithmetic."
)


class ClaudeResponder:
    def __init__(self, model: str = DEFAULT_CLAUDE_MODEL, *, client=None, http_client=None, max_tokens: int = 150,
                 timeout_s: float = 20.0):
        self.model = model
        self.max_tokens = max_tokens
        if client is None:
            import anthropic

            kwargs = {"max_retries": 1, "timeout": timeout_s}
            if http_client is not None:
                kwargs["http_client"] = http_client
            client = anthropic.Anthropic(**kwargs)
        self.client = client
        self.failures = 0
        self._fallback = OfflineResponder()

    @property
    def name(self) -> str:
        return f"claude:{self.model}"

    def respond(self, request: str, history: list[dict], duty: str = "", assistant_name: str = "") -> str:
        messages: list[dict] = []
        for h in history:
            role = "assistant" if h["role"] == "assistant" else "user"
            if not messages and role == "assistant":
                continue
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"] += "\n" + h["text"]
            else:
                messages.append({"role": role, "content": h["text"]})
        if not messages or messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": request})
        system = SYSTEM.format(name=assistant_name or "the assistant", duty=duty or "help the people in the room.")
        try:
            msg = self.client.messages.create(model=self.model, max_tokens=self.max_tokens, system=system,
                                              messages=messages)
            text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", None) == "text").strip()
        except Exception as e:  # noqa: BLE001 - any API failure: say something rather than nothing
            self.failures += 1
            warnings.warn(f"cascade: Claude responder failed ({type(e).__name__}: {e}); offline answer used")
            text = ""
        return text or self._fallback.respond(request, history, duty, assistant_name)


def make_responder(kind: str = "offline", model: str = DEFAULT_CLAUDE_MODEL, **kwargs):
    if kind == "offline":
        return OfflineResponder()
    if kind == "claude":
        if not os.environ.get("ANTHROPIC_API_KEY") and "client" not in kwargs and "http_client" not in kwargs:
            warnings.warn("cascade: responder='claude' but ANTHROPIC_API_KEY is not set; using the offline responder")
            return OfflineResponder()
        return ClaudeResponder(model, **kwargs)
    raise ValueError(f"responder={kind!r}: valid responders are ['claude', 'offline']")
