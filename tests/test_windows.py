"""The timing windows of SPEC 2, 3, 6 and 7: the paper's windows written out as numbers, and the
scheduler, the labels and the scorers agreeing on them when a scheduler knob moves (`behaviour="paper"`,
where each knob is exact; the natural profile draws around them: test_behaviour.py)."""

import math

import pytest

from fdenv import windows as W
from fdenv.record import PlayedTurn
from fdenv.score import mpe as M
from fdenv.sim.env import RoomEnv
from fdenv_agents import ScriptedAgent, SilentAgent

from .helpers import rollout, scene, tone

SR, N = 16000, 1280


def played(label, start, end, id=None, **kw):
    return PlayedTurn(id=id or f"{label}@{start}", speaker="Ann", label=label, start=start, end=end, text="x", **kw)


# ------------------------------------------------------------------ SPEC's numbers, written out


def test_paper_windows_on_a_played_timeline():
    turns = [
        played("pause", 0.5, 2.0),
        played("monologue", 2.5, 9.0),
        played("final", 9.5, 11.0),
        played("interrupt", 12.0, 13.5),
        played("N1", 20.0, 21.0),  # + 1 s, no cut
        played("N2", 23.0, 24.0),  # + 1 s would be 25.0; the T ending at 24.6 cuts it
        played("T", 24.2, 24.6),
        played("N4Q", 30.0, 31.0, id="q"),
        played("N4R", 34.0, 35.0, resolves="q"),  # yield [36, max(35, 36) + 0.5]
        played("N4Q", 40.0, 41.0, id="q2"),
        played("N4R", 44.0, 47.0, resolves="q2"),  # yield [46, max(47, 46) + 0.5]
    ]
    got = [(w.name, w.start, w.end) for w in W.played_windows(turns)]
    assert got == [
        ("pause", 0.5, 2.0),
        ("backchannel", 2.5, 9.0),
        ("turn_taking", 11.0, 19.0),
        ("interruption", 12.0, 23.5),
        ("silence", 20.0, 22.0),
        ("silence", 23.0, 24.6),
        ("presence", 24.6, 29.6),
        ("n4_window", 30.0, 34.0),
        ("n4_gap", 31.0, 34.0),
        ("yield", 36.0, 36.5),
        ("n4_window", 40.0, 44.0),
        ("n4_gap", 41.0, 44.0),
        ("yield", 46.0, 47.5),
    ]


@pytest.mark.parametrize("label,start,end,close", [
    ("final", 1.0, 2.0, 10.0), ("interrupt", 1.0, 2.0, 12.0), ("T", 1.0, 2.0, 7.0), ("N1", 1.0, 2.0, 3.0),
    ("N3", 1.0, 2.0, 3.0), ("N4Q", 1.0, 2.0, 5.0), ("N4R", 1.0, 2.0, 3.5), ("N4R", 1.0, 5.0, 5.5),
    ("ctx", 1.0, 2.0, 2.0), ("pause", 1.0, 2.0, 2.0),
])
def test_episode_end_rule_per_label(label, start, end, close):
    assert W.close_of(label, start, end) == close
    # in samples, as the scheduler counts
    s = lambda x: int(round(x * SR))  # noqa: E731
    assert W.close_of(label, s(start), s(end), s=s) == s(close)


def test_n4_windows_follow_the_n4r_delay_knob():
    assert W.close_of("N4Q", 1.0, 2.0, {"n4r_delay_s": 4.5}) == 6.5
    assert W.knob({"n4r_delay_s": 4.5}, "response_wait_s") == 5.0  # a missing knob is SPEC 3's default


def test_every_rule_names_where_it_opens_closes_and_what_moves_it():
    names = {r.name for r in W.RULES}
    assert {"pause", "backchannel", "turn_taking", "interruption", "presence", "silence", "n4_window", "n4_gap",
            "yield", "respond", "wait", "n4r_start", "interrupt_start", "episode_end"} <= names
    for r in W.RULES:
        assert r.opens and r.closes and r.spec and r.used_by, r


# ------------------------------------------------------------------ knobs: scheduler, labels, scorers agree

REQUEST = scene([
    {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, how much did we spend?", "label": "T", "gold_answer": "48"},
    {"speaker": "Cat", "text": "Anyway, let us go.", "label": "ctx"},
])

N4 = scene([
    {"speaker": "Ann", "text": "Hey Siri, set a timer.", "label": "N2"},
    {"id": "q", "speaker": "Ann", "text": "Aria, which one is closer?", "label": "N4Q"},
    {"speaker": "Bob", "text": "The lake is closer, I checked.", "label": "N4R", "resolves": "q"},
], kind="custom")


def by_label(rec, label):
    return next(t for t in rec.turns if t.label == label)


def expect_at(frames, t):
    """The ``expect`` label of the frame that contains time t."""
    return frames[int(t * SR) // N][1]["expect"]


def frames_in(frames, a, b):
    """Labels of the frames lying wholly inside [a, b)."""
    return [lab for _, lab in frames if lab["t"] >= a and lab["t"] + N / SR <= b]


@pytest.mark.parametrize("wait", [3.0, 5.0, 8.0])
def test_response_wait_moves_the_scheduler_and_the_respond_label_together(wait):
    rec, frames = rollout(RoomEnv(behaviour="paper", scene=REQUEST, scheduler={"response_wait_s": wait}), SilentAgent())
    t, nxt = by_label(rec, "T"), rec.turns[2]
    assert nxt.start == pytest.approx(t.end + wait, abs=1 / SR)  # the humans wait `wait` s
    # `respond` from the end of T until the humans go on: never `free` while they wait
    waiting = frames_in(frames, t.end, t.end + wait)
    assert waiting and {lab["expect"] for lab in waiting} == {"respond"}
    after = frames_in(frames, nxt.end, rec.duration)
    assert after and {lab["expect"] for lab in after} == {"free"}
    # the scorer's presence window is SPEC 7's [e, e + 5 s] whatever the humans do
    presence = [w for w in W.played_windows(rec.turns) if w.name == "presence"]
    assert [(w.start, w.end) for w in presence] == [(t.end, t.end + 5.0)]
    assert rec.duration >= max(t.end + 5.0, nxt.end) + 2.0 - 1e-9


@pytest.mark.parametrize("idle", [0.6, 1.8])
def test_response_idle_ends_the_wait_and_the_respond_label_together(idle):
    env = RoomEnv(behaviour="paper", scene=REQUEST, scheduler={"response_idle_s": idle})
    e = by_label(rollout(env, SilentAgent())[0], "T").end
    rec, frames = rollout(env, ScriptedAgent([(e + 0.5, tone(1.0))]))
    last_loud = math.ceil((e + 1.5) * SR / N) - 1
    restart = (last_loud + 4) * N / SR + idle  # + the 240 ms hold, + `idle` of inactivity
    assert rec.turns[2].start == pytest.approx(restart, abs=1 / SR)
    assert {lab["expect"] for lab in frames_in(frames, e, restart)} == {"respond"}
    assert expect_at(frames, restart + 0.1) != "respond"


@pytest.mark.parametrize("delay", [2.0, 3.0, 5.0])
def test_n4r_delay_moves_the_answer_the_labels_and_the_mpe_gap_together(delay):
    rec, frames = rollout(RoomEnv(behaviour="paper", scene=N4, scheduler={"n4r_delay_s": delay}), SilentAgent())
    q, r = by_label(rec, "N4Q"), by_label(rec, "N4R")
    assert r.start == pytest.approx(q.end + delay, abs=1 / SR)
    # labels: the gap and the first 2 s of N4R are `free`, then `yield` to max(r_end, r + 2) + 0.5
    assert {lab["expect"] for lab in frames_in(frames, q.end + 0.1, r.start + 2.0)} == {"free"}
    y_end = max(r.end, r.start + 2.0) + 0.5
    assert {lab["expect"] for lab in frames_in(frames, r.start + 2.0 + 0.1, y_end)} == {"yield"}
    assert expect_at(frames, y_end + 0.1) == "free"
    # the scorer's gap before the answer is (q, r]: an answer starting just before r is eligible
    wins = {w.name: (w.start, w.end) for w in W.played_windows(rec.turns)}
    assert wins["n4_gap"] == (q.end, r.start)
    assert wins["yield"] == (r.start + 2.0, y_end)
    ack = lambda s: None  # noqa: E731  (never asked: nothing intrudes)
    late = M.n4_measures([(r.start - 0.2, r.start + 1.0)], q.start, q.end, r.start, r.end, ack)
    assert late["eligible"] and late["yielded"] is True
    after = M.n4_measures([(r.start + 0.05, r.start + 1.0)], q.start, q.end, r.start, r.end, ack)
    assert not after["eligible"]
    assert rec.duration >= y_end + 2.0 - 1e-9


INTERRUPTION = scene([
    {"speaker": "Ann", "text": "Can you tell me about the history of trains?", "label": "final"},
    {"speaker": "Ann", "text": "Wait, only the steam ones please.", "label": "interrupt"},
], kind="interruption", speakers=("Ann",))


@pytest.mark.parametrize("after", [0.8, 2.4])
def test_interrupt_after_moves_the_interrupt_and_its_windows(after):
    env = RoomEnv(behaviour="paper", scene=INTERRUPTION, scheduler={"interrupt_after_s": after})
    e = by_label(rollout(env, SilentAgent())[0], "final").end
    onset = math.ceil((e + 0.4) * SR / N) * N / SR
    rec, frames = rollout(env, ScriptedAgent([(onset, tone(6.0))]))
    it = by_label(rec, "interrupt")
    assert it.start == pytest.approx(onset + after, abs=1 / SR)
    assert {lab["expect"] for lab in frames_in(frames, it.start, it.end)} == {"yield"}
    wins = {w.name: (w.start, w.end) for w in W.played_windows(rec.turns)}
    assert wins["interruption"] == (it.start, it.end + 10.0)
    assert rec.duration >= it.end + 10.0 + 2.0 - 1e-9


def test_interrupt_timeout_moves_the_interrupt():
    rec, _ = rollout(RoomEnv(behaviour="paper", scene=INTERRUPTION, scheduler={"interrupt_timeout_s": 3.5}), SilentAgent())
    assert by_label(rec, "interrupt").start == pytest.approx(by_label(rec, "final").end + 3.5, abs=1 / SR)


@pytest.mark.parametrize("tail", [0.5, 4.0])
def test_tail_follows_the_last_window(tail):
    rec, frames = rollout(RoomEnv(behaviour="paper", scene=N4, scheduler={"tail_s": tail}), SilentAgent())
    last = max(w.end for w in W.played_windows(rec.turns))
    assert last + tail - 1e-9 <= rec.duration < last + tail + 2 * N / SR
    # the silence window of N2 is the labels' `silent` stretch
    n2 = by_label(rec, "N2")
    sil = next(w for w in W.played_windows(rec.turns) if w.name == "silence")
    assert (sil.start, sil.end) == (n2.start, n2.end + 1.0)
    assert {lab["expect"] for lab in frames_in(frames, sil.start, sil.end)} == {"silent"}
