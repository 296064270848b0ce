"""``benchmarks/bench_voices.py``'s prosody measures on espeak-ng's renders of the first pause test
scenes: the pitch ratios and Smart Turn's judgement of the pieces before a pause and of the turns'
ends, as its report prints them."""

from __future__ import annotations

import re

import pytest

from .helpers import benchmark


@pytest.mark.slow
def test_smart_turn_hears_the_pieces_before_a_pause_as_less_finished_than_the_turns_ends(monkeypatch, capsys):
    monkeypatch.setenv("FDENV_CACHE_DIR", "")  # restored after the benchmark points it at its own temporary cache
    benchmark("bench_voices").main(["--tts", "espeak", "--per-set", "0", "--pause-scenes", "10"])
    out = capsys.readouterr().out
    medians = {}
    for label in ("before a pause, one piece (the env)", "before a pause, each piece alone", "at the turn's end"):
        m = re.search(rf"Smart Turn P\(complete\), {re.escape(label)}: median (\d\.\d\d), heard as complete "
                      rf"\(over 0\.5\): (\d+) of (\d+)", out)
        assert m, (label, out)
        medians[label] = float(m.group(1))
        assert int(m.group(2)) <= int(m.group(3))
    assert re.search(r"end F0 / median F0, one piece \(the env\): median \d\.\d\d", out)
    assert medians["before a pause, one piece (the env)"] < medians["at the turn's end"]
