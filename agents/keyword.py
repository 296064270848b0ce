"""The keyword baseline: answers any question or request that names nobody, or names the assistant.

A reference point for multi-party addressing (README's MPE table), not a good assistant. It is
the cascade (it hears the microphone, endpoints turns, transcribes them with the scoring
recogniser, Whisper tiny.en, and answers with the offline responder) with one addressing rule in
place of the cascade's name gate:

* a turn is a *question* when its transcript ends with "?" or opens with a question word, and a
  *request* when it opens with an imperative verb or contains "can you", "could you", "please",
  ... (after an opener such as "okay", "so" or a name);
* it *names someone* when it has a capitalised word that does not open a sentence (Whisper
  capitalises names) or opens with "Name," (a vocative), other than "I", days, months and
  openers; it *names the assistant* when the assistant's name is heard (as in the cascade's gate).

It answers a question or request that names the assistant, or names nobody; everything else it
hears in silence. Not privileged: it gets neither the scene nor the labels.
"""

from __future__ import annotations

import re

from .cascade import CascadeAgent
from .cascade.text import QUESTION_WORDS, name_heard

RULE_VERSION = 1
OPENERS = frozenset("""okay ok right so and hey well um uh oh sorry please alright now then also but wait yes yeah
                    no hi hello hmm good great fine actually look listen quick""".split())
VERBS = frozenset("""add book call cancel check count find get give help let look make message note order play put
                  read remind reserve schedule send set split start stop tell text turn update work write show spell
                  calculate figure sort email ring update open close buy pay add post keep dim switch mute
                  skip""".split())
REQUEST_CUES = ("can you", "could you", "would you", "will you", "please", "tell me", "i need you", "i want you",
                "remind me", "let me know")
NOT_NAMES = frozenset("""I Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
                      June July August September October November December OK Okay Mr Mrs Ms Dr TV""".split())


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _words(s: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'-]*", s)


def is_question_or_request(text: str) -> bool:
    low = text.lower()
    if text.strip().endswith("?") or any(c in low for c in REQUEST_CUES):
        return True
    for s in _sentences(text):
        ws = [w.lower() for w in _words(s)]
        i = 0
        while i < len(ws) and (ws[i] in OPENERS or (i < 2 and s.split()[i][:1].isupper() and s.split()[i].endswith(","))):
            i += 1  # "Okay,", "So", "Tom," before the question or the verb
        if i < len(ws) and (ws[i] in QUESTION_WORDS or ws[i] in VERBS):
            return True
    return False


def names_someone(text: str, assistant: str) -> bool:
    """A capitalised word other than at a sentence's start, or a vocative "Name," at the start."""
    for s in _sentences(text):
        toks = s.split()
        for j, tok in enumerate(toks):
            w = re.sub(r"[^A-Za-z'-]", "", tok).split("'")[0]
            if not w or not w[0].isupper() or w in NOT_NAMES or w.lower() in OPENERS:
                continue
            if name_heard(w, assistant):
                continue
            if j > 0 or tok.endswith(","):
                return True
    return False


class KeywordAgent(CascadeAgent):
    name = "keyword"

    def addressed(self, text: str) -> bool:
        if not is_question_or_request(text):
            return False
        return name_heard(text, self.assistant_name) or not names_someone(text, self.assistant_name)

    def config(self) -> dict:
        return {**super().config(), "rule": f"keyword-{RULE_VERSION}"}
