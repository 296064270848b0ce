"""``benchmarks/episode_draws.py``: the same agent on the same test scenes, once per episode seed.
The report's arithmetic on known points; one real scene per set through the real env, where seed
0 is the frontier's own point and another seed draws the humans anew."""

from __future__ import annotations

import pytest

from fdenv.train.frontier import CONDITIONS, run_point

from .helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("episode_draws")


def _point(pause: dict, latency: dict):
    from fdenv.train.frontier import summarise

    data = {"pause": pause, "tt": {k: 1.0 for k in latency}, "latency": latency, "silence": {}}
    return data, summarise(data)


def test_the_report_separates_the_models_pauses_from_the_draws(bench):
    res = {"office_noise_echo": {0: _point({"p1": 1.0, "p2": 1.0, "p3": 0.0, "p4": 0.0}, {"t1": 0.4, "t2": 0.5}),
                                 1: _point({"p1": 1.0, "p2": 0.0, "p3": 1.0, "p4": 0.0}, {"t1": 0.6, "t2": 0.8})}}
    lines = bench.report(res)
    assert "| office_noise_echo | 0 | 0.500 (p1, p2) | 1.000 | 0.45 s |" in lines
    assert "| office_noise_echo | 1 | 0.500 (p1, p3) | 1.000 | 0.70 s |" in lines
    assert lines[-1] == ("office_noise_echo: pause TOR 0.500-0.500, median latency 0.45-0.70 s over 2 draws; "
                         "pause scenes taken in every draw: p1; in some: p2, p3")


def test_seed_zero_is_the_frontiers_point_and_another_seed_draws_the_humans_anew(bench, tmp_path):
    from fdenv.runs import read_episodes

    res = bench.draws("single_user", 0.93, [0, 1], ["anechoic"], limit=1, tts="espeak", agent_tts="espeak",
                      out=str(tmp_path))
    from fdenv_agents import make_agent

    agent = make_agent("turn_detector", checkpoint="single_user", threshold=0.93, tts="espeak",
                       group_checkpoint="words")
    frontier_point = run_point(agent, CONDITIONS["anechoic"], ("pause", "turn_taking"), "test", 1, str(tmp_path),
                               {"profiles": ["paper"]}, tts="espeak")
    assert res["anechoic"][0][0] == frontier_point["data"]
    # each run folder holds one episode per scene and seed; the humans' timings differ between seeds
    folders = {p.parent for p in tmp_path.glob("*/episodes.jsonl")}
    assert len(folders) == 2  # one per scene set, both seeds in each
    for folder in folders:
        by_seed = {ln["seed"]: ln["timeline"] for ln in read_episodes(folder)}
        assert set(by_seed) == {0, 1}
        assert [t["start"] for t in by_seed[0]] != [t["start"] for t in by_seed[1]]
    assert "anechoic: pause TOR" in bench.report(res)[-1]
