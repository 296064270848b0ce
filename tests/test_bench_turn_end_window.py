"""``benchmarks/turn_end_window.py``: a checkpoint answering within each window of a silence, at
the threshold picked for that window. A hand-made model whose P rises with the silence and with
the assistant's name, on hand-made silences with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.train import turn_end as te

from .helpers import benchmark, named_silence, rising_turn_end_model, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_window")


def test_each_window_spends_its_own_budget(bench, tmp_path, capsys):
    """logit -2 + 4 when named + 1 per silence step passed. The pause lasts to 0.896 s, where P
    reaches 0.881; the named turn end has P 0.881 at its first look, the other 0.119 (0.5 at
    0.576 s, 0.953 at 1.056 s). With no early answer allowed: deciding at the first look, the
    pause caps the threshold at 0.12 and the named end is answered at once; within 0.6 s the pause
    reaches 0.5, so 0.51, the same answers; with no window the pause reaches 0.881, so 0.89: the
    named end waits for the 0.4 s step and the other is answered at 1.056 s."""
    rising_turn_end_model().save(tmp_path / "m.json")
    val = write_lines(tmp_path / "val.jsonl", [named_silence("pause-1", "pause", False, [0] * 9),
                                                named_silence("turn_taking-1", "turn_taking", True, [1] * 17),
                                                named_silence("turn_taking-2", "turn_taking", False, [1] * 17)])
    bench.main(["--checkpoint", str(tmp_path / "m.json"), "--val", val, "--max-early", "0",
                "--windows", "0.3", "0.6", "none"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{tmp_path / 'm.json'}, each window at the threshold picked on val.jsonl (at most 0.0 early, per set)"
    assert [line for line in out if line.startswith("| ")][1:] == [
        "| 0.3 s | 0.12 | 0/1 | 0.50 / 0.50 / 0.50 | 0.50 (2) |",
        "| 0.6 s | 0.51 | 0/1 | 0.50 / 0.50 / 0.50 | 0.50 (2) |",
        "| none | 0.89 | 0/1 | 0.00 / 0.50 / 0.50 | 1.00 (2) |"]


def test_bad_windows_are_named(bench, tmp_path, capsys):
    m = te.TurnEndModel(np.zeros(te.N_FEATURES), -2.0)
    m.save(tmp_path / "m.json")
    val = write_lines(tmp_path / "val.jsonl", [named_silence("pause-1", "pause", False, [0] * 3)])
    for bad, msg in (("0", "--windows=0.0; seconds of silence"), ("soon", "'soon': seconds (e.g. 0.3) or none")):
        with pytest.raises(SystemExit):
            bench.main(["--checkpoint", str(tmp_path / "m.json"), "--val", val, "--windows", bad])
        assert msg in capsys.readouterr().err
