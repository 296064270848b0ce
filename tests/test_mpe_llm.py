"""The Claude back end of the MPE generator through the real ``anthropic`` SDK client against a
faked HTTP transport (no network): a valid answer, an invalid answer that is retried with the
validation errors, answers that never validate, HTTP retries, the on-disk cache, and the written
set (ordinary scene YAML plus manifest)."""

from __future__ import annotations

import json
import os

import httpx2
import pytest
import yaml

from fdenv.scene import load_set, scene_from_dict
from fdenv.scene.generate import mpe, mpe_llm
from fdenv.scene.generate.mpe_checks import pair_problems, unnamed_human_questions
from fdenv.scene.generate.mpe_llm import ClaudeSceneWriter, GenerationError, ReplyError, build_pair, make_spec
from fdenv.scene.generate.variety import SCORED_LABELS, sentences
from fdenv.score.facts import gold_problems

os.environ["HF_HUB_OFFLINE"] = "1"


WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen".split()


def valid_answer(spec, tag: int | None = None) -> dict:
    """A valid answer for ``spec``: two facts, the ask turn and T where the spec puts it, every
    silence kind, the humans' unnamed question and an N4 event when asked; sentences unique per
    spec index (the set's variety check)."""
    h = list(spec.humans)
    A, k = spec.assistant, WORDS[(spec.index if tag is None else tag) % len(WORDS)]
    fact = [{"speaker": h[0], "label": "ctx", "text": f"Two coffees at four euros each, table {k}."},
            {"speaker": h[1], "label": "ctx", "text": f"And a cake for six euros, please, for table {k}."}]
    ask = {"speaker": h[2], "label": "ask", "text": f"I'll get {A} to add up table {k} in a minute."}
    units = [[{"speaker": h[0], "label": "N1", "text": f"{A} always knows the prices at table {k}."}],
             [{"speaker": h[-1], "label": "N3", "text": f"Hmm, where did I put my keys for locker {k}?"}]]
    units += [[{"speaker": h[i % len(h)], "label": "N3", "text": f"I really need a holiday, week {k} number {WORDS[i]}."}]
              for i in range(spec.n_silence - 4)]
    if spec.human_question:
        units.append([{"speaker": h[1], "label": "ctx", "text": f"I still have to call the garage about van {k}."},
                      {"speaker": h[0], "label": "N2", "addressee": h[1], "text": f"Did you call them about van {k} yet?"}])
    else:
        units.append([{"speaker": h[1], "label": "N2", "addressee": h[0], "text": f"{h[0]}, pass me the sugar for table {k}."}])
    if spec.has_n4:
        units.append([{"speaker": h[1], "label": "N4Q", "text": f"{A}, is it going to rain in town {k} later?"},
                      {"speaker": h[0], "label": "N4R", "text": f"No, I just checked town {k}, it stays dry."}])
    n_fill = spec.n_turns - 1 - 3 - sum(map(len, units))
    units += [[{"speaker": h[-1], "label": "ctx", "text": f"This is taking ages, round {k} part {WORDS[i]}."}]
              for i in range(n_fill)]
    pre, post, need = [*fact, ask], [], spec.t_position - 1 - 3
    for u in sorted(units, key=len, reverse=True):  # pairs first, singles fill the rest exactly
        (pre if len(u) <= need else post).extend(u)
        need -= len(u) if len(u) <= need else 0
    assert need == 0, spec
    turns = pre + [{"speaker": h[2], "label": "T"}] + post
    who = f"{h[1]} " if spec.mention else ""
    request = f"Text {who}the total for the coffees and the cake at table {k}." if spec.mention else \
        f"Read out the total for the coffees and the cake at table {k}."
    return {"turns": turns, "request": {"device_request": request,
                                        "gold_answer": "The total comes to 14 euros. The total is 14 euros.",
                                        "gold_facts": ["14 euros", "given 4 euros", "given 6 euros", "given 8 euros"]}}


def reply(text, status=200):
    body = {"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 300}}
    return httpx2.Response(status, json=body)


def error(status, message="boom"):
    return httpx2.Response(status, json={"type": "error", "error": {"type": "api_error", "message": message}})


class Server:
    """A faked Messages API: answers each request with the next planned response (the last one
    repeats), and keeps the request bodies."""

    def __init__(self, *plan):
        self.plan = list(plan)
        self.requests = []

    def __call__(self, request):
        self.requests.append(json.loads(request.content))
        return self.plan.pop(0) if len(self.plan) > 1 else self.plan[0]


@pytest.fixture
def make(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path / "cache"))
    sleeps = []

    def build(server, **kw):
        client = httpx2.Client(transport=httpx2.MockTransport(server))
        return ClaudeSceneWriter(model="claude-test", api_key="test-key", http_client=client, backoff_s=0.001,
                                 sleep=sleeps.append, **kw), sleeps

    return build


# ------------------------------------------------------------------ spec and validation


def test_spec_is_a_function_of_seed_and_index():
    a, b = make_spec(3, 0), make_spec(3, 0)
    assert a == b and make_spec(4, 0) != a and make_spec(3, 1) != a
    specs = [make_spec(i, 0) for i in range(200)]
    for s in specs:
        assert 3 <= len(s.humans) <= 4 and s.assistant not in s.humans
        assert 7 <= s.n_turns <= 13 and 4 <= s.t_position <= s.n_turns and 4 <= s.n_silence <= 8
        assert s.task in mpe.FAMILIES and s.register in mpe.REGISTERS and s.device in mpe.DEVICE_CONTEXTS
        assert 0 <= s.form < len(mpe.EXPLICIT_FORMS)
    assert sum(s.has_n4 for s in specs[:30]) == 27
    # the humans' unnamed questions in at least 30 % of scenes; the request mentions a person in about half
    assert sum(s.human_question for s in specs) >= 0.3 * len(specs)
    assert 0.3 * len(specs) <= sum(s.mention for s in specs) <= 0.7 * len(specs)
    assert {s.form for s in specs} == set(range(len(mpe.EXPLICIT_FORMS)))


def test_prompt_is_in_the_repo_and_names_the_spec():
    system, template = mpe_llm.load_prompt()
    assert "JSON" in system and "N4Q" in system and "device_request" in system and "gold_facts" in system
    spec = make_spec(0, 0)
    user = mpe_llm.user_prompt(spec, template)
    for piece in (spec.assistant, *spec.humans, spec.setting, spec.relationship, spec.register, str(spec.n_turns),
                  f"turn number {spec.t_position}"):
        assert piece in user


def _t(d):
    (t,) = [t for t in d["turns"] if t["label"] == "T"]
    return t


@pytest.mark.parametrize("index", range(12))
def test_build_pair_makes_the_new_pair_design(index):
    spec = make_spec(index, 0)
    data = valid_answer(spec)
    ex, im = build_pair(spec, data, "mpe_claude-0001", gold_check=gold_problems)
    for d in (ex, im):
        s = scene_from_dict(d)
        assert s.kind == "mpe" and s.turns[0].label == "duty" and s.duty == spec.duty
    # the same checks the template generator's pairs pass (tests/test_mpe_generator.py)
    assert pair_problems(ex, im) == []
    te, ti = _t(ex), _t(im)
    assert ti["text"] == data["request"]["device_request"] and "addressee" not in ti
    assert te["text"] == mpe.explicit_request(mpe.EXPLICIT_FORMS[spec.form], ti["text"], spec.assistant)
    assert te["addressee"] == spec.assistant
    assert te["gold_answer"] == ti["gold_answer"] and te["gold_facts"] == ti["gold_facts"] == data["request"]["gold_facts"]
    # the ask turn is an N1 turn before T in both twins
    ti_index = [t["label"] for t in im["turns"]].index("T")
    assert ti_index == spec.t_position
    assert any(t["label"] == "N1" and "I'll get" in t["text"] for t in ex["turns"][1:ti_index])
    assert (unnamed_human_questions(im) > 0) == spec.human_question


def _spec_with(**want):
    return next(make_spec(i, 0) for i in range(200) if all(getattr(make_spec(i, 0), k) == v for k, v in want.items()))


def _turn(data, label):
    return next(t for t in data["turns"] if t["label"] == label)


@pytest.mark.parametrize("mutate, expect", [
    (lambda d, s: d["request"].update(device_request=f"Hey, read out the total, table {s.index}."), "must start with a verb"),
    (lambda d, s: d["request"].update(device_request=f"Read out the total for {s.assistant} and me."), "names the assistant"),
    (lambda d, s: d["request"].update(device_request=f"Read out the total for {s.humans[1]}."), "must name none of the people"),
    (lambda d, s: d["request"].pop("gold_facts"), "gold_facts must be a non-empty list"),
    (lambda d, s: d["request"].update(gold_facts=["15 euros"]), "does not state its key facts"),
    (lambda d, s: d["request"].update(gold_facts=["given 14 euros"]), "name no key fact"),
    (lambda d, s: _turn(d, "ask").update(text=f"{s.assistant} is the best thing we ever bought."), "the ask turn must say"),
    (lambda d, s: _turn(d, "ask").update(text=f"{s.assistant}, can you add this up for us?"), "without speaking to it"),
    (lambda d, s: _turn(d, "ask").update(label="ctx", text="Nobody is named here."), "will be asked"),
    (lambda d, s: d["turns"].insert(1, d["turns"].pop(d["turns"].index(_turn(d, "T")))), "it must come 4th or later"),
    (lambda d, s: _turn(d, "N3").update(text=f"{s.assistant} said two coffees."), "must not mention the assistant's name"),
    (lambda d, s: [t.update(label="ctx") for t in d["turns"] if t["label"] == "N3"], "no N3 turn"),
    (lambda d, s: _turn(d, "N2").update(addressee="Bob"), "must be another person in the room"),
    (lambda d, s: _turn(d, "N1").update(text="Nobody is named here."), "must mention the assistant by name"),
    (lambda d, s: d["turns"][1].update(speaker="Zed"), "is not one of the people"),
    (lambda d, s: d.update(extra=1), "unexpected top-level keys"),
])
def test_invalid_answers_name_their_problem(mutate, expect):
    spec = _spec_with(mention=False, human_question=False, has_n4=True)
    data = valid_answer(spec)
    mutate(data, spec)
    with pytest.raises(ReplyError) as info:
        build_pair(spec, data, "p", gold_check=gold_problems)
    assert any(expect in p for p in info.value.problems), info.value.problems


def test_the_unnamed_question_and_the_mention_are_asked_for():
    spec = _spec_with(mention=True, human_question=True)
    data = valid_answer(spec)
    build_pair(spec, data, "p")
    q = next(t for t in data["turns"] if t["label"] == "N2")
    named = dict(q, text=f"{q['addressee']}, did you call them yet?")
    data["turns"][data["turns"].index(q)] = named
    with pytest.raises(ReplyError, match="no unnamed question between the people"):
        build_pair(spec, data, "p")
    # an unnamed N2 must follow its addressee's own turn
    data = valid_answer(spec)
    i = data["turns"].index(next(t for t in data["turns"] if t["label"] == "N2"))
    data["turns"][i - 1]["speaker"] = data["turns"][i]["speaker"]
    with pytest.raises(ReplyError, match="must contain the name of its addressee"):
        build_pair(spec, data, "p")
    data = valid_answer(spec)
    data["request"]["device_request"] = "Read out the total for the coffees."
    with pytest.raises(ReplyError, match="must mention one of the people"):
        build_pair(spec, data, "p")


def test_a_sentence_used_by_an_earlier_scene_is_rejected():
    spec = make_spec(0, 0)
    data = valid_answer(spec)
    ex, im = build_pair(spec, data, "p")
    scored = [x for lab, x in sentences([ex, im]) if lab in SCORED_LABELS]
    with pytest.raises(ReplyError, match="already used in this set"):
        build_pair(spec, data, "p", used=frozenset(scored[:1]))


def test_parse_reply_tolerates_a_code_fence_only():
    assert mpe_llm.parse_reply('```json\n{"turns": []}\n```') == {"turns": []}
    with pytest.raises(ReplyError, match="not one JSON object"):
        mpe_llm.parse_reply('Here you go: {"turns": []}')


# ------------------------------------------------------------------ the API, faked


def test_valid_answer_request_shape_and_cache(make, tmp_path):
    spec = make_spec(0, 0)
    server = Server(reply(json.dumps(valid_answer(spec))))
    writer, _ = make(server)
    ex, im = writer.make_pair(0, 0)
    assert ex["id"] == "mpe_claude-0001-explicit" and im["condition"] == "implicit"
    req = server.requests[0]
    assert req["model"] == "claude-test" and req["temperature"] == mpe_llm.DEFAULT_TEMPERATURE
    assert spec.assistant in req["messages"][0]["content"] and "JSON" in req["system"]
    assert writer.log[-1] == {"index": 0, "attempts": 1, "cached": False, "rejected": []}
    assert list((tmp_path / "cache" / "scenes").rglob("*.json"))
    # a second writer gets the pair from the cache; the server (failing) is never asked
    failing = Server(error(500))
    writer2, _ = make(failing)
    assert writer2.make_pair(0, 0) == [ex, im] and not failing.requests and writer2.log[-1]["cached"]


def test_invalid_answer_is_retried_with_the_errors(make):
    spec = make_spec(1, 0)
    bad = valid_answer(spec)
    # the old design's implicit request: the explicit one minus the name
    bad["request"]["device_request"] = "Hey, how much is all of that together?"
    for t in bad["turns"]:
        if t["label"] == "N3":
            t["label"] = "ctx"  # no N3 turn left
    server = Server(reply("Sure! Here is a scene."), reply(json.dumps(bad)), reply(json.dumps(valid_answer(spec))))
    writer, _ = make(server)
    ex, im = writer.make_pair(1, 0)
    scene_from_dict(ex), scene_from_dict(im)
    assert len(server.requests) == 3
    # each retry carries the whole conversation and the validation errors
    second, third = server.requests[1]["messages"], server.requests[2]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"] and "not one JSON object" in second[2]["content"]
    assert len(third) == 5 and "must start with a verb" in third[4]["content"] and "no N3 turn" in third[4]["content"]
    log = writer.log[-1]
    assert log["attempts"] == 3 and len(log["rejected"]) == 2


def test_answers_that_never_validate_raise(make):
    server = Server(reply('{"turns": [], "request": {}}'))
    writer, _ = make(server, max_attempts=2)
    with pytest.raises(GenerationError, match="no valid answer in 2 attempts"):
        writer.make_pair(0, 0)
    assert len(server.requests) == 2


def test_rate_limit_then_success_and_400_is_final(make):
    spec = make_spec(0, 0)
    server = Server(error(429), error(529), reply(json.dumps(valid_answer(spec))))
    writer, sleeps = make(server)
    writer.make_pair(0, 0)
    assert len(server.requests) == 3 and sleeps == pytest.approx([0.001, 0.002])
    writer2, _ = make(Server(error(400, "bad request")), cache=False)
    with pytest.raises(GenerationError, match="HTTP 400"):
        writer2.make_pair(0, 0)


def test_model_without_temperature_is_asked_again_without_it(make):
    spec = make_spec(0, 0)
    server = Server(error(400, "temperature is not supported"), reply(json.dumps(valid_answer(spec))))
    writer, _ = make(server, cache=False)
    writer.make_pair(0, 0)
    assert "temperature" in server.requests[0] and "temperature" not in server.requests[1]


# ------------------------------------------------------------------ a whole set, as YAML


def _answers(repeat_first: bool = False, edit=None):
    """A faked API answering each request with a valid answer for the spec its prompt names;
    ``repeat_first``: a scene's first answer reuses scene 0's sentences; ``edit(data, first)``:
    changes an answer before it is sent (``first``: the conversation's first request)."""
    class Answers:
        def __init__(self):
            self.requests = []

        def __call__(self, request):
            body = json.loads(request.content)
            self.requests.append(body)
            content = body["messages"][0]["content"]
            spec = next(make_spec(i, 0) for i in range(50) if mpe_llm.user_prompt(make_spec(i, 0), mpe_llm.load_prompt()[1]) == content)
            first = len(body["messages"]) == 1
            data = valid_answer(spec, tag=0 if repeat_first and first else None)
            if edit is not None:
                edit(data, first)
            return reply(json.dumps(data))

    return Answers()


def test_written_set_is_ordinary_scene_yaml_with_the_pair_design(make, tmp_path, monkeypatch):
    server = _answers()
    writer, _ = make(server)
    files, scenes, splits = mpe_llm.generate_claude_set(6, 0, writer=writer)
    folder = tmp_path / "sets" / "mpe_claude"
    mpe.write_files(folder, files, "mpe_claude")
    monkeypatch.setenv("FDENV_SCENES_DIR", str(tmp_path / "sets"))
    loaded = load_set("mpe_claude")
    assert [s.id for s in loaded] == [d["id"] for d in scenes] and len(loaded) == 12
    for ex, im in zip(scenes[::2], scenes[1::2]):
        assert pair_problems(ex, im) == [] and splits[ex["id"]] == splits[im["id"]]
    m = yaml.safe_load((folder / "manifest.yaml").read_text())
    assert m["generator"]["model"] == "claude-test" and m["generator"]["version"] == mpe_llm.VERSION
    assert m["counts"]["pairs"] == 6 and m["counts"]["splits"] == {"train": 8, "val": 2, "test": 2}
    assert m["counts"]["n4_share"] == pytest.approx(sum(make_spec(i, 0).has_n4 for i in range(6)) / 6)
    assert "--backend claude" in m["regenerate"]
    assert len(server.requests) == 6


def test_a_pair_repeating_an_earlier_scenes_sentences_is_asked_again(make):
    server = _answers(repeat_first=True)
    writer, _ = make(server)
    files, scenes, _ = mpe_llm.generate_claude_set(2, 0, writer=writer)
    # scene 0's first answer is its own; scene 1's first repeats it, is sent back, and the second is new
    assert len(server.requests) == 3
    assert "already used in this set" in server.requests[2]["messages"][-1]["content"]
    assert writer.log[1]["attempts"] == 2
    said = [x for lab, x in sentences(scenes) if lab in SCORED_LABELS]
    assert len(said) == len(set(said))


def test_cli_claude_backend_checks_the_gold_facts(tmp_path, monkeypatch, capsys):
    # the command line hands the writer the offline judge's key-fact check: an answer whose gold
    # answer does not state its own key facts is sent back, and the corrected one is written
    import anthropic

    from fdenv.cli.scenes import main as scenes_cli

    def wrong_facts_first(data, first):
        if first:
            data["request"]["gold_facts"] = ["15 euros"]  # the gold answer says 14

    server = _answers(edit=wrong_facts_first)
    real = anthropic.Anthropic
    monkeypatch.setattr(anthropic, "Anthropic", lambda **kw: real(**{**kw, "http_client": httpx2.Client(
        transport=httpx2.MockTransport(server))}))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path / "cache"))
    assert scenes_cli(["mpe", "--backend", "claude", "--n", "1", "--out", str(tmp_path)]) == 0
    assert len(server.requests) == 2 and "does not state its key facts" in server.requests[1]["messages"][-1]["content"]
    assert "1 needed another attempt" in capsys.readouterr().out
    written = yaml.safe_load((tmp_path / "mpe_claude" / "mpe_claude-0001-implicit.yaml").read_text())
    assert [t for t in written["turns"] if t["label"] == "T"][0]["gold_facts"][0] == "14 euros"
