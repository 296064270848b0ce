"""``fdenv-bench`` (and benchmarks/bench_env.py, which calls it): every measurement runs and prints
its line. Quick mode only, and never a timed assertion: the numbers belong to the machine."""

from __future__ import annotations

import os
import re
import runpy
import sys
from pathlib import Path

import pytest

from fdenv.cli.bench import main

REPO = Path(__file__).resolve().parent.parent
NUM = r" *\d+\.\d+"
LINES = {
    "cart": rf"CartPole-v1 step {NUM} us",
    "step": rf"fdenv/TurnTaking-v0 step {NUM} us   ratio {NUM}x  \(target <= 2x\)",
    "room": r"  with room \{.*\}",
    "silent": rf"    silent agent {NUM} us   ratio {NUM}x  \(target <= 4x\)",
    "speaking": rf"    speaking agent \(echo each step\){NUM} us   ratio {NUM}x  \(target <= 8x\)",
    "reset": rf"reset, warm clip cache {NUM} ms  \(target < 20 ms\)",
    "render": rf"render a cold 60 s scene \(espeak\) {NUM} s   \(target < 1 s\)",
}


def _check(out: str, names: list[str]) -> None:
    lines = [line for line in out.splitlines() if not line.startswith("(quick")]
    assert len(lines) == len(names), out
    for line, name in zip(lines, names):
        assert re.fullmatch(LINES[name], line), (name, line)


def test_quick_prints_every_measurement(capsys):
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("(quick: 200 steps")
    _check(out, list(LINES))
    assert '  with room {"preset": "office", "mics": "circular4", "echo_gain": 0.5}' in out


def test_script_calls_the_cli_without_a_room_and_a_temporary_cache(capsys, monkeypatch):
    """`make bench` runs benchmarks/bench_env.py; with no cache dir given it uses a temporary one."""
    monkeypatch.delenv("FDENV_CACHE_DIR", raising=False)
    monkeypatch.setattr(sys, "argv", ["bench_env.py", "--quick", "--steps", "20", "--room", "none"])
    with pytest.raises(SystemExit) as info:
        runpy.run_path(str(REPO / "benchmarks" / "bench_env.py"), run_name="__main__")
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("(quick: 20 steps")
    _check(out, ["cart", "step", "reset", "render"])
    assert "FDENV_CACHE_DIR" not in os.environ


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--room", "{not json"]])
def test_bad_options_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "fdenv-bench: error:" in capsys.readouterr().err
