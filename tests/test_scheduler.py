"""The reactive rules of SPEC 3 under `behaviour="paper"` (its exact constants), each shown with a
scripted agent and checked to the sample."""

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
    rec, _ = rollout(RoomEnv(behaviour="paper", scene=REQUEST), SilentAgent())
    t, nxt = turn_by_label(rec, "T"), rec.turns[2]
    assert nxt.start == pytest.approx(t.end + 5.0, abs=1 / SR)


@pytest.mark.parametrize("delay,length", [(0.5, 3.0), (1.7, 0.6), (4.5, 2.0)])
def test_humans_wait_for_an_answer_then_1s_of_silence(delay, length):
    env = RoomEnv(behaviour="paper", scene=REQUEST)
    rec0, _ = rollout(env, SilentAgent())
    e = turn_by_label(rec0, "T").end
    agent = ScriptedAgent([(e + delay, tone(length))])
    rec, _ = rollout(env, agent)
    assert turn_by_label(rec, "T").end == e  # the script before the wait does not move
    assert rec.turns[2].start == pytest.approx(idle_restart(e + delay + length), abs=1 / SR)


def test_answer_already_under_way_at_the_request_end_counts():
    env = RoomEnv(behaviour="paper", scene=REQUEST)
    e = turn_by_label(rollout(env, SilentAgent())[0], "T").end
    rec, _ = rollout(env, ScriptedAgent([(e - 1.0, tone(2.0))]))
    assert rec.turns[2].start == pytest.approx(idle_restart(e + 1.0), abs=1 / SR)


def test_a_never_ending_answer_is_cut_by_max_response():
    env = RoomEnv(behaviour="paper", scene=REQUEST, scheduler={"max_response_s": 8.0})
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
    rec, _ = rollout(RoomEnv(behaviour="paper", scene=N4), agent)
    q, r = turn_by_label(rec, "N4Q"), turn_by_label(rec, "N4R")
    assert r.start == pytest.approx(q.end + 3.0, abs=1 / SR)


INTERRUPTION = scene([
    {"speaker": "Ann", "text": "Can you tell me about the history of trains?", "label": "final"},
    {"speaker": "Ann", "text": "Wait, only the steam ones please.", "label": "interrupt"},
], kind="interruption", speakers=("Ann",))


def final_end(env):
    return turn_by_label(rollout(env, SilentAgent())[0], "final").end


def test_interrupt_at_6s_when_the_agent_stays_silent():
    env = RoomEnv(behaviour="paper", scene=INTERRUPTION)
    rec, _ = rollout(env, SilentAgent())
    assert turn_by_label(rec, "interrupt").start == pytest.approx(turn_by_label(rec, "final").end + 6.0, abs=1 / SR)


def test_interrupt_after_1_5s_of_continuous_speech():
    env = RoomEnv(behaviour="paper", scene=INTERRUPTION)
    e = final_end(env)
    onset = math.ceil((e + 0.4) * SR / N) * N / SR  # frame-aligned, so loud time is exact
    rec, _ = rollout(env, ScriptedAgent([(onset, tone(6.0))]))
    assert turn_by_label(rec, "interrupt").start == pytest.approx(onset + 1.5, abs=1 / SR)


def test_interrupt_after_1_5s_of_speech_in_short_bursts():
    env = RoomEnv(behaviour="paper", scene=INTERRUPTION)
    e = final_end(env)
    first = math.ceil((e + 0.4) * SR / N) * N / SR
    burst = 6 * N / SR  # 0.48 s, gaps 0.48 s: never 1 s of inactivity
    starts = [first + i * 2 * burst for i in range(6)]
    rec, _ = rollout(env, ScriptedAgent([(s, tone(burst)) for s in starts]))
    # 3 bursts = 18 loud frames = 1.44 s; the 1.5 s mark is 60 ms into the 4th burst.
    assert turn_by_label(rec, "interrupt").start == pytest.approx(starts[3] + 0.06, abs=1 / SR)


def test_interrupt_after_a_short_answer_that_ended():
    env = RoomEnv(behaviour="paper", scene=INTERRUPTION)
    e = final_end(env)
    rec, _ = rollout(env, ScriptedAgent([(e + 0.5, tone(0.7))]))
    assert turn_by_label(rec, "interrupt").start == pytest.approx(idle_restart(e + 1.2), abs=1 / SR)


PAUSE_AND_MONOLOGUE = scene([
    {"speaker": "Ann", "text": "So I was thinking [pause=1.2] that we could go [pause=0.7] to the coast.", "label": "pause"},
    {"speaker": "Bob", "text": "My week was long. [trp] First the car broke down. [trp] Then it rained all day.", "label": "monologue"},
    {"speaker": "Ann", "text": "What do you think?", "label": "final"},
])


def test_pause_and_monologue_turns_are_played_as_scripted():
    env = RoomEnv(behaviour="paper", scene=PAUSE_AND_MONOLOGUE)
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
    env = RoomEnv(behaviour="paper", scene=sc)
    rec, _ = rollout(env, agent)
    latest = max(WINDOWS.get(t.label, lambda t: t.end)(t) for t in rec.turns)
    assert rec.duration >= latest + 2.0 - 1e-9
    assert rec.duration < latest + 2.0 + env._sched_cfg.max_response_s + 0.2


LAST_REQUEST = scene([
    {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, how much did we spend?", "label": "T", "gold_answer": "48"},
])


@pytest.mark.parametrize("breath", [0.4, 0.9])
def test_a_breath_inside_the_answer_does_not_end_the_episode(breath):
    # The scene ends with T; the answer runs from e + 1 s to e + 12 s with a short breath at
    # e + 6 s. The response ends after 1 s of inactivity (SPEC 3), so the episode keeps the
    # whole answer and ends tail_s after it.
    env = RoomEnv(behaviour="paper", scene=LAST_REQUEST)
    e = turn_by_label(rollout(env, SilentAgent())[0], "T").end
    rec, _ = rollout(env, ScriptedAgent([(e + 1.0, tone(5.0)), (e + 6.0 + breath, tone(6.0 - breath))]))
    end_of_answer = idle_restart(e + 12.0) - 1.0  # the last loud frame + the 240 ms hold
    assert rec.duration == pytest.approx(end_of_answer + 2.0, abs=N / SR)
    assert np.abs(rec.assistant[int((e + 11.9) * SR):int((e + 12.0) * SR)]).max() > 0


def test_a_pause_of_a_second_ends_the_response():
    env = RoomEnv(behaviour="paper", scene=LAST_REQUEST)
    e = turn_by_label(rollout(env, SilentAgent())[0], "T").end
    rec, _ = rollout(env, ScriptedAgent([(e + 1.0, tone(5.0)), (e + 8.0, tone(5.0))]))
    assert rec.duration == pytest.approx(idle_restart(e + 6.0) - 1.0 + 2.0, abs=N / SR)


def test_frame_placement_of_actions_in_the_assistant_track():
    env = RoomEnv(behaviour="paper", scene=REQUEST)
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


def test_interrupt_rule_reached_exactly_at_a_frame_end():
    # 1.5 s of loud audio from e, where 1.5 s after e falls on a frame boundary: the interrupt
    # starts at e + 1.5 s (not at the idle rule, 1.24 s later)
    from fdenv.sim.detector import ActivityDetector
    from fdenv.sim.scheduler import InterruptWatch

    for e in (320, 100):  # (e + 24000) % 1280 == 0, and a control
        w, det = InterruptWatch(e, N, 24000, 96000, 16000), ActivityDetector(N, SR)
        x = np.zeros(N * 100, np.float32)
        x[e:e + 24000] = 0.1
        for j in range(100):
            active = det.update(x[j * N:(j + 1) * N])
            start = w.update(j, det.loud, active, bool(det.onsets) and det.onsets[-1] == j)
            if start is not None:
                break
        assert start == e + 24000, e


def test_silence_and_yield_windows_are_closed_at_their_end():
    # an N1 window (to the turn's end + 1 s) and an N4R yield window that end exactly where a
    # frame starts still label that frame
    from fdenv.sim.labels import Labeler

    sc = scene([{"speaker": "Ann", "text": "Hey Siri, set a timer.", "label": "N1"}])
    lab = Labeler(sc, SR, N)
    lab.add_turn(0, 0, 9600, [])  # window end 9600 + 16000 = 25600 = frame 20's start
    assert [lab.frame(j, False, False)["expect"] for j in (19, 20, 21)] == ["silent", "silent", "free"]
    lab = Labeler(N4, SR, N)
    lab.add_turn(2, 960, 20000, [])  # yield to max(20000, 960 + 32000) + 8000 = 40960 = frame 32
    assert [lab.frame(j, False, False)["expect"] for j in (31, 32, 33)] == ["yield", "yield", "free"]


def test_the_activity_detector_is_minus_45_dbfs_with_a_240_ms_hold():
    from fdenv.sim.detector import ActivityDetector

    def frame(dbfs):  # a square wave: its RMS is its amplitude
        a = 10 ** (dbfs / 20)
        return np.where(np.arange(N) % 2 == 0, a, -a).astype(np.float32)

    det = ActivityDetector(N, SR)
    states = [det.update(f) for f in [frame(-45.1), frame(-44.9)] + [frame(-45.1)] * 5]
    assert states == [False, True, True, True, True, False, False]  # held for 3 frames = 240 ms
    assert det.onsets == [1]


def test_a_turn_without_a_gap_starts_0_3_s_after_the_previous_one_and_the_episode_ends_2_s_after():
    sc = scene([
        {"speaker": "Ann", "text": "We bought four tickets.", "label": "ctx"},
        {"speaker": "Bob", "text": "That was a good idea.", "label": "ctx"},
    ])
    rec, _ = rollout(RoomEnv(behaviour="paper", scene=sc), SilentAgent())
    first, second = rec.turns
    assert round(second.start * SR) - round(first.end * SR) == round(0.3 * SR)  # SPEC 3's default gap
    assert rec.n_frames == math.ceil((round(second.end * SR) + 2 * SR) / N)  # tail_s = 2 s after the last clip
