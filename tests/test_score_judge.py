"""Judges (SPEC 8): offline normalisation and rules; the Anthropic judge through the real SDK
client against a faked HTTP transport (no network)."""

import json
import os

import httpx2
import pytest

from fdenv.score import judge as J

os.environ["HF_HUB_OFFLINE"] = "1"


# ------------------------------------------------------------------ offline


@pytest.mark.parametrize("text, tokens", [
    ("three hundred and forty", ["340"]),
    ("seven thirty", ["7", "30"]),
    ("7:30", ["7", "30"]),
    ("Twenty-one", ["21"]),
    ("It costs $340.", ["costs", "340"]),
    ("two thousand and twenty five", ["2025"]),
    ("one two three", ["1", "2", "3"]),
    ("nineteen eighty four", ["19", "84"]),
    ("rock and roll", ["rock", "roll"]),
    ("5/8 of the pie", ["5", "8", "pie"]),
    ("I don't know, let's go", ["know", "go"]),  # stop words match after apostrophes go
])
def test_normalisation(text, tokens):
    assert J.content_tokens(text) == tokens


def test_offline_correctness_60_percent_rule():
    j = J.OfflineJudge()
    gold = "four shots at eighty-five each comes to 340"  # content: 4 shots 85 comes 340
    assert j.correct("Four shots at 85 comes to three hundred and forty.", gold) is True
    assert j.correct("That is 340 for the shots", gold) is False  # 2 of 5
    assert j.correct("4 shots, 85 each, 340", gold) is True  # 4 of 5
    assert j.correct("anything", "the a of") is None  # no content tokens: no verdict
    assert j.coverage() == {"judge": "offline", "asked": 4, "answered": 3}


def test_offline_acknowledgement_and_relevance():
    j = J.OfflineJudge()
    assert j.acknowledgement("mm-hmm", 0.6) is True
    assert j.acknowledgement("oh yes sure", 0.8) is False
    assert j.acknowledgement("okay", 1.0) is False
    interrupt = "Oh wait, can we talk about dinner plans instead?"  # content: wait talk dinner plans instead
    assert j.relevance("sure, dinner plans", interrupt) == 4  # r = 2/5 -> round(5 * 0.8) = 4
    assert j.relevance("the trail is long", interrupt) == 0
    assert j.relevance("let us talk dinner", interrupt) == 4
    assert j.relevance("talk dinner plans", interrupt) == 5  # r = 3/5 -> capped at 5
    assert j.relevance("dinner", interrupt) == 2  # r = 1/5 -> round(2.0) = 2
    assert j.relevance("anything", "oh the") is None


def test_relevance_rounds_half_up():
    j = J.OfflineJudge()
    # r = 1/4 -> 5 * 0.5 = 2.5 -> 3
    assert j.relevance("dinner", "dinner plans tonight please") == 3


# ------------------------------------------------------------------ Anthropic, faked transport


def reply(text, status=200, headers=None):
    body = {"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 3}}
    return httpx2.Response(status, json=body, headers=headers or {})


def error(status):
    return httpx2.Response(status, json={"type": "error", "error": {"type": "api_error", "message": "boom"}})


class Server:
    """A faked API: answers each request with the next planned response."""

    def __init__(self, *plan):
        self.plan = list(plan)
        self.requests = []

    def __call__(self, request):
        self.requests.append(json.loads(request.content))
        item = self.plan.pop(0) if len(self.plan) > 1 else self.plan[0]
        return item


@pytest.fixture
def make(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    sleeps = []

    def build(server, **kw):
        client = httpx2.Client(transport=httpx2.MockTransport(server))
        j = J.AnthropicJudge(model="claude-test", api_key="test-key", http_client=client, backoff_s=0.001,
                             sleep=sleeps.append, **kw)
        return j, sleeps

    return build


def test_success_and_request_shape(make):
    server = Server(reply('{"rating": 4}'))
    j, _ = make(server)
    assert j.relevance("sure, dinner plans", "can we talk about dinner", "hiking trails?") == 4
    req = server.requests[0]
    assert req["model"] == "claude-test" and req["temperature"] == 0
    assert "dinner" in req["messages"][0]["content"] and "rating" in req["system"]
    assert j.coverage()["asked"] == 1 and j.coverage()["answered"] == 1 and j.name == "anthropic:claude-test"


def test_verdicts_are_cached_on_disk(make, tmp_path):
    server = Server(reply('{"correct": true}'))
    j, _ = make(server)
    assert j.correct("340", "340") is True
    j2, _ = make(Server(error(500)))  # a fresh judge: the cache answers, the server is never asked
    assert j2.correct("340", "340") is True
    assert len(server.requests) == 1 and any((tmp_path / "judge").rglob("*.json"))
    # another prompt version or model is another key
    j3, _ = make(Server(reply('{"correct": false}')), max_retries=0)
    j3.model = "claude-other"
    assert j3.correct("340", "340") is False


def test_correctness_prompt_carries_the_key_facts(make):
    server = Server(reply('{"correct": true}'))
    j, _ = make(server)
    assert j.correct("forty quid", "Each pays 40 pounds.", "how much each?", facts=["40 pounds", "not 45 pounds"]) is True
    user = server.requests[0]["messages"][0]["content"]
    assert "Key facts: 40 pound (not: 45 pound)" in user and "Each pays 40 pounds." in user
    j.correct("It ends at quarter past three.", "It ends at quarter past three.")  # plain gold: facts read from it
    assert "Key facts: 3:15" in server.requests[1]["messages"][0]["content"]


@pytest.mark.parametrize("text", ['I would rate it 4', '{"rating": 7}', '{"rating": "4"}', '{"rating": 4, "why": "x"}',
                                  '```json\n{"rating": 4}\n```', ''])
def test_malformed_answer_is_no_verdict(make, text):
    j, _ = make(Server(reply(text)))
    assert j.relevance("a", "b") is None
    cov = j.coverage()
    assert cov["asked"] == 1 and cov["answered"] == 0 and cov["failures"]


def test_429_then_success(make):
    server = Server(error(429), reply('{"label": "acknowledgement"}'))
    j, sleeps = make(server)
    assert j.acknowledgement("mm-hmm", 0.5) is True
    assert len(server.requests) == 2 and len(sleeps) == 1 and sleeps[0] < 1


def test_500_every_time_gives_none(make):
    server = Server(error(500))
    j, sleeps = make(server, max_retries=3)
    assert j.relevance("a", "b") is None
    assert len(server.requests) == 4 and sleeps == pytest.approx([0.001, 0.002, 0.004])
    assert j.coverage()["answered"] == 0


def test_400_is_not_retried(make):
    server = Server(error(400))
    j, sleeps = make(server)
    assert j.correct("a", "b") is None and len(server.requests) == 1 and not sleeps


def test_make_judge(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert J.make_judge().name == "offline"
    assert J.make_judge("offline").name == "offline"
    with pytest.warns(UserWarning, match="offline"):
        assert J.make_judge("anthropic").name == "offline"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    j = J.make_judge("anthropic:claude-x")
    assert j.name == "anthropic:claude-x" and j.prompt_version == J.PROMPT_VERSION
    with pytest.raises(ValueError):
        J.make_judge("gpt")


def test_prompts_exist_and_parse():
    for task in J.TASKS:
        system, user = J.load_prompt(task)
        assert "JSON" in system and "$" in user.template


def test_model_without_temperature_is_asked_again_without_it(make):
    bad = httpx2.Response(400, json={"type": "error", "error": {"type": "invalid_request_error",
                                                                 "message": "temperature is not supported"}})
    server = Server(bad, reply('{"rating": 3}'))
    j, _ = make(server)
    assert j.relevance("a", "b") == 3
    assert server.requests[0]["temperature"] == 0 and "temperature" not in server.requests[1]
    # the verdict had without a temperature is not served to a judge that asks with one
    server2 = Server(reply('{"rating": 5}'))
    j2, _ = make(server2)
    assert j2.relevance("a", "b") == 5 and len(server2.requests) == 1
    j3, _ = make(Server(), temperature=None)
    assert j3.relevance("a", "b") == 3  # from the cache, under its own key
