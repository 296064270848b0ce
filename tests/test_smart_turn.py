"""Smart Turn v3 as the turn-end model hears it: the input the model card asks for (checked against
the reference feature extractor pipecat ships beside the weights), a probability that is the same
bit for bit on every call, a clear error naming the install when the weights are missing, and the
turn-end model's columns for it."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from fdenv.cli import turn_end as cli
from fdenv.train import smart_turn as st
from fdenv.train import turn_end as te

from .test_turn_end import _the_fit_command_needs


def _reference_log_mel():
    """pipecat's own numpy port of Whisper's feature extractor, loaded from its file (pipecat's
    package ``__init__`` needs its dependencies, which fdenv does not install)."""
    path = st.weights_path().parents[1] / "_whisper_features.py"
    spec = importlib.util.spec_from_file_location("smart_turn_reference_features", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_whisper_log_mel_features


def _voice(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * st.RATE)) / st.RATE
    return (0.2 * np.sin(2 * np.pi * 140 * t) * (1 + np.sin(2 * np.pi * 3 * t)) + rng.normal(0, 0.01, len(t))
            ).astype(np.float32)


@pytest.mark.parametrize("seconds", [1.5, 8.0, 11.0])
def test_the_input_is_the_model_cards_last_8_s_left_padded_as_the_reference_extractor_makes_it(seconds):
    x = _voice(seconds)
    last = x[-8 * st.RATE:]
    expected = _reference_log_mel()(np.pad(last, (8 * st.RATE - len(last), 0)))
    got = st.model_input(x)
    assert got.shape == (1, 80, 800) and got.dtype == np.float32
    assert np.abs(got[0] - expected).max() < 1e-5


def test_the_probability_is_deterministic_and_reads_the_last_8_s_only():
    windows = list(_voice(512 * 320 / st.RATE, seed=1).reshape(-1, 512))  # 320 windows of 32 ms: 10.24 s
    p = st.smart_turn_probability(windows)
    assert 0.0 <= p <= 1.0 and p == round(p, 4)
    assert st.smart_turn_probability(windows) == p
    # what came more than 8 s before the decision does not count
    earlier = [w * 0 + 0.3 for w in windows[:30]]
    assert st.smart_turn_probability(earlier + windows) == p
    with pytest.raises(ValueError, match="no audio"):
        st.smart_turn_probability([])


def test_without_pipecat_the_error_names_the_install(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install --no-deps pipecat-ai==1\.14\.0"):
        st.weights_path()


def test_smart_turn_columns_are_the_probability_and_its_clipped_logit():
    assert te.smart_turn_features(0.5) == pytest.approx([0.5, 0.0])
    assert te.smart_turn_features(0.9) == pytest.approx([0.9, np.log(9) / 3])
    assert te.smart_turn_features(1.0) == pytest.approx([1.0, te.SMART_TURN_LOGIT_CLIP / 3])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        te.smart_turn_features(1.2)


def test_a_model_with_smart_turn_learns_what_the_words_cannot_and_round_trips(tmp_path):
    """The same words, Smart Turn sure of the end (1) or not (0): only its columns tell them apart;
    the checkpoint keeps them and says so, and the fit command reads them from the lines."""
    texts = ["we went to the station"] * 80
    labels = [i % 2 for i in range(80)]
    probs = [0.9 - 0.002 * i if y else 0.2 + 0.002 * i for i, y in enumerate(labels)]
    heard = te.fit(texts, [False] * 80, labels, smart_turns=probs)
    assert heard.uses_smart_turn and not (heard.uses_sound or heard.uses_confidence or heard.uses_pitch)
    assert len(heard.weights) == te.N_FEATURES + te.N_SMART_TURN
    p = np.array([heard.prob(t, smart_turn=q) for t, q in zip(texts, probs)])
    assert cli.roc_auc(p, np.array(labels)) == 1.0
    with pytest.raises(ValueError, match="Smart Turn"):
        heard.prob(texts[0])
    heard.save(tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text())["smart_turn"] is True
    back = te.load(tmp_path / "s.json")
    assert back.uses_smart_turn and back.prob(texts[0], smart_turn=probs[0]) == pytest.approx(
        heard.prob(texts[0], smart_turn=probs[0]), abs=1e-5)
    # beside the pitch, each has its place: the layout is read back from the count alone
    both = te.fit(texts, [False] * 80, labels, pitches=[[None] * te.PITCH_FRAMES] * 80, smart_turns=probs)
    assert both.uses_pitch and both.uses_smart_turn and not both.uses_confidence
    lines = [{"set": "pause", "scene_id": f"s{i}", "text": t, "named": False, "silence_s": 0.256, "labels": [y] * 3,
              "smart_turn": q} for i, (t, y, q) in enumerate(zip(texts, labels, probs))]
    assert _the_fit_command_needs(tmp_path, lines, "smart_turn", smart_turn=True).uses_smart_turn
