"""``benchmarks/turn_end_enhanced.py``: one turn-end model reads the same silences transcribed as
they were and enhanced. Hand-made silences: heard as they are, the pauses read as finished
questions, like the ends; enhanced, they stop on a closed-class word, which the shipped model
holds."""

from __future__ import annotations

import pytest

from .helpers import alike_silences, benchmark, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_enhanced")


def test_the_same_model_reads_both_files_of_each_pair(bench, tmp_path, capsys):
    plain = write_lines(tmp_path / "plain.jsonl", alike_silences(20, 0))
    enhanced = write_lines(tmp_path / "enhanced.jsonl", alike_silences(
        20, 0, text=lambda i, end: "Could you add milk?" if end else "Could you add the",
        words=lambda i, end: [["Could", 0.9], ["you", 0.99], ["add", 0.95], ["milk?" if end else "the", 0.9]]))
    bench.main(["--checkpoint", "single_user", "--threshold", "0.05", "--plain", plain, "--enhanced", enhanced])
    out = capsys.readouterr().out
    assert out.startswith("single_user at 0.05")
    rows = [line for line in out.splitlines() if line.startswith("| plain.jsonl") or line.startswith("| enhanced")]
    assert len(rows) == 2
    assert rows[0].startswith("| plain.jsonl | as it is | pause 0.500 | pause: ")
    assert rows[1].startswith("| enhanced.jsonl | enhanced | pause 1.000 | pause: ")
    # heard as they are the pauses are taken with the ends; enhanced, held
    assert "pause: 1.000 / 1.00 at 0.26 s" in rows[0] and "pause: 0.000 / 1.00 at 0.26 s" in rows[1]


def test_files_come_in_pairs(bench, tmp_path, capsys):
    one = write_lines(tmp_path / "a.jsonl", alike_silences(4, 0))
    with pytest.raises(SystemExit):
        bench.main(["--checkpoint", "single_user", "--plain", one, one, "--enhanced", one])
    assert "give them in pairs" in capsys.readouterr().err
