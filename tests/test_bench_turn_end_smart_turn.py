"""``benchmarks/turn_end_smart_turn.py``: Smart Turn's probability as more columns of the turn-end
model. Hand-made silences: the words, sound and confidence are the same; only Smart Turn (sure at
the assistant's silences, unsure at the pauses) tells them apart."""

from __future__ import annotations


import pytest

from .helpers import alike_silences, benchmark, collect_files, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_smart_turn")


def _rows(n, seed):
    return alike_silences(n, seed, smart_turn=lambda i, end: (0.8 + 0.01 * (i % 7)) if end else (0.1 + 0.01 * (i % 5)))


def test_the_benchmark_learns_what_only_smart_turn_tells(bench, tmp_path, capsys):
    bench.main(collect_files(tmp_path, _rows(60, 0), _rows(30, 1)))
    out = capsys.readouterr().out
    assert out.startswith("60 train silences, 30 validation silences")
    pause, = [line for line in out.splitlines() if line.startswith("train, pause inside a turn")]
    ours, = [line for line in out.splitlines() if line.startswith("train, the assistant's")]
    assert pause == "train, pause inside a turn: 30 silences, median P(complete) 0.120"
    assert ours == "train, the assistant's: 30 silences, median P(complete) 0.830"
    assert "train, Smart Turn alone, the assistant's against pauses: ROC AUC 1.000" in out
    rows = {line.split(" | ")[0].split(" (")[0]: line for line in out.splitlines() if line.startswith("| ")}
    assert "pause 0.500" in rows["| words + sound + confidence"]  # nothing but Smart Turn differs
    for model in ("| words + sound + confidence + smart turn", "| words + smart turn"):
        assert "pause 1.000" in rows[model] and "(weights " in rows[model]
        assert "pause: 0.000 / 1.00 at 0.26 s" in rows[model]  # every end at the first look, no pause


def test_files_without_smart_turn_are_named(bench, tmp_path):
    rows = _rows(4, 0)
    del rows[2]["smart_turn"]
    write_lines(tmp_path / "old.jsonl", rows)
    with pytest.raises(ValueError, match=r"old.jsonl:3: no \"smart_turn\" probability.*collect --smart-turn"):
        bench.main(["--train", str(tmp_path / "old.jsonl"), "--val", str(tmp_path / "old.jsonl")])
