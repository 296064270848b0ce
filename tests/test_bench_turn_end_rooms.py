"""``benchmarks/turn_end_rooms.py``: per validation room and threshold, the share of pause episodes
a first-look checkpoint takes and of turn ends it answers at once. A hand-made model (P 0.881 at
its first look when the assistant's name is heard, 0.119 otherwise) on hand-made silences."""

from __future__ import annotations

from .helpers import benchmark, named_silence, rising_turn_end_model, write_lines


def _draw(tmp_path, name: str, named_pause: bool) -> str:
    """One draw of two pause scenes (the first named when ``named_pause``) and two turn ends (the
    first named)."""
    return write_lines(tmp_path / name, [named_silence("pause-1", "pause", named_pause, [0] * 13),
                                         named_silence("pause-2", "pause", False, [0] * 13),
                                         named_silence("turn_taking-1", "turn_taking", True, [1] * 17),
                                         named_silence("turn_taking-2", "turn_taking", False, [1] * 17)])


def test_each_room_reads_pause_episodes_and_turn_ends_answered_at_once(tmp_path, capsys):
    bench = benchmark("turn_end_rooms")
    rising_turn_end_model(0.3).save(tmp_path / "m.json")
    a, b = _draw(tmp_path, "a.jsonl", True), _draw(tmp_path, "b.jsonl", False)
    bench.main(["--checkpoint", str(tmp_path / "m.json"), "--val", f"{a},{b}", a, "--thresholds", "0.1", "0.5", "0.9"])
    out = [line.split() for line in capsys.readouterr().out.splitlines()]
    rows = [line for line in out if line and line[0] in ("0.10", "0.50", "0.90")]
    # two draws read together: each draw's pause scene is an episode of its own (4), as are its turn ends
    assert rows[:3] == [["0.10", "1.000", "of", "4", "1.000", "of", "4"],
                        ["0.50", "0.250", "of", "4", "0.500", "of", "4"],
                        ["0.90", "0.000", "of", "4", "0.000", "of", "4"]]
    assert rows[3:] == [["0.10", "1.000", "of", "2", "1.000", "of", "2"],
                        ["0.50", "0.500", "of", "2", "0.500", "of", "2"],
                        ["0.90", "0.000", "of", "2", "0.000", "of", "2"]]
    lowest = [" ".join(line) for line in out if line[:1] == ["lowest"]]
    assert lowest == ["lowest threshold taking at most 0.05 of the pause episodes: 0.90, answering 0.000 of the "
                      "turn ends at once"] * 2
    bench.main(["--checkpoint", str(tmp_path / "m.json"), "--val", a, "--thresholds", "0.5", "--max-pause", "0.5"])
    assert "at most 0.5 of the pause episodes: 0.50, answering 0.500" in capsys.readouterr().out
