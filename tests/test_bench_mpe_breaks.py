"""``benchmarks/mpe_silence_breaks.py``: broken MPE silence windows classed by when the agent's
speech began and whether the turn detector's model started it, on a hand-made episode."""

from __future__ import annotations

import json

import pytest

from .helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("mpe_silence_breaks")


def window(start, end, intrusion=None):
    return {"window": [start, end], "preserved": intrusion is None, "intrusions": [intrusion] if intrusion else []}


# the model answered early at 10.0 s (judged at 9.5 s with 0.25 s of silence, answered 0.75 s in)
# and at 30.0 s; the other speech (20.0 s, 39.0 s) started at the endpoint or fallback
EPISODE = {
    "scene_id": "mpe-0001-explicit", "seed": 0, "record": "mpe-0001-explicit.s0.flac",  # as the runner writes it
    "mpe": {"silence_judged": 5, "details": {"silence": [
        window(10.5, 14.0, [10.0, 15.0]),   # began before the window, an early answer
        window(19.0, 23.0, [20.0, 24.0]),   # inside, not an early answer
        window(29.0, 33.0, [30.2, 33.0]),   # inside, an early answer (within 0.3 s)
        window(40.0, 44.0, [39.0, 41.0]),   # before, not early
        window(50.0, 52.0),                 # kept
    ]}},
    "agent_stats": {"judged": [
        {"t_s": 9.5, "silence_s": 0.25, "answered_after_s": 0.75},
        {"t_s": 29.5, "silence_s": 0.25, "answered_after_s": 0.75},
        {"t_s": 45.0, "silence_s": 0.25},  # judged, never answered early
    ]},
}


def test_classes_each_broken_window_once(bench):
    c = bench.classify(EPISODE)
    assert c == {("before the window opened", "early answer"): 1,
                 ("inside the window", "endpoint, fallback or other"): 1,
                 ("inside the window", "early answer"): 1,
                 ("before the window opened", "endpoint, fallback or other"): 1}


def test_a_run_folder_sums_its_episodes_and_names_a_bad_folder(bench, tmp_path):
    fdb = {"scene_id": "fdb", "seed": 0, "record": "fdb.s0.flac"}  # an episode without MPE: skipped
    (tmp_path / "episodes.jsonl").write_text(json.dumps(EPISODE) + "\n" + json.dumps(fdb) + "\n")
    judged, broken, counts = bench.summarise(tmp_path)
    assert (judged, broken, sum(counts.values())) == (5, 4, 4)
    with pytest.raises(SystemExit, match="no episodes.jsonl"):
        bench.summarise(tmp_path / "missing")
