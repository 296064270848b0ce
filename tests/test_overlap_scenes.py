"""The overlap set (after Full-Duplex-Bench v1.5): scenes, the event on the assistant's own
speaking time, the ``hold`` label, the background talker's level. Real audio through the env."""

from __future__ import annotations

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import fdenv  # noqa: F401  (registers the ids)
from fdenv.run import run_episode
from fdenv.scene import load_set
from fdenv.scene.generate.overlap import EVENTS
from fdenv.sim.behaviour import EVENT_AFTER_S, make_behaviour
from fdenv.sim.env import RoomEnv
from fdenv.sim.scheduler import SchedulerConfig
from fdenv_agents import ScriptedAgent

SR = 16000


@pytest.fixture(scope="module")
def scenes():
    return load_set("overlap")


def test_set_sizes_events_and_structure(scenes):
    events = Counter(s.attributes["event"] for s in scenes)
    assert set(events) == set(EVENTS) and min(events.values()) >= 100
    for split in ("train", "val", "test"):
        per = Counter(s.attributes["event"] for s in load_set("overlap", split))
        assert max(per.values()) - min(per.values()) <= 1, (split, per)
    for s in scenes:
        labels = [t.label for t in s.turns]
        i = labels.index("final")
        final, event = s.turns[i], s.attributes["event"]
        assert len(final.gold_answer.split()) >= 45, "the answer must be long (8 s or more spoken)"
        after = labels[i + 1:]
        assert after == {"interruption": ["interrupt"], "backchannel": ["bc"], "side_conversation": ["side", "side"],
                         "background": ["background"]}[event], (s.id, after)
        if event == "interruption":
            assert s.turns[i + 1].gold_answer
        if event == "background":
            tv = s.speaker(s.turns[i + 1].speaker)
            assert tv.name in ("TV", "Radio") and -12 <= tv.level_db <= -6
        if event == "side_conversation":
            a, b = s.turns[i + 1], s.turns[i + 2]
            assert a.addressee == b.speaker and b.addressee == a.speaker and final.speaker in (a.speaker, b.speaker)


def test_the_id_plays_the_set():
    env = gym.make("fdenv/Overlap-v0", split="test")
    assert [s.id for s in env.unwrapped.scenes] == [s.id for s in load_set("overlap", "test")]


def test_event_point_is_uniform_on_1_to_4_s_and_keyed():
    cfg = SchedulerConfig()
    draws = [make_behaviour("paper", cfg, seed, "overlap-0001").event_after_s(1) for seed in range(3000)]
    assert min(draws) >= EVENT_AFTER_S[0] and max(draws) <= EVENT_AFTER_S[1]
    assert stats.kstest(draws, stats.uniform(loc=1.0, scale=3.0).cdf).pvalue > 1e-3
    natural = [make_behaviour("natural", cfg, seed, "overlap-0001").event_after_s(1) for seed in range(50)]
    assert natural == draws[:50], "both profiles meet the same event points"
    other = [make_behaviour("paper", cfg, seed, "overlap-0002").event_after_s(1) for seed in range(50)]
    assert other != draws[:50]


def _scene(event):
    return next(s for s in load_set("overlap", "test") if s.attributes["event"] == event)


def _tone(seconds, amp=0.1):
    t = np.arange(int(seconds * SR)) / SR
    return (amp * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def _run(scene, events, seed=3, behaviour="paper", **kw):
    env = RoomEnv(scene=scene, behaviour=behaviour, **kw)
    labels = []
    agent = ScriptedAgent(events, on_labels=lambda a, lab: labels.append(lab))
    return run_episode(env, agent, seed=seed).record, labels


def _played(record, label):
    return [t for t in record.turns if t.label == label and t.id.startswith("t")]


def test_event_starts_after_drawn_speaking_time():
    scene = _scene("backchannel")
    record, _ = _run(scene, [(0.0, _tone(60.0))])  # speaks from the start, through everything
    final = _played(record, "final")[0]
    bc = _played(record, "bc")[0]
    i = [t.label for t in scene.turns].index("bc")
    d = make_behaviour("paper", SchedulerConfig(), record.seed, scene.id).event_after_s(i)
    assert 1.0 <= d <= 4.0
    assert bc.start == pytest.approx(final.end + d, abs=1.5 / SR)


def test_event_after_a_short_answer_and_without_one():
    scene = _scene("side_conversation")
    silent, _ = _run(scene, [])
    e = _played(silent, "final")[0].end
    assert _played(silent, "side")[0].start == pytest.approx(e + SchedulerConfig().interrupt_timeout_s, abs=1.5 / SR)
    # a 0.5 s answer that ends: the event comes once the assistant has been idle for response_idle_s
    probe, _ = _run(scene, [])
    e = _played(probe, "final")[0].end
    short, _ = _run(scene, [(e + 0.5, _tone(0.5))])
    side = _played(short, "side")
    loud_end = e + 1.0
    assert loud_end + 0.9 <= side[0].start <= loud_end + 1.0 + 0.24 + 0.16
    assert side[1].start >= side[0].end, "the second side turn answers the first"


def test_hold_and_yield_labels():
    for event, label, expect in (("backchannel", "bc", "hold"), ("side_conversation", "side", "hold"),
                                 ("background", "background", "hold"), ("interruption", "interrupt", "yield")):
        record, labels = _run(_scene(event), [(0.0, _tone(60.0))])
        for turn in _played(record, label):
            inside = [lab for lab in labels if turn.start <= lab["t"] and lab["t"] + 0.08 <= turn.end]
            assert inside and all(lab["expect"] == expect for lab in inside), (event, Counter(x["expect"] for x in inside))
        if expect == "hold":
            end = max(t.end for t in _played(record, label))
            after = [lab["expect"] for lab in labels if end + 0.08 <= lab["t"] < end + 2.0]
            assert after and set(after) == {"respond"}, "after the event: go on with the answer"


def test_background_talker_plays_at_its_level_and_never_backchannels():
    scene = _scene("background")
    tv = next(sp for sp in scene.speakers if sp.name in ("TV", "Radio"))
    record, _ = _run(scene, [(0.0, _tone(60.0))], behaviour="natural")
    turn = _played(record, "background")[0]
    clip = [c for c in record.clips if c.turn_id == turn.id][0]
    env = RoomEnv(scene=scene)
    from fdenv.render import voice_map

    rendered = env._renderer.clip(clip.text, voice_map(scene, env._renderer)[tv.name])
    a = int(round(clip.start * SR))
    mic = record.mic0[a : a + len(rendered)]
    assert np.allclose(mic, rendered * np.float32(10 ** (tv.level_db / 20)), atol=1e-6)
    assert all(t.speaker != tv.name for t in record.turns if not t.id.startswith("t")), "a TV does not backchannel"
