"""Duplex-MPE on rendered audio (slow): the real env with espeak, Whisper tiny.en, the offline
judge. The oracle, the silent agent, the talker and an agent that only says "mm-hmm" in every
silence window, scored through the runner (``MPEScore``); then the ``min_speech_ms`` sweep over
the oracle's saved run.

Run with ``pytest -m slow tests/test_mpe_rendered.py``.
"""

from __future__ import annotations

import os
import time

import pytest

from fdenv.run import run
from fdenv.runs import read_episodes
from fdenv.scene import load_set
from fdenv.score.mpe_aggregate import aggregate_mpe
from fdenv.score.mpe_table import format_mpe
from fdenv.score.rescore import SWEEP_MS, sweep_min_speech
from fdenv_agents import OracleAgent, SilentAgent, TalkerAgent
from fdenv_agents.scripted import ScriptedAgent

os.environ["HF_HUB_OFFLINE"] = "1"
pytestmark = pytest.mark.slow

N_PAIRS = 30  # the test split: 30 pairs, 27 with an N4 event -> 54 N4 events for the oracle
BOOT = 2000


@pytest.fixture(scope="module")
def scenes():
    return load_set("mpe", "test")[: 2 * N_PAIRS]


@pytest.fixture(scope="module")
def oracle_run(scenes, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    t = time.perf_counter()
    folder = run(OracleAgent(), scenes=scenes, out=out, progress=False)
    return folder, time.perf_counter() - t


def _lines(folder):
    return [ln for ln in read_episodes(folder) if ln.get("mpe")]


def _sum(lines, key):
    return sum(ln["mpe"][key] for ln in lines)


def test_oracle(oracle_run):
    folder, _ = oracle_run
    lines = _lines(folder)
    assert len(lines) == 2 * N_PAIRS
    agg = aggregate_mpe(lines, n_resamples=BOOT)
    print("\n" + format_mpe(agg))
    requests = _sum(lines, "requests")
    assert _sum(lines, "presence") == requests == 2 * N_PAIRS
    assert _sum(lines, "fresh_onset") == requests
    # accuracy: every miss, with what the recogniser heard
    misses = [(ln["scene_id"], d["gold"], d["answer"], d["correct"]) for ln in lines for d in ln["mpe"]["details"]["requests"]
              if d["correct"] is not True]
    answered = _sum(lines, "answered")
    accuracy = _sum(lines, "correct") / answered
    report = "\n".join(f"  {sid}: gold {gold!r}; heard {heard!r}; verdict {v}" for sid, gold, heard, v in misses)
    print(f"accuracy {accuracy:.3f} over {answered} judged answers; misses:\n{report or '  none'}")
    assert answered == requests, f"unjudged answers:\n{report}"
    # The oracle says the gold answer itself; the key-fact judge accepts those words, so every
    # miss is the recogniser's (espeak through Whisper tiny.en: "six guests" heard as "sex
    # guests"). The README reports the same ceiling on the test split (0.76); a judge or oracle
    # regression shows up as a miss the judge would reject in the oracle's own words, or as
    # accuracy falling below it.
    from fdenv.score.judge import OfflineJudge

    judge = OfflineJudge()
    assert all(judge.correct(gold, gold) for _, gold, _, _ in misses), report
    assert accuracy >= 0.75, f"accuracy {accuracy:.3f}; misses:\n{report}"
    # silence and yield
    intrusions = [(ln["scene_id"], w) for ln in lines for w in ln["mpe"]["details"]["silence"] if w["preserved"] is not True]
    assert _sum(lines, "silence_preserved") == _sum(lines, "silence_windows"), intrusions
    eligible = _sum(lines, "yield_eligible")
    not_eligible = [(ln["scene_id"], e) for ln in lines for e in ln["mpe"]["details"]["n4"] if not e["eligible"]]
    assert eligible == _sum(lines, "n4_events") and eligible >= 30, not_eligible
    assert _sum(lines, "yielded") == eligible
    for cond in ("explicit", "implicit"):
        c = agg["conditions"][cond]
        assert c["presence"]["value"] == c["fresh_onset"]["value"] == c["silence_preservation"]["value"] == 1.0
        assert c["yield"]["num"] == c["yield"]["den"] == agg["failures"][cond]["eligible"]
    every = agg["conditions"]["all"]["yield"]
    assert every["reported"] and every["value"] == 1.0 and every["den"] == eligible
    assert agg["paired"]["presence"]["mcnemar"]["p"] == 1.0 and agg["headline"]


def test_silent(scenes, tmp_path):
    folder = run(SilentAgent(), scenes=scenes[:6], out=tmp_path, progress=False)
    lines = _lines(folder)
    assert _sum(lines, "presence") == 0 and _sum(lines, "fresh_onset") == 0 and _sum(lines, "window_response") == 0
    assert _sum(lines, "silence_preserved") == _sum(lines, "silence_windows") > 0
    agg = aggregate_mpe(lines, n_resamples=BOOT)
    assert agg["conditions"]["all"]["presence"]["value"] == 0.0
    assert agg["conditions"]["all"]["silence_preservation"]["value"] == 1.0
    assert agg["conditions"]["all"]["accuracy"]["value"] is None  # nothing to judge: no rate, not 0


def test_talker(scenes, tmp_path):
    folder = run(TalkerAgent(), scenes=scenes[:4], out=tmp_path, progress=False)
    lines = _lines(folder)
    assert _sum(lines, "presence") == _sum(lines, "requests") == 4
    assert _sum(lines, "fresh_onset") == 0
    assert _sum(lines, "silence_preserved") == 0 and _sum(lines, "silence_windows") > 0
    assert _sum(lines, "yield_eligible") == 0  # it speaks during every question


class MmHmm(ScriptedAgent):
    """Says only "mm-hmm", once, 0.3 s into every N1/N2/N3 turn (inside its silence window)."""

    name = "mm-hmm"

    def __init__(self):
        super().__init__(on_labels=self._react)
        self._said: set = set()

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        self._said = set()

    @staticmethod
    def _react(agent, labels):
        turn = labels["turn"]
        if turn["label"] in ("N1", "N2", "N3") and turn["id"] not in agent._said:
            agent._said.add(turn["id"])
            agent.say("mm-hmm", labels["t"] + 0.3)


def test_mm_hmm_keeps_silence(scenes, tmp_path):
    folder = run(MmHmm(), scenes=scenes[:6], out=tmp_path, progress=False)
    lines = _lines(folder)
    windows = [w for ln in lines for w in ln["mpe"]["details"]["silence"]]
    acks = sum(len(w["acknowledgements"]) for w in windows)
    assert acks >= 0.8 * len(windows), "the mm-hmms are heard as speech, and as acknowledgements"
    assert _sum(lines, "silence_preserved") == _sum(lines, "silence_windows") == len(windows), \
        [w for w in windows if w["preserved"] is not True]


def test_sweep_rescores_the_saved_run(oracle_run):
    folder, run_s = oracle_run
    lines = _lines(folder)
    own = sweep_min_speech(folder, values=[250], aggregate=False)["episodes"][250]
    assert own == [ln["mpe"] for ln in lines], "re-scoring at the run's own min_speech_ms reproduces it exactly"
    aggregate_mpe(own, n_resamples=BOOT)  # one-time imports (scipy.stats) are no part of the sweep's cost
    t = time.perf_counter()
    out = sweep_min_speech(folder, values=SWEEP_MS, n_resamples=BOOT)
    sweep_s = time.perf_counter() - t
    t = time.perf_counter()
    sweep_min_speech(folder, values=SWEEP_MS, aggregate=False)
    rescore_s = time.perf_counter() - t
    # its cost against the run's is measured by benchmarks/bench_sweep.py, not asserted here (a
    # busy machine slows the two unevenly)
    print(f"\noriginal run {run_s:.1f} s; sweep over {list(SWEEP_MS)} {sweep_s:.2f} s ({100 * sweep_s / run_s:.1f}%), "
          f"of which re-scoring {rescore_s:.2f} s")
    for ms in SWEEP_MS:
        s = out["summary"][ms]["conditions"]["all"]
        print(f"  min_speech_ms {ms:3d}: presence {s['presence']['value']:.3f} fresh {s['fresh_onset']['value']:.3f} "
              f"silence {s['silence_preservation']['value']:.3f} yield {s['yield']['value']}")
        assert s["silence_preservation"]["value"] == 1.0
