"""FDB latencies end to end (issue 4, item 3): rendered scenes, the scripted agent speaking TTS
at known times, the real env, the real scorer (Silero + Whisper tiny.en)."""

import pytest

from fdenv.sim.env import RoomEnv
from fdenv.wrappers import FDBScore
from fdenv_agents import ScriptedAgent, SilentAgent

from .helpers import rollout, scene

ANSWER = "Nine in the morning is when the next train leaves, from platform two."
TT = scene([
    {"speaker": "Ann", "text": "We need to get to the airport tomorrow.", "label": "ctx"},
    {"speaker": "Ann", "text": "Aria, when does the next train leave?", "label": "final"},
], kind="turn_taking", speakers=("Ann",))
INT = scene([
    {"speaker": "Ann", "text": "Aria, tell me everything about the history of trains.", "label": "final"},
    {"speaker": "Ann", "text": "Wait, only the steam trains please.", "label": "interrupt"},
], kind="interruption", speakers=("Ann",))


def paper(env, agent):
    rec, _ = rollout(FDBScore(env, profiles=("paper",)), agent)
    return rec, FDBScore(env, profiles=("paper",)).scorer.score(rec)["paper"]


# Silero alone measured 0.377 s at d = 0.3 (this nasal onset falls badly on its 32 ms window grid)
# and starts "Five" at the vowel; the paper profile's edges are the sound's (fdenv.score.vad).
FRICATIVE = "Five minutes from now, from platform two."


@pytest.mark.parametrize("answer", [ANSWER, FRICATIVE])
@pytest.mark.parametrize("d", [0.3, 0.6, 1.2])
def test_turn_taking_latency_is_d(d, answer):
    env = RoomEnv(scene=TT)
    e = [t for t in rollout(env, SilentAgent())[0].turns if t.label == "final"][0].end
    rec, p = paper(env, ScriptedAgent([(e + d, answer)]))
    assert [t for t in rec.turns if t.label == "final"][0].end == e
    assert p["to"] == 1 and p["latency_s"] == pytest.approx(d, abs=0.04)


@pytest.mark.parametrize("d", [0.3, 0.6, 1.2])
def test_interruption_response_latency_is_d(d):
    env = RoomEnv(scene=INT)
    e = [t for t in rollout(env, SilentAgent())[0].turns if t.label == "final"][0].end

    def stop_at_barge_in(respond_at=None):
        def on_labels(agent, labels):
            if labels["turn"]["label"] == "interrupt" and not getattr(agent, "stopped", False):
                agent.stop((labels["frame"] + 1) * 1280 / 16000)
                agent.stopped = True
                if respond_at is not None:
                    agent.say(ANSWER, respond_at)
        return on_labels

    long_answer = ANSWER + " " + ANSWER
    first, _ = rollout(env, ScriptedAgent([(e + 0.5, long_answer)], on_labels=stop_at_barge_in()))
    f = [t for t in first.turns if t.label == "interrupt"][0].end
    # Same behaviour up to f (the env is deterministic), then the response d after f.
    rec, p = paper(env, ScriptedAgent([(e + 0.5, long_answer)], on_labels=stop_at_barge_in(f + d)))
    assert [t for t in rec.turns if t.label == "interrupt"][0].end == f
    assert p["to"] == 1 and not p["did_not_stop"]
    assert p["latency_s"] == pytest.approx(d, abs=0.04)


def test_the_oracles_short_answer_takes_the_turn():
    # turn_taking-0052: the oracle answers "That's September." 0.5 s after the question; Silero
    # split it at the "s" into two sub-second segments with at most one recognised word each, so
    # the paper profile counted two backchannels and no take-over (fdb_code, from the words: TO 1).
    from fdenv_agents import make_agent

    env = RoomEnv(scene="turn_taking-0052", behaviour="paper")
    rec, _ = rollout(env, make_agent("oracle"))
    result = FDBScore(env, profiles=("paper", "fdb_code")).scorer.score(rec)
    assert result["paper"]["to"] == 1 and result["paper"]["latency_s"] == pytest.approx(0.5, abs=0.06)
    assert result["fdb_code"]["to"] == 1
