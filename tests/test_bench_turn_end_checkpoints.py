"""``benchmarks/turn_end_checkpoints.py``: checkpoints side by side on the same files. Two hand-made
models, one that answers every silence at the first look and one that never answers early, on
hand-made silences with known labels: exact rows."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.train import turn_end as te

from .helpers import benchmark, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_checkpoints")


def _silence(scene: str, kind: str, labels: list[int], text: str = "Could you add milk?") -> dict:
    return {"set": kind, "scene_id": scene, "text": text, "named": False, "silence_s": 0.256, "labels": labels}


def test_each_checkpoint_on_each_file_at_its_threshold(bench, tmp_path, capsys):
    te.TurnEndModel(np.zeros(te.N_FEATURES), 5.0, threshold=0.9).save(tmp_path / "eager.json")    # P 0.993
    te.TurnEndModel(np.zeros(te.N_FEATURES), -5.0, threshold=0.9).save(tmp_path / "patient.json")  # P 0.007
    a = write_lines(tmp_path / "a.jsonl", [_silence("pause-1", "pause", [0, 0, 1, 1]),
                                           _silence("pause-2", "pause", [1, 1, 1, 1]),
                                           _silence("turn_taking-1", "turn_taking", [1, 1, 1])])
    b = write_lines(tmp_path / "b.jsonl", [_silence("pause-3", "pause", [0, 0, 0])])
    bench.main(["--checkpoints", str(tmp_path / "eager.json"), str(tmp_path / "patient.json"), "--files", a, b])
    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]  # after the header
    eager, patient = tmp_path / "eager.json", tmp_path / "patient.json"
    # every frame scores alike: an AUC of 0.5 where both labels occur, none where one does
    assert out == [
        f"| {eager} (0.90) | a.jsonl | pause 0.500, turn_taking - | 1/2 | "
        "pause: 1.000 / 1.00 at 0.26 s; turn_taking: 0.000 / 1.00 at 0.26 s |",
        f"| {eager} (0.90) | b.jsonl | pause - | 1/1 | pause: 1.000 / 0.00 at - |",
        f"| {patient} (0.90) | a.jsonl | pause 0.500, turn_taking - | 0/2 | "
        "pause: 0.000 / 0.00 at -; turn_taking: 0.000 / 0.00 at - |",
        f"| {patient} (0.90) | b.jsonl | pause - | 0/1 | pause: 0.000 / 0.00 at - |"]


def test_a_missing_file_is_named(bench, tmp_path, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--checkpoints", "single_user", "--files", str(tmp_path / "nope.jsonl")])
    err = capsys.readouterr().err
    assert "--files" in err and "nope.jsonl" in err and "collect" in err
