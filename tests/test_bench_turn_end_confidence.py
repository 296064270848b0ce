"""``benchmarks/turn_end_confidence.py``: the recogniser's confidence in a transcript's ending as
more columns of the turn-end model. Hand-made silences: the words are the same, only the
recogniser's confidence in the last one tells them apart."""

from __future__ import annotations


import numpy as np
import pytest

from fdenv.train import turn_end as te

from .helpers import benchmark, collect_files, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_confidence")


def _rows(n, seed):
    """Pauses and ends with the same words; a pause's last word is one the recogniser doubts."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        end = i % 2
        p = rng.uniform(0.85, 1.0) if end else rng.uniform(0.2, 0.6)
        rows.append({"set": "pause", "scene_id": f"s{seed}-{i}", "text": "Could you add milk?", "named": False,
                     "silence_s": 0.256, "labels": [end] * 3,
                     "words": [["Could", 0.9], ["you", 0.99], ["add", 0.95], ["milk?", round(p, 3)]],
                     "sound": np.zeros((te.SOUND_WINDOWS, te.SOUND_BANDS)).tolist()})
    return rows


def test_the_benchmark_learns_what_only_the_confidence_tells(bench, tmp_path, capsys):
    bench.main(collect_files(tmp_path, _rows(60, 0), _rows(30, 1)))
    out = capsys.readouterr().out
    assert "60 train silences, 30 validation silences; the words spell the transcript in 100.0%" in out
    rows = {line.split(" | ")[0]: line for line in out.splitlines() if line.startswith("| words")}
    assert "pause 0.500" in rows["| words"]  # the same words: nothing to tell them apart
    assert "pause 0.500" in rows["| words + sound"]  # the same (silent) sound: nothing either
    for model in ("| words + confidence", "| words + sound + confidence"):
        confident = [line for key, line in rows.items() if key.startswith(model + " (weights")]
        assert len(confident) == 1 and "pause 1.000" in confident[0]
        assert "pause: 0.000 / 1.00 at 0.26 s" in confident[0]  # every end at the first look, no pause


def test_files_without_the_words_are_named(bench, tmp_path):
    rows = _rows(4, 0)
    for r in rows:
        del r["words"]
    write_lines(tmp_path / "old.jsonl", rows)
    with pytest.raises(ValueError, match=r"old.jsonl:1: no recogniser \"words\".*collect --words"):
        bench.main(["--train", str(tmp_path / "old.jsonl"), "--val", str(tmp_path / "old.jsonl")])


def test_the_words_before_a_pause_are_counted_against_the_scripts_own(bench):
    """pause-0002's script: "Remind me to [pause] take the casserole out of [pause] the oven in
    [pause] twenty minutes." Three pauses, each after a closed-class word; the transcripts at its
    pause silences are counted as heard, other silences left out."""
    rows = [{"set": "pause", "scene_id": "pause-0002", "last_turn": "pause", "labels": [0, 0], "text": "Remind me too."},
            {"set": "pause", "scene_id": "pause-0002", "last_turn": "pause", "labels": [0], "text": "Remind me to"},
            {"set": "pause", "scene_id": "pause-0002", "last_turn": "pause", "labels": [1], "text": "... minutes."}]
    line = bench.words_before_pauses(rows)
    assert line.startswith("the scripts' words before the 3 pauses of these pause scenes end on a closed-class "
                           "word 100% of the time; the transcripts at the 2 pause silences 50%"), line
    assert line.endswith('in "?" 0%, in a sentence mark 50%'), line
    assert bench.words_before_pauses([{"set": "turn_taking", "scene_id": "x", "labels": [1], "text": "Hi."}]) \
        == "no pause silences"
