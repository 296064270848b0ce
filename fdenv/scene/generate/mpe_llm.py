"""Duplex-MPE scenes written by Claude: the ``claude`` back end of ``fdenv-scenes generate mpe``.

MPE's own scripts were written by an LLM from combinations of five scene attributes. This back end
does the same through the ``anthropic`` SDK, under the same contract and the same pair design as
the template back end (``docs/multiparty.md``):

* ``make_spec(index, seed)``: what scene ``index`` must be, drawn only from (seed, index) with the
  template generator's pools: the task family, the five attributes, 3-4 human names, the
  assistant's name, the number of turns, where ``T`` goes (after the facts and the turn saying the
  assistant will be asked), how many silence turns, whether there is an N4 event, whether the
  humans ask each other an unnamed question, whether the request mentions a person, the explicit
  request's form (``mpe.EXPLICIT_FORMS``) and the duty preamble.
* The prompt (``prompts/mpe_scene_<version>.txt``, ``=== user ===`` between the system text and
  the user template) asks for one JSON object: the turns with their labels (an ``ask`` turn is
  the context, an ``N1`` turn in the scene), and the request as the *device request* (the
  implicit T: "Text Elena what each of us owes.") with its gold answer and key facts. The
  explicit T is that request with the assistant's name in the spec's form, so the twins share
  every turn and timing except T's wording.
* ``build_pair`` turns the JSON into the two scene dicts (duty turn, gaps, ids, ``resolves``) and
  validates them: ``scene_from_dict`` (the scene schema), MPE's shape (SPEC 7: 3-4 humans, 8-14
  turns, 4-8 silence turns with each of N1, N2, N3, the N4 event as asked, names where each label
  needs them), the pair design (``mpe_checks.pair_problems``, the checks the template pairs pass),
  the spec's unnamed human question, the set's variety (no scored sentence used by an earlier
  scene, ``variety.py``) and, given ``gold_check``, the key facts (the command line passes the
  offline judge's: the gold answer must state its own key facts). Every problem is reported; an
  invalid answer is sent back with the problems and asked again (``max_attempts``).
* Answers are cached on disk under ``$FDENV_CACHE_DIR/scenes`` by a hash of (model, prompt
  version, temperature, spec), so a set is regenerated without the API; ``write_claude_set``
  writes ordinary scene YAML and a manifest like the template set's.

HTTP errors: rate limits, server errors and connection errors are retried with exponential
backoff (``max_retries``); other errors raise ``GenerationError``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from string import Template

from ..load import SceneError, scene_from_dict
from ..schema import SILENCE_LABELS
from . import mpe
from ._common import (
    ASSISTANT_NAMES, NARRATOR, assign_splits, block_choice, block_flag, chance, dump_yaml, fill, gap, make_scene,
    make_turn, pick, scene_rng,
)
from .mpe_checks import addresses, is_ask_context, pair_problems, unnamed_human_questions
from .variety import SCORED_LABELS, sentences

SET_NAME = "mpe_claude"
VERSION = 2
PROMPT_VERSION = "v2"
PROMPT_DIR = Path(__file__).parent / "prompts"
DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_TEMPERATURE = 0.7
LABELS = ("ctx", "ask", "T", "N1", "N2", "N3", "N4Q", "N4R")  # "ask": the context turn, an N1 in the scene

TASK_HINTS = {
    "total": "a sum: several people order or buy items at stated prices (and quantities); the device request needs the total (text it to someone, pay it, read it out)",
    "split": "a split bill: a bill, a tip and maybe extras or someone who does not pay; the device request needs what each person pays (message it, post it in the group chat)",
    "end_time": "an end time: an event's start time and length (and maybe adverts or a break); the device request needs when it ends (a reminder, a calendar entry, a taxi)",
    "who_has": "who has what: people say who took which item; the device request needs who has one of them (a note, a message)",
    "choice": "which option was chosen: options are proposed, some rejected, one chosen; the device request acts on the chosen one (book it, play it)",
    "guests": "a head count: groups of guests are announced (maybe one cancels); the device request needs how many are coming (order, message the caterer)",
    "budget": "what is left of a budget: a budget and several costs; the device request needs what remains (update the spreadsheet, message it)",
    "leave": "a departure time: a train time, a walk and maybe extra stops; the device request needs when to leave (set an alarm, a reminder)",
    "pizza": "how many to order: people, slices per person and slices per pizza; the device request orders that many pizzas",
    "invite": "a date counted back: an event date and how long before it invitations go out; the device request needs that date (a reminder, a calendar entry)",
}


class GenerationError(RuntimeError):
    """No valid scene could be had (the API failed, or every answer was invalid)."""


class ReplyError(ValueError):
    """An answer that does not make a valid scene pair; ``problems`` lists every reason."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class Spec:
    index: int
    seed: int
    task: str
    assistant: str
    humans: tuple[str, ...]
    setting: str
    activity: str
    relationship: str
    device: str
    register: str
    n_turns: int  # human turns, the T turn included (the duty turn is added)
    t_position: int  # 1-based among the human turns: after two facts and the ask turn
    n_silence: int  # the ask turn included
    has_n4: bool
    human_question: bool  # a human asks another an unnamed question about what they just said
    mention: bool  # the device request names another person in the room (not its addressee)
    form: int  # index into mpe.EXPLICIT_FORMS
    duty: str

    @property
    def devices(self) -> tuple[tuple[str, str], ...]:
        return mpe.DEVICE_CONTEXTS[self.device]


def make_spec(index: int, seed: int = 0) -> Spec:
    """What scene ``index`` must be; a function of (seed, index) only."""
    rng = scene_rng(SET_NAME, VERSION, seed, index)
    families = sorted(mpe.FAMILIES)
    family = families[block_choice(SET_NAME, seed, index, len(families))]
    has_n4 = not block_flag(SET_NAME, seed, index)
    humans = tuple(rng.sample(mpe.NAMES, rng.randint(3, 4)))
    A = pick(rng, ASSISTANT_NAMES)
    n_total = rng.randint(mpe.TURNS_RANGE[0] + (2 if has_n4 else 0), mpe.TURNS_RANGE[1])
    q = rng.randint(4, n_total - 1)  # T's turn: after the duty, two facts and the ask turn
    hq = chance(rng, mpe.HUMAN_QUESTION_SHARE)
    room = n_total - 4 - (2 if has_n4 else 0)  # human turns left for silence once T and two facts are in
    if hq and room - 1 < mpe.SILENCE_RANGE[0]:
        hq = False  # no room for the statement the question follows
    n_silence = rng.randint(mpe.SILENCE_RANGE[0], min(mpe.SILENCE_RANGE[1], room - (1 if hq else 0)))
    register = pick(rng, mpe.REGISTERS)
    task = mpe.FAMILIES[family](random.Random(rng.random()), list(humans), 2, register)
    attrs = mpe.choose_attributes(rng, task, register)
    mention = chance(rng, 0.5)
    form = rng.randrange(len(mpe.EXPLICIT_FORMS))
    duty = fill(pick(rng, mpe.DUTIES), {"A": A})
    return Spec(index, seed, family, A, humans, attrs["setting"], attrs["activity"], attrs["relationship"],
                attrs["device"], register, n_total - 1, q, n_silence, has_n4, hq, mention, form, duty)


# ---------------------------------------------------------------------------------------------
# Prompt


def load_prompt(version: str = PROMPT_VERSION) -> tuple[str, Template]:
    path = PROMPT_DIR / f"mpe_scene_{version}.txt"
    if not path.is_file():
        raise FileNotFoundError(f"no scene prompt {path.name} in {PROMPT_DIR.name}/")
    system, sep, user = path.read_text(encoding="utf-8").partition("=== user ===\n")
    if not sep:
        raise ValueError(f"{path.name}: missing the '=== user ===' line between the system text and the user template")
    return system.strip(), Template(user.strip())


def user_prompt(spec: Spec, template: Template) -> str:
    devices = sorted({dev for _, dev in spec.devices})
    if devices:
        note = " or the devices " + ", ".join(f"{dev} (wake words: {', '.join(w for w, d in spec.devices if d == dev)})"
                                              for dev in devices)
    else:
        note = " (there are no other devices)"
    n4 = ("Include exactly one N4Q turn (a question to the assistant, by name, that someone in the room can answer) directly "
          "followed by its N4R turn (a human answers it); neither may be the T turn." if spec.has_n4 else
          "Include no N4Q or N4R turn.")
    hq = ("One person says something they have to do or did (a ctx turn), and in the next turn another person asks them "
          "about it without saying their name (an N2 turn with that person as addressee, ending with '?')."
          if spec.human_question else "Every N2 turn to a person says that person's name.")
    mention = ("The device request mentions one of the other people by name, as the one to message or tell (not as "
               "the one asked)." if spec.mention else "The device request names none of the people.")
    return template.substitute(
        assistant=spec.assistant, humans=", ".join(spec.humans), setting=spec.setting, activity=spec.activity,
        relationship=spec.relationship, device=spec.device, register=spec.register, task=TASK_HINTS[spec.task],
        n_turns=spec.n_turns, t_position=spec.t_position, n_silence=spec.n_silence, devices_note=note,
        n4_instruction=n4, human_question_instruction=hq, mention_instruction=mention,
    )


# ---------------------------------------------------------------------------------------------
# Answer -> scenes


def parse_reply(text: str) -> dict:
    """The JSON object of an answer (a surrounding code fence is tolerated, nothing else)."""
    t = (text or "").strip()
    m = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", t, flags=re.S)
    if m:
        t = m.group(1)
    try:
        data = json.loads(t)
    except ValueError as e:
        raise ReplyError([f"the answer is not one JSON object ({e.msg} at line {e.lineno}, column {e.colno}); "
                          "answer with the JSON object only"]) from None
    if not isinstance(data, dict):
        raise ReplyError(["the answer is JSON but not an object with 'turns' and 'request'"])
    return data


def _request(spec: Spec, request, problems: list[str]) -> tuple[str, str, list[str]]:
    """(device request, gold answer, gold facts) of the answer's ``request``, problems noted."""
    if not isinstance(request, dict):
        raise ReplyError(problems + ["'request' must be an object with 'device_request', 'gold_answer' and 'gold_facts'"])
    extra = sorted(set(request) - {"device_request", "gold_answer", "gold_facts"})
    if extra:
        problems.append(f"request: unexpected keys {extra}; only 'device_request', 'gold_answer' and 'gold_facts'")
    ask, gold, facts = request.get("device_request"), request.get("gold_answer"), request.get("gold_facts")
    if not isinstance(ask, str) or not ask.strip():
        problems.append("request.device_request must be non-empty text")
        ask = "?"
    ask = " ".join(ask.split())
    if ask.split()[0] in spec.humans:  # the explicit forms lower-case its first letter
        problems.append("request.device_request must start with its verb, not a name")
    others = [h for h in spec.humans if re.search(rf"\b{re.escape(h)}\b", ask)]
    if spec.mention and not others:
        problems.append("request.device_request must mention one of the people by name (as the one to message or tell)")
    if not spec.mention and others:
        problems.append(f"request.device_request must name none of the people (it names {others[0]})")
    if not isinstance(gold, str) or not gold.strip():
        problems.append("request.gold_answer must be non-empty text")
        gold = "?"
    if not isinstance(facts, list) or not facts or not all(isinstance(f, str) and f.strip() for f in facts):
        problems.append("request.gold_facts must be a non-empty list of facts as text, e.g. ['38 pounds', 'given 20 pounds']")
        facts = []
    return ask, gold.strip(), [" ".join(f.split()) for f in facts]


def build_pair(spec: Spec, data: dict, pair_id: str, used=frozenset(), gold_check=None) -> list[dict]:
    """The (explicit, implicit) scene dicts of a parsed answer; ``ReplyError`` with every problem.
    ``used``: normalised scored sentences of the set's earlier scenes (``variety.py``);
    ``gold_check(gold_answer, gold_facts) -> [problem]``: the key-fact reader's verdict."""
    problems: list[str] = []
    A = spec.assistant
    humans = set(spec.humans)
    devices = {dev: [w for w, d in spec.devices if d == dev] for _, dev in spec.devices}
    extra = sorted(set(data) - {"turns", "request"})
    if extra:
        problems.append(f"unexpected top-level keys {extra}; only 'turns' and 'request'")
    turns_in = data.get("turns")
    if not isinstance(turns_in, list) or not turns_in:
        raise ReplyError(problems + ["'turns' must be a non-empty list of turns"])
    ask, gold, facts = _request(spec, data.get("request"), problems)

    gap_rng = scene_rng(SET_NAME, VERSION, spec.seed, spec.index * 1000 + 7)
    turns = [make_turn("t0", NARRATOR, "duty", spec.duty)]
    t_index = None
    q_id = None
    spoken = set()
    for i, t in enumerate(turns_in):
        where = f"turns[{i}]"
        if not isinstance(t, dict):
            problems.append(f"{where} must be an object with speaker, label and text")
            continue
        bad = sorted(set(t) - {"speaker", "label", "text", "addressee"})
        if bad:
            problems.append(f"{where}: unexpected keys {bad}")
        sp, label, text = t.get("speaker"), t.get("label"), t.get("text")
        if label not in LABELS:
            problems.append(f"{where}.label {label!r} is not one of {list(LABELS)}")
            continue
        if sp not in humans:
            problems.append(f"{where}.speaker {sp!r} is not one of the people {sorted(humans)}")
            continue
        spoken.add(sp)
        tid = f"t{len(turns)}"
        g = gap(gap_rng, 0.5, 1.0) if len(turns) == 1 else gap(gap_rng, 0.2, 0.8)
        kw: dict = {}
        if label == "T":
            if t_index is not None:
                problems.append(f"{where}: a second T turn; a scene has exactly one")
            t_index = len(turns)
            turns.append(make_turn(tid, sp, "T", "?", gap=g))
            continue
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where}.text must be non-empty text")
            continue
        text = " ".join(text.split())
        if "[" in text or "]" in text:
            problems.append(f"{where}.text must not contain brackets")
        has_name = re.search(rf"\b{re.escape(A)}\b", text) is not None
        if label in ("ask", "N1", "N4Q") and not has_name:
            problems.append(f"{where}: an {label} turn must mention the assistant by name ({A!r})")
        if label not in ("ask", "N1", "N4Q") and has_name:
            problems.append(f"{where}: a {label} turn must not mention the assistant's name {A!r} "
                            "(label a mention N1, a question to it N4Q or T)")
        if label in ("ask", "N1") and has_name and addresses(text, A):
            problems.append(f"{where}: an {label} turn mentions {A} without speaking to it; this one calls it")
        if label == "ask":
            if has_name and not is_ask_context(text, A):
                problems.append(f"{where}: the ask turn must say that {A} will be asked to do the task "
                                f"(\"I'll get {A} to ...\", \"{A} can ..., I'll ask in a minute\")")
            label = "N1"
        if label == "N2":
            to = t.get("addressee")
            if to in humans:
                prev = turns[-1]["speaker"] if len(turns) > 1 else None
                follow_up = prev == to and text.endswith("?")  # an unnamed question about what they just said
                if to == sp:
                    problems.append(f"{where}.addressee: {sp} cannot address themselves")
                elif not follow_up and not re.search(rf"\b{re.escape(to)}\b", text):
                    problems.append(f"{where}.text must contain the name of its addressee {to!r}, or be a question "
                                    f"right after {to}'s own turn")
            elif to in devices:
                if not any(w.lower() in text.lower() for w in devices[to]):
                    problems.append(f"{where}.text must call the device {to!r} by a wake word ({' / '.join(devices[to])})")
            else:
                problems.append(f"{where}.addressee {to!r} must be another person in the room"
                                + (f" or one of the devices {sorted(devices)}" if devices else " (there are no other devices)"))
            kw["addressee"] = to
        elif t.get("addressee") is not None:
            problems.append(f"{where}: only N2 turns have an addressee")
        if label == "N4Q":
            kw["addressee"] = A
            q_id = tid
        if label == "N4R":
            kw["resolves"] = q_id if q_id is not None else "?"
            g = None
        turns.append(make_turn(tid, sp, label, text, gap=g, **kw))

    labels = [t["label"] for t in turns]
    missing = sorted(humans - spoken)
    if missing:
        problems.append(f"every person speaks at least once; {missing} never do")
    if not 8 <= len(labels) <= 14:
        problems.append(f"{len(labels) - 1} turns; write {spec.n_turns} (between 7 and 13)")
    n_sil = sum(lab in SILENCE_LABELS for lab in labels)
    if not 4 <= n_sil <= 8:
        problems.append(f"{n_sil} silence turns (the ask turn, N1, N2, N3); write {spec.n_silence} (between 4 and 8)")
    for lab in SILENCE_LABELS:
        if lab not in labels:
            problems.append(f"no {lab} turn; each of N1, N2 and N3 appears at least once")
    if t_index is None:
        problems.append("no T turn; exactly one turn has the label T")
    elif t_index < 4:
        problems.append(f"the T turn is turn {t_index} of the people's turns; it must come 4th or later "
                        "(after two ctx turns with the facts and the ask turn)")
    n4q, n4r = labels.count("N4Q"), labels.count("N4R")
    if spec.has_n4 and (n4q, n4r) != (1, 1):
        problems.append(f"write exactly one N4Q turn directly followed by its N4R turn (found {n4q} N4Q, {n4r} N4R)")
    if not spec.has_n4 and (n4q or n4r):
        problems.append("this scene has no N4 event: write no N4Q or N4R turn")
    if gold_check is not None and facts:
        problems += [f"request.gold_facts: {p}" for p in gold_check(gold, facts)]

    explicit = mpe.explicit_request(mpe.EXPLICIT_FORMS[spec.form], ask, A)
    attributes = {"setting": spec.setting, "activity": spec.activity, "relationship": spec.relationship,
                  "device": spec.device, "register": spec.register, "task": spec.task}
    out = []
    for condition, text in (("explicit", explicit), ("implicit", ask)):
        ts = [dict(t) for t in turns]
        if t_index is not None:
            t = ts[t_index]
            ts[t_index] = make_turn(t["id"], t["speaker"], "T", text, gap=t.get("gap"),
                                    addressee=A if condition == "explicit" else None, gold_answer=gold,
                                    gold_facts=facts or None)
        d = make_scene(f"{pair_id}-{condition}", "mpe", [NARRATOR, *spec.humans], ts, assistant_name=A,
                       duty=spec.duty, condition=condition, pair_id=pair_id, attributes=attributes)
        if not problems:
            try:
                scene_from_dict(d, source=f"{pair_id}-{condition}")
            except SceneError as e:
                problems.append(f"{e.field}: {e.problem}")
        out.append(d)
    if t_index is not None:
        problems += [p for p in pair_problems(*out) if p not in problems]
    if spec.human_question and not unnamed_human_questions(out[1]):
        problems.append("no unnamed question between the people: after one person's ctx turn, another asks them "
                        "about it without their name (N2, addressee that person, ending with '?')")
    said = [x for lab, x in sentences(out) if lab in SCORED_LABELS]
    again = sorted({x for x in said if x in used or said.count(x) > 1})
    if again:
        problems.append(f"{len(again)} sentence(s) already used in this set or scene, e.g. {again[0]!r}; write new ones")
    if problems:
        raise ReplyError(problems)
    return out


# ---------------------------------------------------------------------------------------------
# The writer


def scene_cache_dir() -> Path:
    from ...paths import cache_dir

    return cache_dir() / "scenes"


class ClaudeSceneWriter:
    """Writes MPE scene pairs with Claude (see the module docstring)."""

    def __init__(self, model: str = DEFAULT_MODEL, *, api_key: str | None = None, client=None, http_client=None,
                 prompt_version: str = PROMPT_VERSION, temperature: float | None = DEFAULT_TEMPERATURE, cache: bool = True,
                 max_attempts: int = 3, max_retries: int = 4, backoff_s: float = 1.0, max_backoff_s: float = 30.0,
                 timeout_s: float = 120.0, max_tokens: int = 4000, sleep=time.sleep, gold_check=None):
        self.model = model
        self.gold_check = gold_check  # (gold_answer, gold_facts) -> [problem]; see build_pair
        self.prompt_version = prompt_version
        self.temperature = temperature
        self.cache = cache
        self.max_attempts = max_attempts
        self.max_retries = max_retries
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self.max_tokens = max_tokens
        self._sleep = sleep
        self.system, self.template = load_prompt(prompt_version)
        if client is None:
            import anthropic

            kwargs = {"api_key": api_key or os.environ.get("ANTHROPIC_API_KEY"), "max_retries": 0, "timeout": timeout_s}
            if http_client is not None:
                kwargs["http_client"] = http_client
            if kwargs["api_key"] is None and http_client is None:
                raise GenerationError("the claude back end needs ANTHROPIC_API_KEY (or an Anthropic client)")
            client = anthropic.Anthropic(**kwargs)
        self.client = client
        self.log: list[dict] = []  # per pair: index, attempts, cached, problems of rejected answers

    def config(self) -> dict:
        return {"backend": "claude", "model": self.model, "prompt_version": self.prompt_version,
                "temperature": self.temperature, "max_attempts": self.max_attempts}

    def _key(self, spec: Spec) -> str:
        blob = json.dumps({"model": self.model, "prompt_version": self.prompt_version, "temperature": self.temperature,
                           "spec": asdict(spec)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def make_pair(self, index: int, seed: int = 0, pair_id: str | None = None, used=frozenset()) -> list[dict]:
        """Scene ``index`` as an (explicit, implicit) pair of validated scene dicts; ``used``: the
        normalised scored sentences of the set's earlier scenes, which this pair may not repeat."""
        spec = make_spec(index, seed)
        pair_id = pair_id or f"{SET_NAME}-{index + 1:04d}"
        key = self._key(spec)
        path = scene_cache_dir() / key[:2] / f"{key}.json"
        if self.cache and path.is_file():
            try:
                cached = json.loads(path.read_text())
                pair = build_pair(spec, cached["data"], pair_id, used, self.gold_check)
                self.log.append({"index": index, "attempts": 0, "cached": True, "rejected": []})
                return pair
            except (ValueError, KeyError, ReplyError):
                pass  # a stale or damaged entry: ask again
        user = user_prompt(spec, self.template)
        messages = [{"role": "user", "content": user}]
        rejected: list[list[str]] = []
        for attempt in range(1, self.max_attempts + 1):
            reply = self._call(messages)
            try:
                data = parse_reply(reply)
                pair = build_pair(spec, data, pair_id, used, self.gold_check)
            except ReplyError as e:
                rejected.append(e.problems)
                messages += [{"role": "assistant", "content": reply},
                             {"role": "user", "content": feedback(e.problems)}]
                continue
            self.log.append({"index": index, "attempts": attempt, "cached": False, "rejected": rejected})
            if self.cache:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps({"model": self.model, "prompt_version": self.prompt_version,
                                           "temperature": self.temperature, "spec": asdict(spec), "reply": reply,
                                           "data": data, "attempts": attempt}, ensure_ascii=False))
                os.replace(tmp, path)
            return pair
        self.log.append({"index": index, "attempts": self.max_attempts, "cached": False, "rejected": rejected})
        raise GenerationError(f"scene {index}: no valid answer in {self.max_attempts} attempts; last problems: "
                              + "; ".join(rejected[-1]))

    def _call(self, messages: list[dict]) -> str:
        import anthropic

        attempt = 0
        while True:
            try:
                extra = {"temperature": self.temperature} if self.temperature is not None else None
                msg = self.client.messages.create(model=self.model, max_tokens=self.max_tokens, system=self.system,
                                                  messages=messages, extra_body=extra)
                return "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", None) == "text")
            except (anthropic.RateLimitError, anthropic.InternalServerError, anthropic.APIConnectionError) as e:
                if attempt >= self.max_retries:
                    raise GenerationError(f"the API failed {attempt + 1} times ({type(e).__name__})") from e
                delay = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
                self._sleep(delay)
                attempt += 1
            except anthropic.APIStatusError as e:
                if e.status_code == 400 and self.temperature is not None and "temperature" in str(e).lower():
                    self.temperature = None  # a model without a temperature setting
                    continue
                raise GenerationError(f"the API refused the request: HTTP {e.status_code} ({type(e).__name__})") from e


def feedback(problems: list[str]) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return (f"That answer cannot be used; it did not validate:\n{lines}\n"
            "Fix every problem and answer again with the whole corrected JSON object only.")


# ---------------------------------------------------------------------------------------------
# A whole set


def generate_claude_set(n: int, seed: int = 0, name: str = SET_NAME, writer: ClaudeSceneWriter | None = None,
                        **writer_kwargs) -> tuple[dict[str, str], list[dict], dict[str, str]]:
    """(files: name -> text, scenes, splits) of ``n`` pairs written by Claude."""
    writer = writer or ClaudeSceneWriter(**writer_kwargs)
    split_of = assign_splits(n, mpe.SPLIT_SHARES)
    scenes, splits = [], {}
    used: set[str] = set()  # no scored sentence twice in the set, as in the template set
    for i in range(n):
        pair = writer.make_pair(i, seed, pair_id=f"{name}-{i + 1:04d}", used=frozenset(used))
        used.update(x for lab, x in sentences(pair) if lab in SCORED_LABELS)
        for d in pair:
            scenes.append(d)
            splits[d["id"]] = split_of[i]
    regenerate = f"fdenv-scenes generate mpe --backend claude --model {writer.model} --name {name} --out scenes/ --n {n}" + (
        f" --seed {seed}" if seed else "")
    manifest = mpe.manifest(name, scenes, splits, n, seed,
                            {"name": "fdenv.scene.generate.mpe_llm", "version": VERSION, "seed": seed, "n": n,
                             "model": writer.model, "prompt_version": writer.prompt_version,
                             "temperature": writer.temperature},
                            regenerate, "Duplex-MPE multi-party scenes written by Claude from the template generator's "
                            "attribute combinations, in explicit/implicit pairs.")
    files = {f"{d['id']}.yaml": dump_yaml(d) for d in scenes}
    files["manifest.yaml"] = dump_yaml(manifest)
    return files, scenes, splits
