"""Behaviour profiles: the natural humans' timings against their targets (docs/behaviour.md), the
keys of their draws, and determinism. The paper profile's exact constants: test_scheduler.py."""

import numpy as np
import pytest
from scipy import stats

from fdenv.sim.behaviour import FTO, PAUSE, NaturalBehaviour, check_profile, keyed_uniform
from fdenv.sim.env import RoomEnv
from fdenv.sim.scheduler import Scheduler, SchedulerConfig
from fdenv_agents import ScriptedAgent, SilentAgent, TalkerAgent

from .helpers import rollout, scene, tone

SR, N = 16000, 1280
CFG = SchedulerConfig()
DRAWS = 800


def natural(seed, scene_id="s"):
    return NaturalBehaviour(CFG, seed, scene_id)


def test_keyed_uniforms_are_uniform_and_independent_of_each_key_part():
    u = np.array([keyed_uniform(s, "scene", "gap", 3) for s in range(DRAWS)])
    assert stats.kstest(u, "uniform").pvalue > 0.01
    by_scene = np.array([keyed_uniform(7, f"scene-{k}", "gap", 3) for k in range(DRAWS)])
    assert stats.kstest(by_scene, "uniform").pvalue > 0.01
    # each part of the key moves the draw
    base = keyed_uniform(1, "a", "gap", 2)
    assert len({base, keyed_uniform(2, "a", "gap", 2), keyed_uniform(1, "b", "gap", 2),
                keyed_uniform(1, "a", "n4r_delay", 2), keyed_uniform(1, "a", "gap", 3)}) == 5
    assert keyed_uniform(1, "a", "gap", 2) == base  # and nothing else does


def test_floor_transfer_offsets_match_the_cited_numbers():
    x = np.array([FTO.ppf(keyed_uniform(s, "fto", "gap", 1)) for s in range(20000)])
    assert stats.kstest(x[:DRAWS], np.vectorize(FTO.cdf)).pvalue > 0.01
    overlap = (x < 0).mean()
    assert 0.37 <= overlap <= 0.43  # about 40 % overlaps (Heldner & Edlund 2010)
    counts, edges = np.histogram(x, bins=np.arange(-1.5, 2.51, 0.1))
    mode = edges[np.argmax(counts)]
    assert 0.05 <= mode + 0.05 <= 0.35  # the modal 100 ms bin is around +200 ms (Levinson & Torreira 2015)
    assert 0.05 <= np.median(x) <= 0.3


@pytest.mark.parametrize("method,low,median,high", [
    ("n4r_delay_s", 2.0, 3.0, 4.5),
    ("interrupt_after_s", 0.6, 1.5, 4.05),
    ("response_wait_s", 5.0, 6.0, 12.0),
    ("interrupt_timeout_s", 5.0, 6.0, 12.0),
    ("response_idle_s", 0.25, 1.0, 3.0),
])
def test_each_drawn_reaction_is_centred_on_the_paper_and_varies(method, low, median, high):
    x = np.array([getattr(natural(s), method)(4) for s in range(DRAWS)])
    assert x.min() >= low - 1e-9 and x.max() <= high + 1e-9
    assert abs(np.median(x) - median) < 0.08 * median  # centred on the paper's constant
    q10, q90 = np.quantile(x, [0.1, 0.9])
    assert q90 - q10 > 0.3 * median * (0.5 if method == "response_wait_s" or method == "interrupt_timeout_s" else 1)


def test_reaction_draws_follow_their_declared_distributions():
    from fdenv.sim.behaviour import LogNormal, Normal

    n4r = np.array([natural(s).n4r_delay_s(2) for s in range(DRAWS)])
    assert stats.kstest(n4r, np.vectorize(Normal(3.0, 0.5, 2.0, 4.5).cdf)).pvalue > 0.01
    barge = np.array([natural(s).interrupt_after_s(2) for s in range(DRAWS)])
    assert stats.kstest(barge, np.vectorize(LogNormal(1.5, 0.35, 0.6, 4.05).cdf)).pvalue > 0.01
    wait = np.array([natural(s).response_wait_s(2) for s in range(DRAWS)])
    assert stats.kstest(wait, np.vectorize(LogNormal(1.0, 0.6, shift=5.0).cdf)).pvalue > 0.01
    pause = np.array([PAUSE.ppf(keyed_uniform(s, "p", "gap", 1)) for s in range(DRAWS)])
    assert stats.kstest(pause, np.vectorize(PAUSE.cdf)).pvalue > 0.01


CHAT = scene([
    {"speaker": "Ann", "text": "one", "label": "ctx"},
    {"speaker": "Bob", "text": "two", "label": "ctx"},
    {"speaker": "Cat", "text": "three", "label": "ctx"},
    {"speaker": "Ann", "text": "four", "label": "ctx"},
    {"speaker": "Ann", "text": "five", "label": "ctx"},
    {"speaker": "Bob", "text": "six [pause=0.8] more", "label": "pause"},
    {"speaker": "Cat", "text": "seven", "label": "ctx"},
])


def played(sched_scene, durations_s, behaviour):
    durations = [[int(d * SR)] * len(t.pieces) for d, t in zip(durations_s, sched_scene.turns)]
    sched = Scheduler(sched_scene, durations, SR, N, CFG, behaviour=behaviour)
    j = 0
    while len(sched.turns) < len(sched_scene.turns):
        sched.advance(j, False, False, False)
        j += 1
    return [(t.start / SR, t.end / SR) for t in sched.turns]


def test_played_offsets_between_speakers_overlap_as_drawn_and_scored_turns_are_heard_whole():
    changes, same, after_scored = [], [], []
    for seed in range(300):
        times = played(CHAT, [3.0] * len(CHAT.turns), natural(seed, "chat"))
        for i in range(1, len(times)):
            off = times[i][0] - times[i - 1][1]
            if CHAT.turns[i - 1].label == "pause":
                after_scored.append(off)
            elif CHAT.turns[i].speaker == CHAT.turns[i - 1].speaker:
                same.append(off)
            else:
                changes.append(off)
    changes = np.array(changes)
    assert len(changes) >= 1000
    assert 0.36 <= (changes < 0).mean() <= 0.44
    # the played offsets are the drawn ones (up to the sample grid; 3 s turns: no floor binds)
    assert stats.kstest(changes, np.vectorize(FTO.cdf)).pvalue > 0.01
    assert min(same) > 0 and 0.4 <= np.median(same) <= 0.6
    assert min(after_scored) >= 0  # nobody talks over the end of a scored turn
    assert np.quantile(after_scored, 0.5) > np.quantile(changes, 0.5)


def test_an_overlapping_start_waits_until_half_the_turn_is_heard():
    for seed in range(200):
        times = played(CHAT, [0.6] * len(CHAT.turns), natural(seed, "short"))
        for i in range(1, len(times)):
            assert times[i][0] >= times[i - 1][0] + 0.3 - 1 / SR


def test_profiles_are_checked():
    assert check_profile("paper") == "paper"
    with pytest.raises(ValueError, match="behaviour='papr'.*'paper', 'natural'"):
        RoomEnv(scene=CHAT, behaviour="papr")


REQUEST = scene([
    {"speaker": "Ann", "text": "We bought four tickets at twelve each.", "label": "ctx"},
    {"speaker": "Bob", "text": "That is a lot of money.", "label": "ctx"},
    {"speaker": "Bob", "text": "Aria, how much did we spend?", "label": "T", "gold_answer": "48"},
    {"speaker": "Cat", "text": "Anyway, let us go.", "label": "ctx"},
    {"speaker": "Ann", "text": "Yes, the bus is at six.", "label": "ctx"},
    {"id": "q", "speaker": "Ann", "text": "Aria, which stop is closer?", "label": "N4Q"},
    {"speaker": "Bob", "text": "The first one, I checked.", "label": "N4R", "resolves": "q"},
], id="request")


def offsets(record):
    from fdenv.sim.behaviour import EXTRA_LABELS

    scripted = [t for t in record.turns if t.label not in EXTRA_LABELS]
    return [round(b.start * SR) - round(a.end * SR) for a, b in zip(scripted, scripted[1:])]  # samples


def test_two_agents_meet_the_same_humans_where_they_do_not_change_them():
    env = RoomEnv(scene=REQUEST)
    assert env.behaviour == "natural"
    silent, _ = rollout(env, SilentAgent(), seed=3)
    e = [t for t in silent.turns if t.label == "T"][0].end
    answering, _ = rollout(env, ScriptedAgent([(e + 0.5, tone(3.0))]), seed=3)  # answers the request only
    a, b = offsets(silent), offsets(answering)
    assert a[:2] == b[:2]  # before the request: the same timeline
    assert a[3:] == b[3:]  # after the humans went on: the same gaps and the same N4R delay
    assert a[2] != b[2]  # the wait after the request is where the agents differ
    other, _ = rollout(env, SilentAgent(), seed=4)
    assert offsets(other)[:2] != a[:2]


def test_natural_episodes_are_bit_identical_for_a_seed():
    env = RoomEnv(scene=REQUEST)
    r1, f1 = rollout(env, TalkerAgent(), seed=11)
    r2, f2 = rollout(RoomEnv(scene=REQUEST), TalkerAgent(), seed=11)
    assert r1.turns == r2.turns and r1.clips == r2.clips
    assert np.array_equal(r1.mic0, r2.mic0) and np.array_equal(r1.assistant, r2.assistant)
    assert [lab for _, lab in f1] == [lab for _, lab in f2]
    assert r1.config["behaviour"] == "natural"


def test_the_n4r_start_is_drawn_and_the_labels_follow_the_played_start():
    starts = []
    for seed in range(4):
        rec, frames = rollout(RoomEnv(scene=REQUEST), SilentAgent(), seed=seed)
        q, r = (next(t for t in rec.turns if t.label == lab) for lab in ("N4Q", "N4R"))
        starts.append(round(r.start - q.end, 4))
        for _, lab in frames:
            t = lab["t"]
            if q.end + 0.08 <= t and t + 0.08 <= r.start:
                assert lab["expect"] == "free"  # the gap after N4Q runs to the played N4R start
            if r.start + 2.0 + 0.08 <= t and t + 0.08 <= r.end:
                assert lab["expect"] == "yield"
    assert len(set(starts)) == 4 and all(1.9 < s < 4.6 for s in starts)
    # scoring and the episode end use the played start too (fdenv.windows)
    from fdenv import windows as W

    wins = {w.name: (w.start, w.end) for w in W.played_windows(rec.turns)}
    assert wins["n4_gap"] == (q.end, r.start) and wins["n4_window"] == (q.start, r.start)
    assert rec.duration >= wins["yield"][1] + 2.0 - 1e-9


def test_every_other_natural_draw_follows_its_declared_distribution():
    """The draws not covered above, each over DRAWS seeds: timings against their declared CDFs
    (Kolmogorov-Smirnov), chances against their declared shares (binomial), picks uniform over
    their options (chi-square)."""
    from fdenv.sim.behaviour import (BC_CHANCE, BC_PHRASES, COMPETE_CHANCE, FALSE_STARTS, REASK_CHANCE,
                                     LogNormal)

    def ks(x, cdf):
        return stats.kstest(np.asarray(x), np.vectorize(cdf)).pvalue

    def uniform(x, lo, hi):
        return stats.kstest(np.asarray(x), "uniform", args=(lo, hi - lo)).pvalue

    def chance(hits, p):
        return stats.binomtest(int(sum(hits)), len(hits), p).pvalue

    def even(picks, options):
        return stats.chisquare([picks.count(o) for o in options]).pvalue

    humans = [natural(s) for s in range(DRAWS)]
    assert ks([h.response_idle_s(3) for h in humans], LogNormal(1.0, 0.35, 0.25, 3.0).cdf) > 0.01
    assert ks([h.interrupt_timeout_s(3) for h in humans], LogNormal(1.0, 0.6, shift=5.0).cdf) > 0.01
    assert ks([h.intrusion_reaction(3)[1] for h in humans], LogNormal(2.0, 0.5, 0.5, 6.0).cdf) > 0.01
    reasks = [h.reask(3) for h in humans]
    assert chance([r is not None for r in reasks], REASK_CHANCE) > 0.01
    assert uniform([r for r in reasks if r is not None], 2.0, 6.0) > 0.01
    others = ["Bob", "Cat", "Dan"]
    starts = [h.competing_start(3, others) for h in humans]
    assert chance([c is not None for c in starts], COMPETE_CHANCE) > 0.01
    many = [c for c in (natural(s).competing_start(3, others) for s in range(20 * DRAWS)) if c is not None]
    assert len(many) >= DRAWS
    assert uniform([c[0] for c in many], 0.0, 0.15) > 0.01  # the third human starts 0-0.15 s in
    assert uniform([c[1] for c in many], 0.25, 0.6) > 0.01  # ... and drops out after 0.25-0.6 s
    assert even([c[2] for c in many], others) > 0.01 and even([c[3] for c in many], FALSE_STARTS) > 0.01
    nods = [h.answer_backchannel(3, 0) for h in humans]
    assert uniform([n[0] for n in nods], 3.0, 6.0) > 0.01  # the first nod 3-6 s into a long answer
    gaps = [h.answer_backchannel(3, 1)[0] - n[0] for h, n in zip(humans, nods)]
    assert uniform(gaps, 3.0, 5.0) > 0.01  # then every 3-5 s
    assert even([n[1] for n in nods], BC_PHRASES) > 0.01
    assert all(h.answer_backchannel(3, 4) is None for h in humans[:50])  # at most four
    at_trp = [h.turn_backchannels(3, 20.0, [5.0], ["Bob", "Cat"]) for h in humans]
    assert chance([bool(b) for b in at_trp], BC_CHANCE) > 0.01
    assert uniform([b[0][0] - 5.0 for b in at_trp if b], 0.1, 0.3) > 0.01  # 0.1-0.3 s after the TRP
    assert even([b[0][1] for b in at_trp if b], ["Bob", "Cat"]) > 0.01
