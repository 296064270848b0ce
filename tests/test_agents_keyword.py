"""The keyword baseline: its addressing rule on transcripts, and the agent through the real env
(a fixed transcriber in the fast test, Whisper in the slow one)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv.sim.env import RoomEnv  # noqa: E402
from fdenv_agents import AGENTS, KeywordAgent, make_agent  # noqa: E402
from fdenv_agents.cascade import FixedTranscriber  # noqa: E402
from fdenv_agents.keyword import is_question_or_request, names_someone  # noqa: E402

from .helpers import rollout, scene  # noqa: E402


@pytest.mark.parametrize("text, answers", [
    ("Nova, how much is it altogether?", True),             # names the assistant
    ("How much is it altogether?", True),                   # a question naming nobody
    ("So did you call the garage in the end?", True),       # ... even one meant for a human
    ("Book a table at the place we picked.", True),         # a request naming nobody
    ("Okay, book a table for Friday.", True),               # days are not names
    ("Send Tom a message with what each of us owes.", False),  # names a human
    ("Tom, could you pass me the pen?", False),             # a vocative
    ("Alexa, set a timer for ten minutes.", False),         # another device
    ("Nova must be tired of us by now.", False),            # names the assistant, asks nothing
    ("I really need a holiday.", False),                    # no question, no request
    ("Let's have Nova add it up in a minute.", False),
    ("Tom, remind me to ask Nova to book it.", True),       # a request that names the assistant
])
def test_rule_on_transcripts(text, answers):
    agent = KeywordAgent(transcriber=FixedTranscriber([""]))
    agent.reset("You are Nova. Answer when addressed.", 16000, 1280)
    assert agent.addressed(text) is answers, (is_question_or_request(text), names_someone(text, "Nova"))


def test_registered_not_privileged_and_configured():
    assert AGENTS["keyword"] is KeywordAgent and not KeywordAgent.privileged
    agent = make_agent("keyword", transcriber=FixedTranscriber([""]))
    cfg = agent.config()
    assert cfg["rule"].startswith("keyword-") and cfg["model"] == "tiny.en" and cfg["addressee_gate"] is False


def _mpe(request_text):
    return scene([
        {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
        {"speaker": "Bob", "text": request_text, "label": "T", "gold_answer": "48", "gap": 1.5},
        {"speaker": "Cat", "text": "Anyway, let us go.", "label": "ctx"},
    ], kind="mpe", assistant_name="Aria")


def _active(rec):
    n = len(rec.assistant) // rec.frame_samples * rec.frame_samples
    a = rec.assistant[:n].reshape(-1, rec.frame_samples).astype(np.float64)
    return np.sqrt((a ** 2).mean(axis=1)) > 10 ** (-45 / 20)


def test_through_the_env_it_answers_the_unnamed_request_and_not_the_one_naming_a_human():
    for text, spoken in (("How much did we spend?", True), ("Tell Cat how much we spent.", False)):
        agent = KeywordAgent(transcriber=FixedTranscriber(["We bought four tickets at twelve each.", text, "Anyway, let us go."]))
        rec, _ = rollout(RoomEnv(scene=_mpe(text)), agent)
        assert agent.stats()["responses"] == int(spoken) and bool(_active(rec).any()) is spoken, agent.stats()["heard"]


@pytest.mark.slow
def test_whisper_keyword_episode():
    # The scene's scripted timing (the request 1.5 s after the facts; behaviour="paper"): under
    # natural humans the request may follow within 0.3 s with a backchannel over it, the agent's
    # endpointing hears both turns as one stretch, and tiny.en's greedy transcript of that stretch
    # differs between machines ("four tickets at twelve each" came out "for to cut such well" on
    # one). This checks the Whisper path and the arithmetic, which need the facts heard.
    agent = KeywordAgent()
    rollout(RoomEnv(scene=_mpe("So how much did we spend in the end?"), behaviour="paper"), agent)
    answered = [h for h in agent.stats()["heard"] if h["answered"]]
    assert len(answered) == 1 and "48" in answered[0]["reply"], agent.stats()["heard"]
