"""``benchmarks/last_word_timing.py``: the recogniser's last word before each silence of a few
validation scenes, voiced by espeak (fast), with its timing against the end of the speech."""

from __future__ import annotations

import pytest

from .helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("last_word_timing")


def test_each_pause_and_each_final_turn_is_one_silence(bench):
    from fdenv.train.envs import load_scenes

    rows = bench.silences("val", 2)
    pauses = [p for sc in load_scenes(["pause"], "val")[:2] for t in sc.turns if t.label == "pause"
              for p in t.pieces if p.silence_after_s > 0]
    assert [r[0] for r in rows] == ["pause"] * len(pauses) + ["end", "end"]
    for kind, _, pieces, heard in rows:  # a pause hears the pieces up to it, an end the whole turn
        assert (pieces[heard - 1].silence_after_s > 0) if kind == "pause" else heard == len(pieces)


def test_the_measures_of_real_speech(bench, capsys):
    bench.main(["--split", "val", "--tts", "espeak", "--limit", "2"])
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith(("pause ", "end "))]
    assert len(rows) == len(bench.silences("val", 2))
    for line in rows:  # the last word ends near the end of the speech: within the speech or the 0.3 s after
        offset = float(line.split(" end ")[1].split(" s,")[0])
        assert -1.0 < offset <= bench.TAIL_S + 0.05, line
    assert out[-3].startswith("pause: ") and out[-2].startswith("end: 2 silences; median end offset ")
    aucs = dict(part.rsplit(" ", 1) for part in out[-1].split(": ", 1)[1].split(", "))
    assert sorted(aucs) == ["1 - probability", "duration", "end offset"]
    assert all(0.0 <= float(v) <= 1.0 for v in aucs.values())


def test_the_summary_scores_pauses_by_each_measure(bench):
    rows = [{"kind": k, "end_offset_s": o, "duration_s": d, "probability": p}
            for k, o, d, p in [("pause", 0.25, 0.3, 0.4), ("pause", 0.2, 0.1, 0.5), ("end", -0.05, 0.2, 0.99),
                               ("end", 0.0, 0.2, 0.91)]]
    lines = bench.summary(rows)
    assert lines[0] == "pause: 2 silences; median end offset +0.23 s, duration 0.20 s, probability 0.45"
    assert lines[1] == "end: 2 silences; median end offset -0.03 s, duration 0.20 s, probability 0.95"
    assert lines[2] == "ROC AUC as a score of a pause: end offset 1.000, duration 0.500, 1 - probability 1.000"
