"""``benchmarks/turn_end_sound.py``: the stacked model's network scores each train silence with a
network that did not see its scene, and the stacked model plays by the turn-end command's rule.
Hand-made silences: the words are the same, only the sound tells them apart."""

from __future__ import annotations


import numpy as np
import pytest

from fdenv.cli import turn_end as cli
from fdenv.train import turn_end as te

from .helpers import benchmark, collect_files
from .test_turn_end import _toy_sounds


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_sound")


def _rows(n, seed):
    texts, named, labels, sounds = _toy_sounds(n, seed)
    return [{"set": "pause", "scene_id": f"s{seed}-{i // 2}", "text": t, "named": k, "silence_s": 0.256,
             "labels": [y] * 3, "sound": np.round(d, 2).tolist()}
            for i, (t, k, y, d) in enumerate(zip(texts, named, labels, sounds))]


@pytest.mark.slow  # seven small networks: half a minute or more
def test_stacked_scores_are_out_of_fold_and_learn_the_sound(bench):
    train, val = _rows(80, 0), _rows(40, 1)
    oof, scored = bench.stacked_scores(train, val)
    assert oof.shape == (80,) and scored.shape == (40,)
    y_train, y_val = (np.array([r["labels"][0] for r in rows], np.float32) for rows in (train, val))
    assert cli.roc_auc(scored, y_val) > 0.95 and cli.roc_auc(oof, y_train) > 0.95
    # out of fold: one network trained on every train silence scores them otherwise; seeded
    x = np.array([r["sound"] for r in train], np.float32).reshape(80, -1)
    full = bench._network_scores(x, y_train, x)
    assert np.array_equal(full, bench._network_scores(x, y_train, x))
    assert not np.allclose(full, oof)


def test_the_stacked_model_plays_by_the_commands_rule():
    wb = np.zeros(te.N_FEATURES + 2)
    wb[-2], wb[-1] = 2.0, -1.0  # the score's weight, the bias
    m = cli.PlusColumns(wb)
    assert m.prob("we went", False, 0.3, 1.0) == pytest.approx(1 / (1 + np.exp(-1.0)))
    rows = [{"set": "pause", "scene_id": "a", "text": "we went", "named": False, "silence_s": 0.256,
             "labels": [0, 0], "sound": -3.0},
            {"set": "pause", "scene_id": "b", "text": "we went", "named": False, "silence_s": 0.256,
             "labels": [1, 1], "sound": 3.0}]
    assert cli.play(m, rows, 0.5) == [(None, None), (0, 1)]


@pytest.mark.slow  # four fits and six networks: about a minute
def test_the_benchmark_runs_on_collect_files(bench, tmp_path, capsys):
    bench.main(collect_files(tmp_path, _rows(60, 0), _rows(30, 1)))
    out = capsys.readouterr().out
    assert "60 train silences, 30 validation silences" in out
    lines = [line for line in out.splitlines() if line.startswith("| words + sound, stacked")]
    assert len(lines) == 1 and "pause 1.000" in lines[0]


def test_the_benchmark_keeps_the_chosen_sets_and_names_a_choice_the_files_lack(bench, tmp_path):
    """``--sets``: as ``fit --sets``; files without any silence of the chosen sets fail at once,
    naming the option, before any network is trained."""
    with pytest.raises(ValueError, match=r"--train: no silences of the scene sets \['turn_taking'\]"):
        bench.main(collect_files(tmp_path, _rows(6, 0), _rows(4, 1)) + ["--sets", "turn_taking"])
