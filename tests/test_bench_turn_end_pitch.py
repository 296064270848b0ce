"""``benchmarks/turn_end_pitch.py``: the pitch of the turn's end as more columns of the turn-end
model. Hand-made silences: the words, sound and confidence are the same; only the pitch (a fall at
the assistant's silences, held at the pauses) tells them apart."""

from __future__ import annotations


import pytest

from fdenv.train import turn_end as te

from .helpers import alike_silences, benchmark, collect_files, write_lines
from .test_turn_end import _voiced_windows


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_pitch")


@pytest.fixture(scope="module")
def contours():
    return {end: [te.pitch_descriptor(_voiced_windows(1.5, end, f0=120 + 7 * i, seed=i)) for i in range(6)]
            for end in ("held", "fall")}


def _rows(n, seed, contours):
    return alike_silences(n, seed, pitch=lambda i, end: contours["fall" if end else "held"][(i // 2 + seed) % 6])


def test_the_benchmark_learns_what_only_the_pitch_tells(bench, contours, tmp_path, capsys):
    bench.main(collect_files(tmp_path, _rows(60, 0, contours), _rows(30, 1, contours)))
    out = capsys.readouterr().out
    assert out.startswith("60 train silences, 30 validation silences")
    held, = [line for line in out.splitlines() if line.startswith("train, pause inside a turn")]
    fall, = [line for line in out.splitlines() if line.startswith("train, the assistant's")]
    assert "30 silences, 100% voiced" in held and "30 silences, 100% voiced" in fall
    assert float(held.split("level ")[1].split(" st")[0]) == pytest.approx(0.0, abs=0.5)
    assert float(fall.split("level ")[1].split(" st")[0]) < -3.5
    rows = {line.split(" | ")[0].split(" (")[0]: line for line in out.splitlines() if line.startswith("| ")}
    assert "pause 0.500" in rows["| words + sound + confidence"]  # nothing but the pitch differs
    for model in ("| words + sound + confidence + pitch", "| words + pitch"):
        assert "pause 1.000" in rows[model] and "pitch weights" in rows[model]
        assert "pause: 0.000 / 1.00 at 0.26 s" in rows[model]  # every end at the first look, no pause


def test_files_without_the_pitch_are_named(bench, contours, tmp_path):
    rows = _rows(4, 0, contours)
    del rows[2]["pitch"]
    write_lines(tmp_path / "old.jsonl", rows)
    with pytest.raises(ValueError, match=r"old.jsonl:3: no \"pitch\" contour.*collect again"):
        bench.main(["--train", str(tmp_path / "old.jsonl"), "--val", str(tmp_path / "old.jsonl")])


def test_the_benchmark_hears_the_noise_suppressed_contour_when_asked(bench, contours, tmp_path, capsys):
    """``--pitch-from denoised``: the contour of each line's ``pitch_denoised`` (here the only one
    that tells the silences apart; the microphone's is held throughout), for the contrast and for
    every model with the pitch."""
    def rows(n, seed):
        return alike_silences(n, seed, pitch=lambda i, end: contours["held"][(i // 2 + seed) % 6],
                              pitch_denoised=lambda i, end: contours["fall" if end else "held"][(i // 2 + seed) % 6])

    files = collect_files(tmp_path, rows(60, 0), rows(30, 1))
    bench.main(files)
    plain = capsys.readouterr().out
    bench.main(files + ["--pitch-from", "denoised"])
    denoised = capsys.readouterr().out
    for out, auc in ((plain, "pause 0.500"), (denoised, "pause 1.000")):
        row, = [line for line in out.splitlines() if line.startswith("| words + pitch ")]
        assert auc in row, row
    fall, = [line for line in denoised.splitlines() if line.startswith("train, the assistant's")]
    assert float(fall.split("level ")[1].split(" st")[0]) < -3.5
