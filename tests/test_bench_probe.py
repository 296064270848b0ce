"""The pause-versus-end probe (``benchmarks/probe_pause_vs_end.py``): its ROC AUC is the
Mann-Whitney statistic, and its classifier separates what is separable. The benchmark itself plays
the real splits (about a minute per split); here the data are synthetic."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from .helpers import benchmark  # noqa: E402


@pytest.fixture(scope="module")
def probe():
    return benchmark("probe_pause_vs_end")


def test_roc_auc_is_the_share_of_correctly_ordered_pairs(probe):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    score = rng.standard_normal(300) + 0.8 * y  # continuous: no ties
    pairs = (score[y == 1][:, None] > score[y == 0][None, :]).mean()
    assert probe.roc_auc(score, y) == pytest.approx(pairs, abs=1e-12)
    assert probe.roc_auc(y.astype(float), y) == 1.0 and probe.roc_auc(-y.astype(float), y) == 0.0


def test_the_classifier_finds_a_cue_in_the_last_frames_only_when_it_is_there(probe):
    rng = np.random.default_rng(1)

    def data(n, cue):  # (n, 24, 10) features; the label shows in the last frame's first feature
        y = rng.integers(0, 2, n)
        x = rng.standard_normal((n, 24, 10)).astype(np.float32)
        x[:, -1, 0] += cue * (2 * y - 1)
        return x, y

    train, val = data(400, 2.0), data(200, 2.0)
    assert probe.roc_auc(probe.probe(train, val, frames=4), val[1]) > 0.9
    train, val = data(400, 0.0), data(200, 0.0)
    assert abs(probe.roc_auc(probe.probe(train, val, frames=4), val[1]) - 0.5) < 0.15
