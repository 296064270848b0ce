"""``benchmarks/turn_end_denoised_sound.py``: the single-user recipe with its sound descriptor from
the microphone or noise-suppressed. Hand-made silences in a car: the words, the confidence and the
microphone's descriptor are the same; only the noise-suppressed descriptor (the silence far below
the speech at the assistant's silences, held at the pauses) tells them apart."""

from __future__ import annotations


import numpy as np
import pytest

from fdenv.train import turn_end as te

from .helpers import alike_silences, benchmark, collect_files, write_lines

K = 8  # the silence's windows at the end of each descriptor (0.256 s)


def _descriptor(silence_below: float) -> list:
    d = np.zeros((te.SOUND_WINDOWS, te.SOUND_BANDS))
    d[-K:] = -silence_below
    return d.tolist()


def _rows(n, seed):
    return alike_silences(n, seed, room=lambda i, end: {"preset": "car_cabin"}, sound=lambda i, end: _descriptor(0.5),
                          sound_denoised=lambda i, end: _descriptor(4.0 if end else 1.0))


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_denoised_sound")


def test_the_benchmark_learns_what_only_the_noise_suppressed_sound_tells(bench, tmp_path, capsys):
    argv = collect_files(tmp_path, _rows(60, 0), _rows(30, 1))
    write_lines(tmp_path / "car.jsonl", _rows(20, 2))
    bench.main(argv + ["--rooms", str(tmp_path / "car.jsonl")])
    out = capsys.readouterr().out
    assert out.startswith("60 train silences, 30 validation silences")
    assert ("train, car cabin: 60 silences, the silence 0.5 below the speech on the microphone, 2.5 "
            "noise-suppressed") in out
    rows = {line.split(" | ")[0]: line for line in out.splitlines() if line.startswith("| ")}
    assert "pause 0.500" in rows["| words + sound + confidence, microphone"]
    assert "pause 1.000" in rows["| words + sound + confidence, noise-suppressed"]
    assert "pause: 0.000 / 1.00 at 0.26 s" in rows["| words + sound + confidence, noise-suppressed"]
    car = [line for line in out.splitlines() if line.startswith("car.jsonl, ")]
    assert len(car) == 2 and car[1].startswith("car.jsonl, words + sound + confidence, noise-suppressed at ")
    assert car[1].endswith("pause: 0.000 / 1.00 at 0.26 s")


def test_files_without_the_noise_suppressed_sound_are_named(bench, tmp_path):
    rows = _rows(4, 0)
    del rows[2]["sound_denoised"]
    write_lines(tmp_path / "old.jsonl", rows)
    with pytest.raises(ValueError, match=r"old.jsonl:3: no \"sound_denoised\" descriptor.*collect again"):
        bench.main(["--train", str(tmp_path / "old.jsonl"), "--val", str(tmp_path / "old.jsonl")])
