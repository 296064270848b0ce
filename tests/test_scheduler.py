"""The reactive rules of SPEC 3, each shown with a scripted agent and checked to the sample."""

import math

import numpy as np
import pytest

from fdenv.sim.env import RoomEnv
from fdenv_agents import ScriptedAgent, SilentAgent, TalkerAgent

from .helpers import rollout, scene, tone

SR, N = 16000, 1280


def turn_by_label(record, label, nth=0):
    return [t for t in record.turns if t.label == label][nth]


def idle_restart(answer_end_s: float) -> float:
    """When humans go on after an answer ending at ``answer_end_s`` (source axis, no room):
    the last loud frame, plus the 240 ms hold (3 frames), plus 1.0 s of inactivity."""
    last_loud = math.ceil(answer_end_s * SR / N) - 1
    return (last_loud + 4) * N / SR + 1.0


REQUEST = scene([
    {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, how much did we spend?", "label": "T", "gold_answer": "48"},
    {"speaker": "Cat", "text": "Anyway, let us go.", "label": "ctx"},
])


def test_humans_go_on_5s_after_an_unanswered_request():
    rec, _ = rollout(RoomEnv(scene=REQUEST), SilentAgent())
    t, nxt = turn_by_label(rec, "T"), rec.turns[2]
    assert nxt.start == pytest.approx(t.end + 5.0, abs=1 / SR)


@pytest.mark.parametrize("delay,length", [(0.5, 3.0), (1.7, 0.6), (4.5, 2.0)])
def test_humans_wait_for_an_answer_then_1s_of_silence(delay, length):
    env = RoomEnv(scene=REQUEST)
    rec0, _ = rollout(env, SilentAgent())
    e = turn_by_label(rec0, "T").end
    agent = ScriptedAgent([(e + delay, tone(length))])
    rec, _ = rollout(env, agent)
    assert turn_by_label(rec, "T").end == e  # the script before the wait does not move
    assert rec.turns[2].start == pytest.approx(idle_restart(e + delay + length), abs=1 / SR)


def test_answer_already_under_way_at_the_request_end_counts():
    env = RoomEnv(scene=REQUEST)
    e = turn_by_label(rollout(env, SilentAgent())[0], "T").end
    rec, _ = rollout(env, ScriptedAgent([(e - 1.0, tone(2.0))]))
    assert rec.turns[2].start == pytest.approx(idle_restart(e + 1.0), abs=1 / SR)


def test_a_never_ending_answer_is_cut_by_max_response():
    env = RoomEnv(scene=REQUEST, scheduler={"max_response_s": 8.0})
    rec, _ = rollout(env, TalkerAgent())
    t = turn_by_label(rec, "T")
    assert rec.turns[2].start == pytest.approx(t.end + 8.0, abs=1 / SR)


N4 = scene([
    {"speaker": "Ann", "text": "We could go to the lake or the hills.", "label": "ctx"},
    {"id": "q", "speaker": "Ann", "text": "Aria, which one is closer?", "label": "N4Q"},
    {"speaker": "Bob", "text": "The lake is closer, I checked.", "label": "N4R", "resolves": "q"},
], kind="custom")


@pytest.mark.parametrize("agent", [SilentAgent(), TalkerAgent(), ScriptedAgent([(3.0, tone(5.0))])],
                         ids=["silent", "talker", "scripted"])
def test_n4r_starts_3s_after_n4q_whatever_the_agent_does(agent):
    rec, _ = rollout(RoomEnv(scene=N4), agent)
    q, r = turn_by_label(rec, "N4Q"), turn_by_label(rec, "N4R")
    assert r.start == pytest.approx(q.end + 3.0, abs=1 / SR)


INTERRUPTION = scene([
    {"speaker": "Ann", "text": "Can you tell me about the history of trains?", "label": "final"},
    {"speaker": "Ann", "text": "Wait, only the steam ones please.", "label": "interrupt"},
], kind="interruption", speakers=("Ann",))


def final_end(env):
    return turn_by_label(rollout(env, SilentAgent())[0], "final").end


def test_interrupt_at_6s_when_the_agent_stays_silent():
    env = RoomEnv(scene=INTERRUPTION)
    rec, _ = rollout(env, SilentAgent())
    assert turn_by_label(rec, "interrupt").start == pytest.approx(turn_by_label(rec, "final").end + 6.0, abs=1 / SR)


def test_interrupt_after_1_5s_of_continuous_speech():
    env = RoomEnv(scene=INTERRUPTION)
    e = final_end(env)
    onset = math.ceil((e + 0.4) * SR / N) * N / SR  # frame-aligned, so loud time is exact
    rec, _ = rollout(env, ScriptedAgent([(onset, tone(6.0))]))
    assert turn_by_label(rec, "interrupt").start == pytest.approx(onset + 1.5, abs=1 / SR)


def test_interrupt_after_1_5s_of_speech_in_short_bursts():
    env = RoomEnv(scene=INTERRUPTION)
    e = final_end(env)
    first = math.ceil((e + 0.4) * SR / N) * N / SR
    burst = 6 * N / SR  # 0.48 s, gaps 0.48 s: never 1 s of inactivity
    starts = [first + i * 2 * burst for i in range(6)]
    rec, _ = rollout(env, ScriptedAgent([(s, tone(burst)) for s in starts]))
    # 3 bursts = 18 loud frames = 1.44 s; the 1.5 s mark is 60 ms into the 4th burst.
    assert turn_by_label(rec, "interrupt").start == pytest.approx(starts[3] + 0.06, abs=1 / SR)


def test_interrupt_after_a_short_answer_that_ended():
    env = RoomEnv(scene=INTERRUPTION)
    e = final_end(env)
    rec, _ = rollout(env, ScriptedAgent([(e + 0.5, tone(0.7))]))
    assert turn_by_label(rec, "interrupt").start == pytest.approx(idle_restart(e + 1.2), abs=1 / SR)


PAUSE_AND_MONOLOGUE = scene([
    {"speaker": "Ann", "text": "So I was thinking [pause=1.2] that we could go [pause=0.7] to the coast.", "label": "pause"},
    {"speaker": "Bob", "text": "My week was long. [trp] First the car broke down. [trp] Then it rained all day.", "label": "monologue"},
    {"speaker": "Ann", "text": "What do you think?", "label": "final"},
])


def test_pause_and_monologue_turns_are_played_as_scripted():
    env = RoomEnv(scene=PAUSE_AND_MONOLOGUE)
    records = [rollout(env, agent)[0] for agent in (SilentAgent(), TalkerAgent(), ScriptedAgent([(0.5, tone(1.0)), (6.0, tone(0.5))]))]
    for label in ("pause", "monologue"):
        spans = {(turn_by_label(r, label).start, turn_by_label(r, label).end, turn_by_label(r, label).trps) for r in records}
        assert len(spans) == 1, f"{label} turn moved with the agent: {spans}"
    clips = {tuple((c.start, c.end) for c in r.clips if c.turn_id in ("t0", "t1")) for r in records}
    assert len(clips) == 1
    pause = turn_by_label(records[0], "pause")
    pause_clips = [c for c in records[0].clips if c.turn_id == pause.id]
    assert pause_clips[1].start - pause_clips[0].end == pytest.approx(1.2, abs=1 / SR)
    assert pause_clips[2].start - pause_clips[1].end == pytest.approx(0.7, abs=1 / SR)
    mono = turn_by_label(records[0], "monologue")
    assert len(mono.trps) == 2


WINDOWS = {
    "final": lambda t: t.end + 8.0,
    "interrupt": lambda t: t.end + 10.0,
    "T": lambda t: t.end + 5.0,
    "N1": lambda t: t.end + 1.0,
    "N4Q": lambda t: t.end + 3.0,
    "N4R": lambda t: max(t.end, t.start + 2.0) + 0.5,
}


@pytest.mark.parametrize("sc", [REQUEST, N4, INTERRUPTION, scene([
    {"speaker": "Ann", "text": "Hey Siri, set a timer.", "label": "N2"},
    {"speaker": "Bob", "text": "Aria must be tired of us.", "label": "N1"},
])], ids=["T", "N4", "interrupt", "N1"])
@pytest.mark.parametrize("agent", [SilentAgent(), TalkerAgent()], ids=["silent", "talker"])
def test_episode_ends_only_after_every_scoring_window(sc, agent):
    env = RoomEnv(scene=sc)
    rec, _ = rollout(env, agent)
    latest = max(WINDOWS.get(t.label, lambda t: t.end)(t) for t in rec.turns)
    assert rec.duration >= latest + 2.0 - 1e-9
    assert rec.duration < latest + 2.0 + env._sched_cfg.max_response_s + 0.2


def test_frame_placement_of_actions_in_the_assistant_track():
    env = RoomEnv(scene=REQUEST)
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=0)
    actions = []
    while True:
        a = rng.uniform(-0.5, 0.5, N).astype(np.float32)
        actions.append(a)
        obs, _, term, _, info = env.step(a)
        if term:
            break
    track = info["record"].assistant
    assert np.all(track[:N] == 0)
    for k, a in enumerate(actions):
        assert np.array_equal(track[(k + 1) * N:(k + 2) * N], a)
    assert len(track) == (len(actions) + 1) * N
