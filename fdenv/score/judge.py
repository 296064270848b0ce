"""Judges (SPEC 8): answer correctness, acknowledgement vs intrusion, interruption relevance 0-5.

Two kinds with one interface (``correct``, ``acknowledgement``, ``relevance``; each returns a
verdict or ``None`` when no verdict could be had, never a default pass or 0):

* ``OfflineJudge`` (``name == "offline"``): no key, deterministic, used in tests and whenever no
  API key is configured. Text normalisation: lower case; hyphens, colons and slashes to spaces;
  other punctuation and currency signs removed; number-word runs to digits ("three hundred and
  forty" -> "340", "seven thirty" -> "7 30", "7:30" -> "7 30"); stop words dropped.
  Correctness reads key facts (``facts.py``): correct iff every key fact (numbers with units, clock
  times, dates, yes/no, names) is present and no conflicting fact of the same kind is stated. The
  key is the request's ``gold_facts`` when given, else the facts of the plain gold sentence; a gold
  sentence that states none falls back to: >= 60% of its content tokens appear in the answer.
  Acknowledgement iff
  the segment is < 1 s with at most 2 words. Relevance = round(5 * min(1, 2 r)), r = shared content
  tokens / content tokens of the interrupting turn (rounded half up).
* ``AnthropicJudge`` (``name == "anthropic:<model>"``): the ``anthropic`` SDK, temperature 0,
  versioned prompts from ``fdenv/score/prompts/<task>_<version>.txt``, strict JSON parsing,
  retries with exponential backoff on rate limits, server errors and connection errors, verdicts
  cached on disk under ``$FDENV_CACHE_DIR/judge`` by a hash of (model, prompt version, task,
  inputs). ``coverage()`` reports how many verdicts were asked for and had.

``make_judge("offline" | "anthropic" | "anthropic:<model>" | dict | judge)`` builds one; asking for
the Anthropic judge without a key gives the offline judge (with a warning), labelled ``offline``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
import warnings
from pathlib import Path
from string import Template

from ..errors import ConfigError, suggest
from ..sealed import load_json, save_json
from .text import content_tokens, normalise

DEFAULT_MODEL = "claude-sonnet-4-6"
# The version names the set of prompts; a task whose prompt did not change keeps its older file.
PROMPT_VERSION = "v2"
PROMPT_DIR = Path(__file__).parent / "prompts"
TASKS = ("relevance", "correctness", "acknowledgement", "behaviour")
# Generic "I did not hear you" moves (v1.5's C_UNCERTAIN_HANDLING), as normalised text.
UNCERTAIN_PHRASES = ("didnt catch", "did not catch", "missed that", "say that again", "repeat that", "pardon",
                     "sorry what", "what did you say", "could you repeat", "can you repeat", "didnt hear", "did not hear")
BEHAVIOUR_RULES = "behaviour-1"  # the offline judge's overlap rules, named in their results

# ------------------------------------------------------------------------------ offline judge


class OfflineJudge:
    """Token-overlap judge of SPEC 8; deterministic, no network."""

    name = "offline"
    model = None
    # The version of its rules (normalisation, stop words): results and run folders name it, so a
    # change of rules never mixes with earlier verdicts. 2: stop words compared after normalisation.
    # 3: correctness by key facts (numbers, times, dates, yes/no, names) with conflicts.
    prompt_version = "rules-3"

    def __init__(self):
        self.asked = 0
        self.answered = 0
        self.last_failure: str | None = None  # why the latest verdict is missing (None: it was had)

    def correct(self, answer: str, gold: str, request: str = "", facts=None) -> bool | None:
        self.asked += 1
        self.last_failure = None
        key = gold_key(gold, facts)
        if key is not None:
            self.answered += 1
            return judge_facts(answer or "", key)
        gold_tokens = set(content_tokens(gold))
        if not gold_tokens:
            self.last_failure = "the gold answer has no content words"
            return None
        have = set(content_tokens(answer or ""))
        self.answered += 1
        return len(gold_tokens & have) >= 0.6 * len(gold_tokens)

    def acknowledgement(self, utterance: str, duration_s: float, n_words: int | None = None, context: str = "") -> bool | None:
        self.asked += 1
        self.answered += 1
        self.last_failure = None
        if n_words is None:
            n_words = len((utterance or "").split())
        return duration_s < 1.0 and n_words <= 2

    def relevance(self, response: str, interrupt: str, context: str = "") -> int | None:
        self.asked += 1
        self.last_failure = None
        target = set(content_tokens(interrupt or ""))
        if not target:
            self.last_failure = "the interrupting turn has no content words"
            return None
        shared = target & set(content_tokens(response or ""))
        r = len(shared) / len(target)
        self.answered += 1
        return int(math.floor(5 * min(1.0, 2 * r) + 0.5))

    def behaviour(self, event: str, overlap: str, request: str, before, after, response, gold: str | None = None,
                  held: bool = False, span=None) -> str | None:
        """Full-Duplex-Bench v1.5's tag (``fdb15.BEHAVIOURS``) of what followed an overlap event, by
        rules (``BEHAVIOUR_RULES``). ``before``/``after``: the assistant's words before the event's
        start and from it on; ``response``: the words of its first new stretch after the start
        (empty when it only went on with what it was saying); ``held``: its speech under way at
        the start went on to the event's end. No words after the start: ``C_UNKNOWN``; a generic
        "didn't catch that": ``C_UNCERTAIN_HANDLING``; no new stretch: ``C_RESUME`` when it held,
        else ``C_UNKNOWN``; a new stretch that states the interruption's gold answer (SPEC 8's
        correctness) or 30 % of the overlap's content words (relevance >= 3): ``C_RESPOND``; one
        whose content words are at least half the request's or its own earlier words: ``C_RESUME``;
        else ``C_UNKNOWN``."""
        self.asked += 1
        self.answered += 1
        self.last_failure = None
        said = " ".join(normalise(_text(after)))
        if not said:
            return "C_UNKNOWN"
        if any(x in f" {said} " for x in (f" {p} " for p in UNCERTAIN_PHRASES)):
            return "C_UNCERTAIN_HANDLING"
        reply = _text(response)
        if not reply.strip():
            return "C_RESUME" if held else "C_UNKNOWN"
        have = set(content_tokens(reply))
        if gold and _states(reply, gold):
            return "C_RESPOND"
        target = set(content_tokens(overlap))
        if target and len(target & have) >= 0.3 * len(target):
            return "C_RESPOND"
        original = set(content_tokens(f"{request} {_text(before)}"))
        if have and len(have & original) >= 0.5 * len(have):
            return "C_RESUME"
        return "C_UNKNOWN"

    def coverage(self) -> dict:
        return {"judge": self.name, "asked": self.asked, "answered": self.answered}


def _text(words) -> str:
    return words if isinstance(words, str) else " ".join(w.text for w in words)


def _states(answer: str, gold: str) -> bool:
    """SPEC 8's offline correctness: the gold's key facts, else 60 % of its content words."""
    key = gold_key(gold)
    if key is not None:
        return judge_facts(answer, key)
    want = set(content_tokens(gold))
    return bool(want) and len(want & set(content_tokens(answer))) >= 0.6 * len(want)


# ------------------------------------------------------------------------------ LLM judge


class JudgeParseError(ValueError):
    pass


def gold_key(gold: str, facts=None):
    """The key facts of a gold answer: its ``gold_facts`` entries when given, else those of the
    gold sentence (``None`` when it states none)."""
    from .facts import key_from_sentence, parse_key

    return parse_key(facts) if facts else key_from_sentence(gold or "")


def judge_facts(answer: str, key) -> bool:
    from .facts import judge

    return judge(answer, key)


def load_prompt(task: str, version: str = PROMPT_VERSION) -> tuple[str, Template]:
    """(system text, user template) of a versioned prompt file: ``<task>_<version>.txt``, or the
    task's newest file of an older version when its prompt did not change in ``version``."""
    path = PROMPT_DIR / f"{task}_{version}.txt"
    if not path.is_file() and re.fullmatch(r"v\d+", version):
        older = [PROMPT_DIR / f"{task}_v{k}.txt" for k in range(int(version[1:]) - 1, 0, -1)]
        path = next((p for p in older if p.is_file()), path)
    if not path.is_file():
        raise FileNotFoundError(f"no judge prompt {path.name} (tasks {TASKS}, versions as files in {PROMPT_DIR.name}/)")
    text = path.read_text(encoding="utf-8")
    system, sep, user = text.partition("=== user ===\n")
    if not sep:
        raise ValueError(f"{path.name}: missing the '=== user ===' line between the system text and the user template")
    return system.strip(), Template(user.strip())


def parse_verdict(task: str, reply: str):
    """Strict parsing: the whole reply is one JSON object with exactly the expected key."""
    try:
        data = json.loads(reply.strip())
    except (ValueError, AttributeError):
        raise JudgeParseError(f"not a JSON object: {reply[:80]!r}") from None
    if not isinstance(data, dict):
        raise JudgeParseError(f"not a JSON object: {reply[:80]!r}")
    if task == "relevance":
        v = data.get("rating")
        if set(data) != {"rating"} or isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 5:
            raise JudgeParseError(f"expected {{\"rating\": 0..5}}, got {reply[:80]!r}")
        return v
    if task == "correctness":
        v = data.get("correct")
        if set(data) != {"correct"} or not isinstance(v, bool):
            raise JudgeParseError(f"expected {{\"correct\": true|false}}, got {reply[:80]!r}")
        return v
    if task == "behaviour":
        from .fdb15 import parse_behaviour

        try:
            return parse_behaviour(reply)
        except ValueError as e:
            raise JudgeParseError(str(e)) from None
    if task == "acknowledgement":
        v = data.get("label")
        if set(data) != {"label"} or v not in ("acknowledgement", "intrusion"):
            raise JudgeParseError(f"expected {{\"label\": \"acknowledgement\"|\"intrusion\"}}, got {reply[:80]!r}")
        return v == "acknowledgement"
    raise ValueError(f"unknown judge task {task!r}")


def _check_verdict(task: str, v) -> str | None:
    """Why a cached verdict cannot be one of ``task`` (the types ``parse_verdict`` returns), or None."""
    if task == "behaviour":
        from .fdb15 import BEHAVIOURS

        return None if v in BEHAVIOURS else f"{v!r} is not a behaviour verdict"
    ok = (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 5) if task == "relevance" else isinstance(v, bool)
    return None if ok else f"{v!r} is not a {task} verdict"


def judge_cache_dir() -> Path:
    from ..paths import cache_dir as root

    return root() / "judge"


class AnthropicJudge:
    """LLM judge through the ``anthropic`` SDK (SPEC 8)."""

    def __init__(self, model: str = DEFAULT_MODEL, *, api_key: str | None = None, client=None, http_client=None,
                 base_url: str | None = None, prompt_version: str = PROMPT_VERSION, cache: bool = True, max_retries: int = 4,
                 backoff_s: float = 1.0, max_backoff_s: float = 30.0, timeout_s: float = 60.0, max_tokens: int = 64,
                 temperature: float | None = 0.0, sleep=time.sleep):
        self.model = model
        self.temperature = temperature
        self.prompt_version = prompt_version
        self.cache = cache
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_tokens = max_tokens
        self._sleep = sleep
        if client is None:
            import anthropic

            kwargs = {"api_key": api_key, "max_retries": 0, "timeout": timeout_s}
            if http_client is not None:
                kwargs["http_client"] = http_client
            if base_url is not None:  # a proxy or gateway; the key still comes from the environment
                kwargs["base_url"] = str(base_url)
            client = anthropic.Anthropic(**kwargs)
        self.client = client
        self.asked = 0
        self.answered = 0
        self.failures: list[str] = []
        self.last_failure: str | None = None  # why the latest verdict is missing (None: it was had)
        for task in TASKS:
            load_prompt(task, prompt_version)  # fail early on a missing prompt

    @property
    def name(self) -> str:
        return f"anthropic:{self.model}"

    def coverage(self) -> dict:
        return {"judge": self.name, "prompt_version": self.prompt_version, "temperature": self.temperature, "asked": self.asked,
                "answered": self.answered, "failures": list(self.failures[-20:])}

    # public verdicts --------------------------------------------------------------------
    def relevance(self, response: str, interrupt: str, context: str = "") -> int | None:
        return self._ask("relevance", {"context": context, "interrupt": interrupt, "response": response})

    def correct(self, answer: str, gold: str, request: str = "", facts=None) -> bool | None:
        key = gold_key(gold, facts)
        key_facts = key.describe() if key is not None else "(none listed: judge by the gold answer's meaning)"
        return self._ask("correctness", {"request": request, "gold": gold, "facts": key_facts, "answer": answer})

    def behaviour(self, event: str, overlap: str, request: str, before, after, response, gold: str | None = None,
                  held: bool = False, span=None) -> str | None:
        """v1.5's tag by Claude (``prompts/behaviour_v1.txt``: word lists with times, as v1.5 gives them)."""
        from .fdb15 import words_json

        a, b = span if span is not None else (0.0, None)
        said = words_json([(overlap, a, b)]) if overlap else "[]"
        return self._ask("behaviour", {"request": request, "before": words_json(before), "overlap": said,
                                       "after": words_json(after)})

    def acknowledgement(self, utterance: str, duration_s: float, n_words: int | None = None, context: str = "") -> bool | None:
        return self._ask("acknowledgement", {"context": context, "utterance": utterance, "duration": f"{duration_s:.2f}"})

    # machinery --------------------------------------------------------------------------
    def _key(self, task: str, fields: dict) -> str:
        # the temperature too: a model that refused one answers without it, and those verdicts differ
        blob = json.dumps({"model": self.model, "prompt_version": self.prompt_version, "temperature": self.temperature,
                           "task": task, "inputs": fields}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def _ask(self, task: str, fields: dict):
        self.asked += 1
        self.last_failure = None
        key = self._key(task, fields)
        path = judge_cache_dir() / key[:2] / f"{key}.json"
        if self.cache:  # a verdict of the wrong type, or a changed or misplaced file, is asked again
            cached = load_json(path, key, lambda v: _check_verdict(task, v))
            if cached is not None:
                self.answered += 1
                return cached
        system, template = load_prompt(task, self.prompt_version)
        user = template.safe_substitute({k: str(v) for k, v in fields.items()})
        reply = self._call(system, user)
        if reply is None:
            self.last_failure = self.failures[-1] if self.failures else "no reply"
            return None
        try:
            verdict = parse_verdict(task, reply)
        except JudgeParseError as e:
            self.failures.append(f"{task}: {e}")
            self.last_failure = f"unparsable reply ({task})"
            return None
        self.answered += 1
        if self.cache:
            key = self._key(task, fields)  # the temperature may have been dropped during the call
            path = judge_cache_dir() / key[:2] / f"{key}.json"
            save_json(path, key, verdict, model=self.model, prompt_version=self.prompt_version,
                      temperature=self.temperature, task=task, inputs=fields, reply=reply)
        return verdict

    def _call(self, system: str, user: str) -> str | None:
        import anthropic

        attempt = 0
        while True:
            try:
                # anthropic 2.x has no ``temperature`` keyword: it goes in the body as the API field.
                extra = {"temperature": self.temperature} if self.temperature is not None else None
                msg = self.client.messages.create(
                    model=self.model, max_tokens=self.max_tokens, system=system,
                    messages=[{"role": "user", "content": user}], extra_body=extra,
                )
                return "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", None) == "text")
            except (anthropic.RateLimitError, anthropic.InternalServerError, anthropic.APIConnectionError) as e:
                retry_after = _retry_after(e)
                if attempt >= self.max_retries:
                    self.failures.append(f"gave up after {attempt + 1} attempts: {type(e).__name__}")
                    return None
                delay = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
                if retry_after is not None:
                    delay = min(self.max_backoff_s, max(delay, retry_after))
                self._sleep(delay)
                attempt += 1
            except anthropic.APIStatusError as e:  # 4xx other than 429: asking again will not help
                if e.status_code == 400 and self.temperature is not None and "temperature" in str(e).lower():
                    # a model that does not take a temperature: ask it without one from now on
                    self.failures.append("the model does not accept 'temperature'; asking without it")
                    self.temperature = None
                    continue
                self.failures.append(f"HTTP {e.status_code}: {type(e).__name__}")
                return None


def _retry_after(e) -> float | None:
    resp = getattr(e, "response", None)
    if resp is None:
        return None
    try:
        v = resp.headers.get("retry-after")
        return float(v) if v is not None else None
    except (TypeError, ValueError):
        return None


# What a judge config group (conf/judge/*.yaml, +judge.<field>=...) may set for the anthropic judge.
CONFIG_FIELDS = ("model", "base_url", "prompt_version", "cache", "max_retries", "backoff_s", "max_backoff_s",
                 "timeout_s", "max_tokens", "temperature")


def make_judge(spec=None, **kwargs):
    """A judge from configuration: ``None``/``"offline"``, ``"anthropic"``, ``"anthropic:<model>"``,
    a dict ``{"kind": "anthropic", "model": ..., ...}``, or a judge object (returned as is).
    Without an API key (``ANTHROPIC_API_KEY``) or a client, the Anthropic judge falls back to the
    offline one with a warning."""
    if spec is None or spec == "offline":
        return OfflineJudge()
    if not isinstance(spec, (str, dict)):
        return spec
    if isinstance(spec, str):
        kind, _, model = spec.partition(":")
        spec = {"kind": kind, **({"model": model} if model else {})}
    spec = {**spec, **kwargs}
    kind = spec.pop("kind", "offline")
    if kind == "offline":
        return OfflineJudge()
    if kind != "anthropic":
        raise ConfigError(f"judge.kind={kind!r}: unknown judge; use 'offline' or 'anthropic[:model]'")
    if spec.get("api_key") is not None:
        raise ConfigError("judge.api_key: the key is read from ANTHROPIC_API_KEY in the environment only, never from "
                          "configuration (it would be saved with the run); remove it and export ANTHROPIC_API_KEY")
    spec.pop("api_key", None)
    valid = CONFIG_FIELDS + ("client", "http_client", "sleep")
    for key in spec:
        if key not in valid:
            raise ConfigError(f"judge.{key}: unknown setting{suggest(key, CONFIG_FIELDS)}; the anthropic judge takes "
                              f"{list(CONFIG_FIELDS)}")
    has_key = os.environ.get("ANTHROPIC_API_KEY")
    if spec.get("client") is None and spec.get("http_client") is None and not has_key:
        warnings.warn("no ANTHROPIC_API_KEY: using the offline judge (results are labelled 'offline')", stacklevel=2)
        return OfflineJudge()
    return AnthropicJudge(**spec)
