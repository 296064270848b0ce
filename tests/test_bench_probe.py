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


def test_lexical_features_see_the_last_two_words_and_the_final_mark(probe):
    f = probe.lexical_features
    bins = probe.HASH_BINS
    a, b = f("I would like a recipe for"), f("could you give me a recipe for")
    np.testing.assert_array_equal(a[:bins], b[:bins])  # the same last word ...
    np.testing.assert_array_equal(a, b)  # ... and the same last two words: the same vector
    q, s, none = f("is it open on Sunday?"), f("is it open on Sunday."), f("is it open on Sunday")
    assert not np.array_equal(q, s) and not np.array_equal(s, none)
    np.testing.assert_array_equal(q[:2 * bins], none[:2 * bins])  # punctuation is not part of the words
    assert q.sum() == s.sum() == none.sum() == 3.0  # one word, one pair, one mark
    assert f("a recipe for")[-2] == 1.0 and f("a recipe for mushrooms")[-2] == 0.0  # a function word last
    empty = f("")
    assert empty.sum() == 1.0 and empty[-1] == 1.0
    assert not np.array_equal(f("take the saxophone"), f("take the trumpet"))


def test_logistic_regression_on_ready_vectors_finds_a_lexical_cue(probe):
    rng = np.random.default_rng(2)
    complete = ["how long is that ride?", "that sounds good.", "what time is it?", "I need a taxi."]
    partial = ["I want to learn how to", "a recipe for", "the grey one because", "I would like the"]

    def data(n):
        y = rng.integers(0, 2, n)
        texts = [(complete if t else partial)[rng.integers(4)] for t in y]
        return np.stack([probe.lexical_features(t) for t in texts]), y

    train, val = data(300), data(100)
    assert probe.roc_auc(probe.probe(train, val, frames=1, hidden=0), val[1]) > 0.95


def test_scene_play_counts_a_pause_scene_once_and_times_the_first_frame_over_the_threshold(probe):
    P, E, G = probe.PAUSE, probe.END, probe.GAP
    rows = [  # (silence, scene, kind, frames of silence heard, score)
        (0, "pause-1", P, 3, 0.2), (0, "pause-1", P, 4, 0.6),                    # a pause taken at >= 0.6
        (1, "pause-1", P, 3, 0.1), (1, "pause-1", P, 4, 0.7),                    # a second one in the same scene
        (2, "pause-1", E, 3, 0.9),                                               # the pause turn's end: not timed
        (3, "pause-2", P, 3, 0.3), (3, "pause-2", P, 4, 0.3),                    # held below 0.6
        (4, "turn_taking-1", G, 3, 0.65),                                        # one speaker's two turns
        (5, "turn_taking-1", E, 3, 0.4), (5, "turn_taking-1", E, 4, 0.8), (5, "turn_taking-1", E, 5, 0.95),
        (6, "turn_taking-2", E, 3, 0.5), (6, "turn_taking-2", E, 4, 0.5),
    ]
    data = {"silence": np.array([r[0] for r in rows]), "scene": np.array([r[1] for r in rows]),
            "kind": np.array([r[2] for r in rows]), "quiet": np.array([r[3] for r in rows])}
    score = np.array([r[4] for r in rows])

    r = probe.play_scenes(score, data, 0.6)
    assert r["pause"] == {"pause-1": 1, "pause-2": 0}
    assert r["tt"] == {"turn_taking-1": 1, "turn_taking-2": 0}
    assert r["latency"] == {"turn_taking-1": pytest.approx(4 * 0.08)}  # the first frame at or over 0.6
    assert r["gap"] == 1.0
    r = probe.play_scenes(score, data, 0.9)
    assert r["pause"] == {"pause-1": 0, "pause-2": 0} and r["gap"] == 0.0
    assert r["latency"] == {"turn_taking-1": pytest.approx(5 * 0.08)}
    r = probe.play_scenes(score, data, 0.99)
    assert r["tt"] == {"turn_taking-1": 0, "turn_taking-2": 0} and r["latency"] == {}
