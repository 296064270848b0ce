"""``benchmarks/turn_end_second_look.py``: a first-look checkpoint with a second look at a silence,
its threshold the lowest that adds no early answer. A hand-made model whose P rises with the
silence and with the assistant's name, on hand-made silences with known answers."""

from __future__ import annotations

import pytest

from .helpers import benchmark, named_silence, rising_turn_end_model, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_second_look")


def _model(tmp_path, within: float | None = 0.3):
    """logit -2 + 4 when named + 1 per silence step passed, deciding at its first look at 0.5."""
    rising_turn_end_model(within).save(tmp_path / "m.json")
    return str(tmp_path / "m.json")


def _val(tmp_path) -> str:
    """A pause that lasts to 1.216 s (P 0.982 there, six silence steps passed); a named turn end
    (P 0.881 at its first look) and an unnamed one (P 0.119 at its first look, 0.982 at 1.216 and
    1.296 s)."""
    return write_lines(tmp_path / "val.jsonl", [named_silence("pause-1", "pause", False, [0] * 13),
                                                 named_silence("turn_taking-1", "turn_taking", True, [1] * 17),
                                                 named_silence("turn_taking-2", "turn_taking", False, [1] * 17)])


def _rows(capsys) -> list[str]:
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]


def test_a_second_look_adds_no_early_answer(bench, tmp_path, capsys):
    """At 1.216 s the pause is still on at P 0.982, so the second look's threshold rises over it
    (0.99) and answers nothing; at 1.296 s the pause is over, any threshold adds no early answer,
    and the unnamed turn end is answered there: its wait falls from the 2 s endpoint to 1.296 s.
    The p90 of two waits, 0.256 s and w, is 0.256 + 0.9 (w - 0.256)."""
    bench.main(["--checkpoint", _model(tmp_path), "--val", _val(tmp_path), "--at", "1.216", "1.296"])
    assert _rows(capsys) == ["| none | - | 0/1 | 0.50 | 0.50 | 1.83 s (2) |",
                             "| 1.216 s | 0.99 | 0/1 | 0.50 | 0.50 | 1.83 s (2) |",
                             "| 1.296 s | 0.01 | 0/1 | 0.50 | 1.00 | 1.19 s (2) |"]


def test_extra_early_answers_buy_an_earlier_look(bench, tmp_path, capsys):
    bench.main(["--checkpoint", _model(tmp_path), "--val", _val(tmp_path), "--at", "1.216", "--extra-early", "1"])
    assert _rows(capsys)[1:] == ["| 1.216 s | 0.01 | 1/1 | 0.50 | 1.00 | 1.12 s (2) |"]


def test_bad_input_is_named(bench, tmp_path, capsys):
    val = _val(tmp_path)
    for within, says in ((None, "answers at any time in a silence, past its first look"),
                         (0.45, "answers within 0.45 s in a silence, past its first look")):
        with pytest.raises(SystemExit):
            bench.main(["--checkpoint", _model(tmp_path, within=within), "--val", val])
        assert says in capsys.readouterr().err
    for bad, msg in (("0.2", "--at=0.2; a second look falls after the first"), ("soon", "'soon': seconds of silence"),
                     ("2.5", "before the endpoint (2 s)")):
        with pytest.raises(SystemExit):
            bench.main(["--checkpoint", _model(tmp_path), "--val", val, "--at", bad])
        assert msg in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--checkpoint", _model(tmp_path), "--val", val, "--extra-early", "-1"])
    assert "--extra-early=-1; a count of silences" in capsys.readouterr().err
