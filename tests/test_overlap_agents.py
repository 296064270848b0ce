"""The baseline agents in the overlap set through the real env and scorer (slow: Whisper on every
answer): the oracle does the right thing in every event, the talker never stops, and the
cascade's barge-in threshold trades stopping on what is not for it against missing real
interruptions."""

from __future__ import annotations

import pytest

from fdenv.run import run_episode
from fdenv.scene import load_set
from fdenv.score.overlap import OverlapScorer
from fdenv.sim.env import RoomEnv
from fdenv_agents import make_agent

pytestmark = pytest.mark.slow
EVENTS = ("interruption", "backchannel", "side_conversation", "background")


@pytest.fixture(scope="module")
def scenes():
    test = load_set("overlap", "test")
    return [s for e in EVENTS for s in [x for x in test if x.attributes["event"] == e][:2]]


def _scores(agent, scenes):
    env, scorer = RoomEnv(scene=scenes), OverlapScorer(profiles="paper")
    return [scorer.score(run_episode(env, agent, seed=0, scene=s.id).record) for s in scenes]


def test_oracle_does_the_right_thing_in_every_event(scenes):
    addressed = []
    for r in _scores(make_agent("oracle"), scenes):
        p = r["paper"]
        assert p["met_speaking"], r["scene_id"]
        if r["event"] == "interruption":
            assert p["stop_latency_s"] < 0.3 and 0.3 < p["response_latency_s"] < 1.0 and p["response_text"], r
            addressed.append(p["addresses_event"])
        else:
            assert p["held"] and p["category"] == "C_RESUME" and p["continues_answer"], r
    # it says the gold answer; a miss is the recogniser's (Whisper tiny.en drops numbers of espeak's)
    assert any(addressed)


def test_talker_never_stops(scenes):
    for r in _scores(make_agent("talker"), scenes):
        p = r["paper"]
        assert p["met_speaking"] and p["held"] and p["did_not_stop"] and p["response_latency_s"] is None, r
        assert p["category"] == "C_RESUME"


def _by_event(rs):
    return {e: [r["paper"] for r in rs if r["event"] == e and r["paper"]["met_speaking"]] for e in EVENTS}


def test_cascade_barge_in_trade_off(scenes):
    short = _by_event(_scores(make_agent("cascade"), scenes))  # LiveKit's 500 ms barge-in
    long = _by_event(_scores(make_agent("cascade", barge_in_ms=4000), scenes))
    # 500 ms: it stops for the side conversation and the TV (speech not for it) as for the interruption
    assert sum(not p["held"] for p in short["side_conversation"] + short["background"]) >= 3
    stops_within = lambda ps, s: sum(p["stop_latency_s"] is not None and p["stop_latency_s"] < s for p in ps)  # noqa: E731
    assert stops_within(short["interruption"], 1.0) >= 1
    # 4 s: it talks through every backchannel, and no interruption stops it within a second
    assert long["backchannel"] and all(p["held"] for p in long["backchannel"])
    assert long["interruption"] and stops_within(long["interruption"], 1.0) == 0
