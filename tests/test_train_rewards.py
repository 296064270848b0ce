"""Each reward wrapper gives the sign it should on scripted behaviour (issue 7)."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.sim.env import RoomEnv
from fdenv.train.rewards import (DEFAULT_WEIGHTS, BackchannelReward, HoldReward, PauseReward, ResponseReward,
                                 ResponseTerm, SilenceReward, TalkCost, TurnTakingReward, YieldReward)
from tests.helpers import scene

N = 1280
LOUD = (0.1 * np.sin(2 * np.pi * 220 * np.arange(N) / 16000)).astype(np.float32)
QUIET = np.zeros(N, np.float32)


def play(env, decide) -> tuple[float, dict]:
    """One episode; ``decide(labels, state)`` says whether the next frame is loud. ``state`` is a
    dict the script may keep things in. Returns the total reward and the summed terms."""
    obs, info = env.reset(seed=0)
    labels, state = info["labels"], {}
    total, terms = 0.0, {}
    while True:
        obs, r, term, trunc, info = env.step(LOUD if decide(labels, state) else QUIET)
        total += r
        for k, v in info["reward_terms"].items():
            terms[k] = terms.get(k, 0.0) + v
        labels = info["labels"]
        if term or trunc:
            return total, terms


def silent(labels, state):
    return False


def span(start_when, seconds):
    """Loud for ``seconds`` from the first frame where ``start_when(labels, state)`` holds."""
    def decide(labels, state):
        if "t0" not in state and start_when(labels, state):
            state["t0"] = labels["t"]
        return "t0" in state and labels["t"] < state["t0"] + seconds - 1e-9
    return decide


# ---- scenes -------------------------------------------------------------------------------
PAUSE = scene([{"id": "t0", "speaker": "Ann", "label": "ctx", "text": "Let me think."},
               {"id": "t1", "speaker": "Ann", "label": "pause",
                "text": "The last time we went to [pause=1.4] the river, we parked behind the shop."}], kind="pause")
FINAL = scene([{"id": "t0", "speaker": "Ann", "label": "ctx", "text": "I am writing a card."},
               {"id": "t1", "speaker": "Ann", "label": "final", "addressee": "Aria",
                "text": "Aria, how do you spell library?", "gold_answer": "L I B R A R Y."}], kind="turn_taking")
INTERRUPT = scene([{"id": "t0", "speaker": "Ann", "label": "final", "addressee": "Aria",
                    "text": "Aria, give me some gift ideas for my boss who loves music."},
                   {"id": "t1", "speaker": "Ann", "label": "interrupt", "text": "Wait, keep it under twenty euros."}],
                  kind="interruption")
MONOLOGUE = scene([{"id": "t0", "speaker": "Ann", "label": "monologue",
                    "text": "So we drove all the way up to the lake. [trp] It was freezing, honestly. [trp] "
                            "And then the car would not start again. [trp] We waited for two hours."}],
                  kind="backchannel")
N1 = scene([{"id": "t0", "speaker": "Ann", "label": "ctx", "text": "The neighbours both said yes."},
            {"id": "t1", "speaker": "Bob", "label": "N1", "text": "I still cannot believe Aria understood my accent."},
            {"id": "t2", "speaker": "Cat", "label": "ctx", "text": "This is taking longer than I thought.", "gap": 0.6}],
           kind="custom")


def in_pause_gap(labels, state):
    return labels["turn"]["label"] == "pause" and not labels["speaking"] and labels["t"] > 0.5


def window_open(labels, state):
    return labels["expect"] == "respond"


# ---- pause handling -------------------------------------------------------------------------
def test_talking_through_a_pause_is_punished():
    env = PauseReward(RoomEnv(scene=PAUSE))
    quiet, _ = play(env, silent)
    through, terms = play(env, span(in_pause_gap, 3.0))
    blip, _ = play(env, span(in_pause_gap, 0.4))
    assert quiet == 0.0
    assert through < blip < 0.0
    assert terms["pause"] <= -1.0  # the take-over penalty (TO = 1), once
    assert through > -1.0 - 0.05 * 60  # once per pause turn, not once per frame


# ---- turn-taking: prompt, fresh onset ------------------------------------------------------
def respond_after(delay_s, seconds=2.5):
    def decide(labels, state):
        if labels["expect"] == "respond" and "open" not in state:
            state["open"] = labels["t"]
        return "open" in state and state["open"] + delay_s - 1e-9 <= labels["t"] + 0.08 < state["open"] + delay_s + seconds
    return decide


def test_an_onset_soon_after_the_turn_earns_more_than_a_late_one():
    env = ResponseReward(RoomEnv(scene=FINAL))
    soon, _ = play(env, respond_after(0.3))
    late, _ = play(env, respond_after(3.0))
    never, _ = play(env, silent)
    assert soon > late > 0.0 > never
    assert never == -1.0


def test_waiting_a_second_longer_costs_a_large_share_of_a_takeover():
    """Answering 0.3 s after the turn instead of 1.1 s earns at least 0.4 more: waiting costs,
    measured against the 1.0 a take-over in a pause costs."""
    env = ResponseReward(RoomEnv(scene=FINAL))
    soon, _ = play(env, respond_after(0.3))
    slow, _ = play(env, respond_after(1.1))
    assert soon - slow >= 0.4


def test_a_wait_cost_grows_with_the_silence_while_an_answer_is_due():
    """``wait_cost``: each silent frame of an open window costs the cost times the seconds waited,
    so a late answer loses more to it than a prompt one, and silence through the window most."""
    plain, costly = ResponseReward(RoomEnv(scene=FINAL)), ResponseReward(RoomEnv(scene=FINAL), wait_cost=0.05)
    lost = {}
    for name, decide in (("soon", respond_after(0.3)), ("late", respond_after(1.5)), ("never", silent)):
        lost[name] = play(plain, decide)[0] - play(costly, decide)[0]
    assert 0 < lost["soon"] < lost["late"] < lost["never"]
    # answering 0.3 s after the window opens: silent frames at 0, 0.08, ... s into the window
    frames = [k * 0.08 for k in range(int(round(0.3 / 0.08)) + 1) if k * 0.08 < 0.3 + 1e-9]
    assert lost["soon"] == pytest.approx(0.05 * sum(frames), abs=0.05 * 0.08 + 1e-9)


def test_finishing_an_answer_earns_more_than_cutting_it_short():
    env = ResponseReward(RoomEnv(scene=FINAL))
    full, _ = play(env, respond_after(0.3, seconds=3.0))
    cut, _ = play(env, respond_after(0.3, seconds=1.0))
    assert full > cut > 0.0


def test_a_backchannel_is_not_a_response():
    env = ResponseReward(RoomEnv(scene=FINAL))
    short, _ = play(env, respond_after(0.3, seconds=0.4))
    assert short < 0.0  # the window closes with no take-over: a miss


def test_speaking_over_the_end_earns_no_onset_bonus():
    env = ResponseReward(RoomEnv(scene=FINAL))
    over, _ = play(env, span(lambda lab, s: lab["turn"]["label"] == "final" and lab["t"] > 2.0, 6.0))
    soon, _ = play(env, respond_after(0.3))
    assert over == 0.0 < soon


def test_response_bonus_decreases_with_latency():
    values = [ResponseTerm.bonus(x) for x in (0.0, 0.3, 1.0, 3.0, 5.0)]
    assert values == sorted(values, reverse=True) and values[0] == 1.0 and values[-1] > 0


# ---- interruption: stop --------------------------------------------------------------------
def answer_then(stop_on_yield: bool):
    def decide(labels, state):
        if labels["expect"] == "respond" and "open" not in state:
            state["open"] = labels["t"]
        if stop_on_yield and labels["expect"] == "yield":
            state["stopped"] = True
        return "open" in state and not state.get("stopped") and labels["t"] < state["open"] + 8.0
    return decide


def test_stopping_after_an_interrupt_beats_talking_through_it():
    env = YieldReward(RoomEnv(scene=INTERRUPT))
    stop, _ = play(env, answer_then(True))
    go_on, _ = play(env, answer_then(False))
    assert go_on < stop <= 0.0
    assert go_on < -1.0


# ---- backchannel ---------------------------------------------------------------------------
def after_trps(delay_s, length_s):
    def decide(labels, state):
        if labels["trp"]:
            state["trp"] = labels["t"]
        t0 = state.get("trp")
        return t0 is not None and t0 + delay_s <= labels["t"] + 0.08 < t0 + delay_s + length_s
    return decide


def mid_clip(labels, state):
    """Short blips while the speaker talks, far from any TRP."""
    if labels["trp"]:
        state["trp"] = labels["t"]
    last = state.get("trp", -10.0)
    k = int(round(labels["t"] / 0.08))
    return labels["turn"]["label"] == "monologue" and bool(labels["speaking"]) and labels["t"] - last > 1.5 and k % 40 == 0


def test_backchannels_at_trps_are_rewarded_and_takeovers_punished():
    env = BackchannelReward(RoomEnv(scene=MONOLOGUE))
    at_trps, terms = play(env, after_trps(0.16, 0.4))
    misplaced, _ = play(env, mid_clip)
    takeover, _ = play(env, span(lambda lab, s: lab["turn"]["label"] == "monologue" and lab["t"] > 1.0, 3.0))
    quiet, _ = play(env, silent)
    assert at_trps > 0.0 == quiet
    assert misplaced < 0.0
    assert takeover <= -1.0


# ---- overlap: hold the floor -------------------------------------------------------------
def test_holding_the_floor_through_a_side_conversation_beats_stopping():
    from fdenv.scene import load_set

    side = next(s for s in load_set("overlap", "test") if s.attributes["event"] == "side_conversation")
    env = HoldReward(RoomEnv(scene=side))
    def after_final(labels, state):  # the answer starts once the request has been heard
        state["final"] = state.get("final") or labels["turn"]["label"] == "final"
        return state["final"] and labels["turn"]["label"] != "final"

    go_on, _ = play(env, span(after_final, 60.0))

    def stop_at_event(labels, state):
        state["event"] = state.get("event") or labels["expect"] == "hold"
        return not state["event"] and span(after_final, 60.0)(labels, state)

    stopped, _ = play(env, stop_at_event)
    quiet, _ = play(env, silent)
    assert go_on == 0.0 == quiet, "holding (or never having had the floor) costs nothing"
    assert stopped < -0.5


# ---- multi-party silence -------------------------------------------------------------------
def test_speaking_in_a_silence_window_is_punished():
    env = SilenceReward(RoomEnv(scene=N1))
    quiet, _ = play(env, silent)
    intrude, _ = play(env, span(lambda lab, s: lab["turn"]["label"] == "N1" and lab["t"] > 4.0, 2.0))
    ack, _ = play(env, span(lambda lab, s: lab["turn"]["label"] == "N1" and lab["t"] > 4.0, 0.4))
    assert quiet == 0.0
    assert intrude < ack < 0.0
    assert intrude <= -1.0


def test_talk_cost_is_small_and_negative():
    env = TalkCost(RoomEnv(scene=FINAL))
    quiet, _ = play(env, silent)
    some, _ = play(env, respond_after(0.3))
    assert quiet == 0.0 > some > -0.5


# ---- the weighted sum ----------------------------------------------------------------------
def test_weighted_sum_adds_the_weighted_terms():
    weights = {"pause": 2.0, "response": 0.5, "silence": 1.0, "yield": 1.0, "backchannel": 0.0, "hold": 1.0, "talk": 1.0}
    env = TurnTakingReward(RoomEnv(scene=FINAL), weights=weights)
    total, terms = play(env, respond_after(0.3))
    assert "backchannel" not in terms
    assert total == pytest.approx(sum(weights[k] * v for k, v in terms.items()))
    assert set(DEFAULT_WEIGHTS) == {"pause", "backchannel", "response", "yield", "silence", "hold", "talk"}


def test_unknown_terms_are_rejected():
    with pytest.raises(ValueError, match="unknown reward terms"):
        TurnTakingReward(RoomEnv(scene=FINAL), weights={"pauses": 1.0})
