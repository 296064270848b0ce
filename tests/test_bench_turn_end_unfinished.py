"""``benchmarks/turn_end_unfinished.py``: a checkpoint played with and without the rule that
leaves a silence after unfinished words to the endpoint. A hand-made model that answers every
silence at the first look, on hand-made silences whose words alone say which are unfinished."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.train import turn_end as te

from .helpers import benchmark, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_unfinished")


def _silence(scene: str, kind: str, text: str, end: int) -> dict:
    return {"set": kind, "scene_id": scene, "text": text, "named": False, "silence_s": 0.256,
            "labels": [end] * 4, "expect": "respond" if end else "may_backchannel"}


def test_the_rule_holds_the_unfinished_pauses_and_counts_the_ends_it_holds(bench, tmp_path, capsys):
    eager = te.TurnEndModel(np.zeros(te.N_FEATURES), 5.0, threshold=0.9)  # P 0.993 at every silence
    eager.save(tmp_path / "eager.json")
    rows = [_silence("pause-1", "pause", "What's a good exercise for?", 0),
            _silence("pause-2", "pause", "I'd like to book a table for...", 0),
            _silence("pause-3", "pause", "I'd like to start.", 0),
            _silence("turn_taking-1", "turn_taking", "Could you add milk?", 1),
            _silence("turn_taking-2", "turn_taking", "What is it for?", 1)]
    val = write_lines(tmp_path / "val.jsonl", rows)
    held = write_lines(tmp_path / "held.jsonl", rows[:2])
    bench.main(["--checkpoint", str(tmp_path / "eager.json"), "--val", val, "--heldout", held])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{tmp_path / 'eager.json'} at its threshold 0.90"
    table = [line for line in out if line.startswith("| ")][1:]  # after the header
    assert table == [
        "| validation | as it is | 3/3 (pause-1, pause-2, pause-3) | 2/2 at 0.26 s | - |",
        "| validation | unfinished words held | 1/3 (pause-3) | 1/2 at 0.26 s | 1 |",
        "| held.jsonl | as it is | 2/2 (pause-1, pause-2) | 0/0 at - | - |",
        "| held.jsonl | unfinished words held | 0/2 | 0/0 at - | 0 |"]


def test_a_file_without_labels_is_named(bench, tmp_path):
    eager = te.TurnEndModel(np.zeros(te.N_FEATURES), 5.0, threshold=0.9)
    eager.save(tmp_path / "eager.json")
    row = _silence("pause-1", "pause", "for?", 0)
    del row["labels"]
    old = write_lines(tmp_path / "old.jsonl", [row])
    with pytest.raises(ValueError, match=r"old.jsonl:1: no per-frame \"labels\""):
        bench.main(["--checkpoint", str(tmp_path / "eager.json"), "--val", old])


def test_with_pick_on_each_rule_spends_its_own_budget(bench, tmp_path, capsys):
    """A model whose P rises with the silence (0.55 s: 0.5; 0.85 s: 0.881; 1.0 s: 0.953). The pause
    after "for?" lasts 9 frames (P up to 0.881), the one after "start." 5 (up to 0.5): with no
    early answer allowed, as it is the threshold must clear 0.881, with the rule only 0.5, so the
    turn end is answered at 1.06 s against 0.74 s."""
    rising = te.TurnEndModel(np.zeros(te.N_FEATURES), -2.0, threshold=0.3)
    rising.weights[te.N_TEXT:] = 1.0
    rising.save(tmp_path / "rising.json")
    rows = [{**_silence("pause-1", "pause", "What's a good exercise for?", 0), "labels": [0] * 9},
            {**_silence("pause-2", "pause", "I'd like to start.", 0), "labels": [0] * 5},
            {**_silence("turn_taking-1", "turn_taking", "Could you add milk?", 1), "labels": [1] * 17}]
    val = write_lines(tmp_path / "pick.jsonl", rows)
    bench.main(["--checkpoint", str(tmp_path / "rising.json"), "--val", val, "--pick-on", val, "--max-early", "0"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"{tmp_path / 'rising.json'}, each rule at the threshold picked on pick.jsonl: 0.89 as it is, "
                      "0.51 with unfinished words held")
    assert [line for line in out if line.startswith("| ")][1:] == [
        "| validation | as it is | 0/2 | 1/1 at 1.06 s | - |",
        "| validation | unfinished words held | 0/2 | 1/1 at 0.74 s | 0 |"]
