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
from fdenv.scene.generate.mpe_llm import ClaudeSceneWriter, GenerationError, ReplyError, build_pair, make_spec

os.environ["HF_HUB_OFFLINE"] = "1"


def valid_answer(spec) -> dict:
    """A valid answer for ``spec``: two facts, the request, every silence kind, an N4 event when asked."""
    h = list(spec.humans)
    A = spec.assistant
    turns = [
        {"speaker": h[0], "label": "ctx", "text": "Two coffees at four euros each."},
        {"speaker": h[1], "label": "ctx", "text": "And a cake for six euros, please."},
        {"speaker": h[2], "label": "T"},
        {"speaker": h[0], "label": "N1", "text": f"{A} always knows the prices here."},
        {"speaker": h[1], "label": "N2", "addressee": h[0], "text": f"{h[0]}, pass me the sugar."},
        {"speaker": h[2], "label": "N3", "text": "Hmm, where did I put my keys?"},
        {"speaker": h[-1], "label": "N3", "text": "I really need a holiday."},
    ]
    if spec.has_n4:
        turns += [{"speaker": h[1], "label": "N4Q", "text": f"{A}, is it going to rain later?"},
                  {"speaker": h[0], "label": "N4R", "text": "No, I just checked, it stays dry."}]
    return {"turns": turns, "request": {"core": "how much is all of that together?",
                                        "gold_answer": "The total comes to 14 euros. The total is 14 euros."}}


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
    for i in range(30):
        s = make_spec(i, 0)
        assert 3 <= len(s.humans) <= 4 and s.assistant not in s.humans
        assert 7 <= s.n_turns <= 13 and 3 <= s.t_position <= s.n_turns and 4 <= s.n_silence <= 8
        assert s.task in mpe.FAMILIES and s.register in mpe.REGISTERS and s.device in mpe.DEVICE_CONTEXTS
    assert sum(make_spec(i, 0).has_n4 for i in range(30)) == 27


def test_prompt_is_in_the_repo_and_names_the_spec():
    system, template = mpe_llm.load_prompt()
    assert "JSON" in system and "N4Q" in system and "core" in system
    spec = make_spec(0, 0)
    user = mpe_llm.user_prompt(spec, template)
    for piece in (spec.assistant, *spec.humans, spec.setting, spec.relationship, spec.register, str(spec.n_turns)):
        assert piece in user


def test_build_pair_from_a_valid_answer():
    spec = make_spec(0, 0)
    ex, im = build_pair(spec, valid_answer(spec), "mpe_claude-0001")
    for d in (ex, im):
        s = scene_from_dict(d)
        assert s.kind == "mpe" and s.turns[0].label == "duty" and s.duty == spec.duty
    forms = mpe.ADDRESS_FORMS + mpe.FORMAL_FORMS
    te = [t for t in ex["turns"] if t["label"] == "T"][0]
    ti = [t for t in im["turns"] if t["label"] == "T"][0]
    assert (te["text"], ti["text"]) == mpe.address(forms[spec.form], "how much is all of that together?", spec.assistant)
    assert te["gold_answer"] == ti["gold_answer"]


@pytest.mark.parametrize("mutate, expect", [
    (lambda d, s: d["request"].update(core=f"{s.assistant}, how much is it?"), "must not contain the assistant's name"),
    (lambda d, s: [t.update(label="ctx") for t in d["turns"] if t["label"] == "N3"], "no N3 turn"),
    (lambda d, s: d["turns"][0].update(text=f"{s.assistant} said two coffees."), "must not mention the assistant's name"),
    (lambda d, s: d["turns"][4].update(addressee="Bob"), "must be another person in the room"),
    (lambda d, s: d["turns"].insert(0, d["turns"].pop(2)), "it must come 3rd or later"),
    (lambda d, s: d["turns"][3].update(text="Nobody is named here."), "must mention the assistant by name"),
    (lambda d, s: d["turns"][1].update(speaker="Zed"), "is not one of the people"),
    (lambda d, s: d.update(extra=1), "unexpected top-level keys"),
])
def test_invalid_answers_name_their_problem(mutate, expect):
    spec = make_spec(0, 0)
    data = valid_answer(spec)
    mutate(data, spec)
    with pytest.raises(ReplyError) as info:
        build_pair(spec, data, "p")
    assert any(expect in p for p in info.value.problems), info.value.problems


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
    bad["request"]["core"] = f"{spec.assistant}, how much is it?"
    bad["turns"][5]["label"] = "ctx"  # one N3 turn becomes ctx
    bad["turns"][6]["label"] = "ctx"  # and the other
    server = Server(reply("Sure! Here is a scene."), reply(json.dumps(bad)), reply(json.dumps(valid_answer(spec))))
    writer, _ = make(server)
    ex, im = writer.make_pair(1, 0)
    scene_from_dict(ex), scene_from_dict(im)
    assert len(server.requests) == 3
    # each retry carries the whole conversation and the validation errors
    second, third = server.requests[1]["messages"], server.requests[2]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"] and "not one JSON object" in second[2]["content"]
    assert len(third) == 5 and "must not contain the assistant's name" in third[4]["content"] and "no N3 turn" in third[4]["content"]
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


def test_written_set_is_ordinary_scene_yaml(make, tmp_path, monkeypatch):
    class Answers:
        """Answers each request with a valid answer for the spec it names."""

        def __init__(self):
            self.requests = []

        def __call__(self, request):
            body = json.loads(request.content)
            self.requests.append(body)
            content = body["messages"][0]["content"]
            spec = next(make_spec(i, 0) for i in range(50) if mpe_llm.user_prompt(make_spec(i, 0), mpe_llm.load_prompt()[1]) == content)
            return reply(json.dumps(valid_answer(spec)))

    server = Answers()
    writer, _ = make(server)
    files, scenes, splits = mpe_llm.generate_claude_set(4, 0, writer=writer)
    folder = tmp_path / "sets" / "mpe_claude"
    mpe.write_files(folder, files, "mpe_claude")
    monkeypatch.setenv("FDENV_SCENES_DIR", str(tmp_path / "sets"))
    loaded = load_set("mpe_claude")
    assert [s.id for s in loaded] == [d["id"] for d in scenes] and len(loaded) == 8
    m = yaml.safe_load((folder / "manifest.yaml").read_text())
    assert m["generator"]["model"] == "claude-test" and m["counts"]["pairs"] == 4
    assert m["counts"]["n4_share"] == pytest.approx(sum(make_spec(i, 0).has_n4 for i in range(4)) / 4)
    assert set(m["scenes"].values()) <= {"train", "val", "test"} and "--backend claude" in m["regenerate"]
    assert len(server.requests) == 4
