"""Overlap scoring (``info["overlap"]``): the rules on hand-built segments, the judges (offline
rules, Claude through a faked transport with caching and coverage), and scripted agents through
the real env and scorer with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.record import PlayedTurn
from fdenv.run import run_episode
from fdenv.scene import load_set
from fdenv.score import judge as J
from fdenv.score.asr import Word
from fdenv.score.overlap import OverlapEvent, OverlapScorer, overlap_event, paper_overlap
from fdenv.score.overlap_aggregate import aggregate_overlap
from fdenv.sim.env import RoomEnv
from fdenv_agents import ScriptedAgent
from tests.test_score_judge import Server, make, reply  # noqa: F401  (the faked Anthropic API)

SR = 16000


def ev(kind, s, f, text="Mm-hmm.", gold=None, request="Tell me about the history of Lisbon."):
    return OverlapEvent(kind, (), s, f, text, gold, request)


def words(*items):
    return [Word(t, a, b) for t, a, b in items]


# ---- the rules on hand-built segments ---------------------------------------------------------

def test_interruption_stop_and_fresh_answer():
    segs = [(5.0, 8.3), (9.8, 12.0)]
    w = words(("Lisbon", 5.1, 5.6), ("began", 5.7, 6.2), ("ten", 9.9, 10.1), ("percent", 10.2, 10.6),
              ("of", 10.7, 10.8), ("3550", 10.9, 11.5), ("is", 11.5, 11.6), ("355", 11.6, 11.9))
    out = paper_overlap(segs, w, ev("interruption", 8.0, 9.5, "How much is ten percent of 3550?",
                                    gold="Ten percent of 3550 is 355."), J.OfflineJudge())
    assert out["met_speaking"] is True and out["stop_latency_s"] == pytest.approx(0.3)
    assert out["held"] is False and out["response_latency_s"] == pytest.approx(0.3)
    assert out["category"] == "C_RESPOND" and out["addresses_event"] is True


def test_stopping_in_the_frame_the_interruption_begins_met_it_speaking():
    # a privileged agent stops at the onset; Silero's refined end lies a few ms before it
    j = J.OfflineJudge()
    out = paper_overlap([(5.0, 7.99)], [], ev("interruption", 8.0, 9.5, "What time is it?"), j)
    assert out["met_speaking"] is True and out["stop_latency_s"] == 0.0 and out["held"] is False
    # speech that ended a frame or more before the onset did not meet it
    out = paper_overlap([(5.0, 7.9)], [], ev("interruption", 8.0, 9.5, "What time is it?"), j)
    assert out["met_speaking"] is False and out["stop_latency_s"] is None


def test_a_brief_pause_is_still_holding_the_floor():
    segs = [(5.0, 8.5), (9.0, 14.0)]
    w = words(("the", 5.0, 5.2), ("city", 5.3, 5.8), ("grew", 9.1, 9.5), ("walls", 9.6, 10.0))
    out = paper_overlap(segs, w, ev("backchannel", 8.0, 8.7), J.OfflineJudge())
    assert out["stop_latency_s"] == pytest.approx(6.0) and out["held"] is True
    assert out["response_latency_s"] is None and out["category"] == "C_RESUME" and out["continues_answer"] is True
    # a pause of a second or more is a stop, and what follows is a new response
    segs = [(5.0, 8.5), (9.6, 14.0)]
    out = paper_overlap(segs, w, ev("backchannel", 8.0, 8.7), J.OfflineJudge())
    assert out["stop_latency_s"] == pytest.approx(0.5) and out["held"] is False
    assert out["response_latency_s"] == pytest.approx(0.9)


def test_silence_uncertainty_and_answering_the_side_talk():
    j = J.OfflineJudge()
    quiet = paper_overlap([], [], ev("side_conversation", 8.0, 11.0, "Tom, did you lock the back door?"), j)
    assert quiet["met_speaking"] is False and quiet["category"] == "C_UNKNOWN" and quiet["continues_answer"] is False
    segs = [(5.0, 8.2), (11.5, 13.0)]
    w = words(("sorry", 11.6, 11.9), ("I", 12.0, 12.1), ("didn't", 12.1, 12.4), ("catch", 12.4, 12.7), ("that", 12.7, 12.9))
    out = paper_overlap(segs, w, ev("side_conversation", 8.0, 11.0, "Tom, did you lock the back door?"), j)
    assert out["category"] == "C_UNCERTAIN_HANDLING"
    w = words(("the", 11.6, 11.7), ("back", 11.8, 12.0), ("door", 12.0, 12.3), ("is", 12.3, 12.4), ("locked", 12.4, 12.9))
    out = paper_overlap(segs, w, ev("side_conversation", 8.0, 11.0, "Tom, did you lock the back door?"), j)
    assert out["category"] == "C_RESPOND" and out["continues_answer"] is False
    assert j.coverage()["asked"] == j.coverage()["answered"] == 3
    assert out["judge"] == "offline (behaviour-1)"


def test_talking_through_an_interruption_is_resuming_not_addressing():
    out = paper_overlap([(2.0, 40.0)], words(("and", 9.0, 9.2), ("trains", 9.3, 9.8)),
                        ev("interruption", 8.0, 10.0, "Wait, just one day.", gold="A one-day plan."), J.OfflineJudge())
    assert out["did_not_stop"] is True and out["stop_latency_s"] is None
    assert out["category"] == "C_RESUME" and out["addresses_event"] is False


# ---- the Claude judge: caching, strict parsing, coverage ------------------------------------------

def test_claude_behaviour_verdicts(make):  # noqa: F811
    server = Server(reply('{"behaviour": ["C_RESUME"]}'))
    j, _ = make(server)
    args = ("backchannel", "Mm-hmm.", "Tell me about Lisbon.", words(("The", 1.0, 1.2), ("city", 1.3, 1.6)),
            words(("as", 8.1, 8.2), ("a", 8.2, 8.3), ("settlement", 8.3, 8.9)), [])
    assert j.behaviour(*args, span=(8.0, 8.6)) == "C_RESUME"
    user = server.requests[0]["messages"][0]["content"]
    assert '"text":"Mm-hmm.","timestamp":[8.0,8.6]' in user and '"settlement"' in user
    assert "C_UNCERTAIN_HANDLING" in server.requests[0]["system"]
    j2, _ = make(Server(reply('{"behaviour": "C_RESPOND"}')))
    assert j2.behaviour(*args, span=(8.0, 8.6)) == "C_RESUME", "the cached verdict, not a new call"
    bad, _ = make(Server(reply('{"behaviour": "C_MAYBE"}')))
    assert bad.behaviour("side_conversation", "x", "y", [], [], []) is None
    assert bad.coverage()["answered"] == 0 and bad.coverage()["failures"]


# ---- scripted agents through the real env and scorer --------------------------------------------

def _scene(event):
    return next(s for s in load_set("overlap", "test") if s.attributes["event"] == event)


ANSWER = ("The city began as a small settlement by the river, where people traded food and cloth, and over the "
          "centuries it grew into a busy town with walls, markets, churches, a railway and a university.")


def _agent(stop_after_onset_s=None, reply_text=None):
    """Answers 0.5 s after the final turn with a long sentence; with ``stop_after_onset_s`` it stops
    that long after the frame in which the event starts (known to the sample), and 0.5 s after
    the event ends says ``reply_text``."""
    state = {}

    def on_labels(agent, labels):
        label, t = labels["turn"]["label"], labels["t"]
        if label == "final":
            state["final"] = True
        elif state.get("final") and "answer" not in state:
            state["answer"] = t + 0.08
            agent.say(ANSWER, t + 0.08 + 0.5)
        if stop_after_onset_s is not None and label in ("interrupt", "bc", "side", "background") and "stop" not in state:
            state["stop"] = t + 0.08 + stop_after_onset_s
            agent.stop(state["stop"])
            state["event"] = label
        if "event" in state and label != state["event"] and "reply" not in state and reply_text:
            state["reply"] = t + 0.5
            agent.say(reply_text, t + 0.5)

    return ScriptedAgent(on_labels=on_labels), state


def test_known_stop_latency_and_an_answer_to_the_interruption():
    scene = _scene("interruption")
    gold = next(t for t in scene.turns if t.label == "interrupt").gold_answer
    agent, state = _agent(stop_after_onset_s=0.4, reply_text=gold)
    record = run_episode(RoomEnv(scene=scene, behaviour="paper"), agent, seed=1).record
    res = OverlapScorer().score(record)
    p = res["paper"]
    onset = overlap_event(record).start
    assert p["met_speaking"] is True
    assert p["stop_latency_s"] == pytest.approx(state["stop"] - onset, abs=0.04)
    assert p["response_latency_s"] == pytest.approx(state["reply"] - overlap_event(record).end, abs=0.04)
    assert p["category"] == "C_RESPOND" and p["addresses_event"] is True
    f = res["fdb15_code"]  # v1.5's rules: the overlap of the user's speech and the answer; the new answer's gap
    assert f["stop_latency_s"] == pytest.approx(state["stop"] - onset, abs=0.1)
    # (Silero's padded edges: the user's end later, the answer's start earlier, by tens of ms each)
    assert p["response_latency_s"] - 0.2 <= f["response_latency_s"] <= p["response_latency_s"]


def test_holding_through_a_backchannel_and_determinism():
    scene = _scene("backchannel")
    env = RoomEnv(scene=scene)
    a = OverlapScorer().score(run_episode(env, _agent()[0], seed=2).record)
    b = OverlapScorer().score(run_episode(env, _agent()[0], seed=2).record)
    assert a == b
    p = a["paper"]
    assert p["met_speaking"] and p["held"] and p["category"] == "C_RESUME" and p["continues_answer"] is True
    f = a["fdb15_code"]  # v1.5's timing: the backchannel's overlap with the answer is its whole length
    assert f["stop_interval"] is not None and f["stop_latency_s"] == pytest.approx(a["end_s"] - a["onset_s"], abs=0.3)


def test_silent_agent_meets_no_speech_and_the_table_counts_it():
    scene = _scene("side_conversation")
    res = OverlapScorer().score(run_episode(RoomEnv(scene=scene), ScriptedAgent(), seed=0).record)
    assert res["event"] == "side_conversation" and res["paper"]["met_speaking"] is False
    assert res["paper"]["category"] == "C_UNKNOWN"
    table = aggregate_overlap([res, {**res, "scene_id": "other", "paper": {**res["paper"], "met_speaking": True,
                                                                          "category": "C_RESUME", "held": True}}],
                              n_resamples=200)
    e = table["events"]["side_conversation"]
    assert e["n"] == 2 and e["met_speaking"]["value"] == 0.5 and e["right"]["value"] == 0.5
    assert e["categories"]["C_UNKNOWN"]["value"] == 0.5 and e["held"]["value"] == 1.0
    assert table["events"]["all"]["coverage"] == {"judged": 2, "of": 2, "judge": ["offline (behaviour-1)"], "missing": {}}


def test_without_assistant_speech_the_fdb15_timing_does_not_depend_on_the_input():
    """Why the silent agent's input VAD can be skipped: v1.5's rules need model speech for a stop
    or a response, whatever the user track holds."""
    from fdenv.score.overlap import fdb15_code_overlap

    event = OverlapEvent("interruption", (), 6.0, 8.0, "wait", None, "the question")
    user = [{"start": 16000 * 5, "end": 16000 * 9}]
    none = {"stop_latency_s": None, "response_latency_s": None, "stop_interval": None, "response_interval": None}
    assert fdb15_code_overlap(user, [], event) == fdb15_code_overlap([], [], event) == none
    assert fdb15_code_overlap(user, [{"start": 16000 * 4, "end": 16000 * 7}], event)["stop_latency_s"] is not None


def test_natural_listener_backchannels_are_not_the_event():
    scene = _scene("interruption")
    turns = [PlayedTurn("t0", "Ann", "final", 0.0, 3.0, "x"), PlayedTurn("bc0", "Ben", "bc", 4.0, 4.5, "yeah"),
             PlayedTurn(scene.turns[-1].id, "Ann", "interrupt", 6.0, 8.0, "wait")]

    class R:
        pass

    r = R()
    r.scene, r.turns = scene, turns
    assert overlap_event(r).start == 6.0 and overlap_event(r).kind == "interruption"


def test_runner_report_and_wrapper(tmp_path):
    from fdenv.report import format_runs, result_rows, run_summary
    from fdenv.run import run
    from fdenv_agents import make_agent

    folder = run(make_agent("silent"), scene_set="overlap", split="test", limit=4, out=tmp_path, progress=False)
    summary = run_summary(folder, n_resamples=200)
    events = summary["overlap"]["events"]
    assert events["all"]["n"] == 4 and events["all"]["met_speaking"]["value"] == 0.0
    assert set(events) == {"all", "interruption", "backchannel", "side_conversation", "background"}
    text = format_runs([summary])
    assert "overlap:side_conversation" in text and "met 0.00" in text and "judged 4/4" in text
    rows = [r for r in result_rows([summary]) if r["dimension"] == "overlap"]
    assert {r["condition"] for r in rows} == set(events) and any(r["metric"] == "C_UNKNOWN" for r in rows)
