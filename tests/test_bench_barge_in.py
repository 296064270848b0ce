"""``benchmarks/bench_barge_in.py``: how it counts barge-ins stopped and barge-ins on its own echo,
on hand-made episodes (the runs themselves take minutes; the cascade's tests cover the gate)."""

from __future__ import annotations

import pytest

from .helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_barge_in")


def speech(*segments):
    """The agent's speech as a run writes it (the paper profile's segments, per scoring family)."""
    return {"segments": {"fdb": {"paper": {"segments": [list(s) for s in segments]}}}}


def interruption(spoke, did_not_stop=False, stop=None, barge_ins=0):
    return {"fdb": {"paper": {"spoke_at_interrupt": spoke, "did_not_stop": did_not_stop, "stop_latency_s": stop}},
            "agent_stats": {"barge_ins": barge_ins}}


def test_interruptions_count_only_scenes_where_the_agent_was_speaking(bench):
    eps = [interruption(True, stop=0.6, barge_ins=1), interruption(True, stop=2.0, barge_ins=1),
           interruption(True, did_not_stop=True), interruption(False), interruption(True, stop=1.0)]
    s = bench.interruption_summary(eps)
    assert (s["scenes"], s["speaking"], s["stopped"], s["barge_ins"]) == (5, 4, 3, 2)
    # stops at 0.6, 1.0 and 2.0 s: quantiles interpolated linearly, as the project's reports take them
    assert s["stop_median_s"] == 1.0 and s["stop_p90_s"] == pytest.approx(1.8)


def test_no_stop_gives_no_latency(bench):
    s = bench.interruption_summary([interruption(True, did_not_stop=True), interruption(False)])
    assert s["stopped"] == 0 and s["stop_median_s"] is None and s["stop_p90_s"] is None


def test_a_barge_in_with_no_one_talking_over_is_its_own_echo(bench):
    people = [{"start": 1.0, "end": 3.0}, {"start": 9.0, "end": 9.5}]
    alone = {**speech((4.0, 8.0)), "timeline": people, "agent_stats": {"barge_ins": 1, "responses": 1}}
    over = {**speech((2.5, 8.0)), "timeline": people, "agent_stats": {"barge_ins": 1, "responses": 2}}
    quiet = {**speech((4.0, 8.0)), "timeline": people, "agent_stats": {"barge_ins": 0, "responses": 1}}
    assert bench.talked_over(alone) == 0.0 and bench.talked_over(over) == pytest.approx(0.5)
    s = bench.echo_summary([alone, over, quiet])
    assert s == {"scenes": 3, "answers": 4, "barge_ins": 2, "with_no_one_talking_over": 1}
