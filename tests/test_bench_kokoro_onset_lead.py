"""``benchmarks/kokoro_onset_lead.py``: how long before its aligned start a voice sounds a word."""

from __future__ import annotations

import numpy as np
import pytest

from .helpers import benchmark, tone


@pytest.fixture(scope="module")
def bench():
    return benchmark("kokoro_onset_lead")


def test_the_lead_is_the_aligned_start_minus_the_sounds_onset(bench):
    sr = 16000
    audio = np.concatenate([np.zeros(sr // 10, np.float32), tone(0.5, sr)])  # sound from 100 ms
    # the trim keeps a 3 ms margin before the first voiced 5 ms frame
    assert bench.onset_lead_ms(audio, sr, first_word_start=int(0.170 * sr)) == pytest.approx(73, abs=1)
    assert bench.onset_lead_ms(audio, sr, first_word_start=int(0.097 * sr)) == pytest.approx(0, abs=1)


def test_silence_has_no_onset(bench):
    with pytest.raises(ValueError, match="no sound"):
        bench.onset_lead_ms(np.zeros(16000, np.float32), 16000, 100)


def test_turn_texts_are_the_validation_pause_turns(bench):
    texts = bench.turn_texts(3)
    assert len(texts) == 3 and all(t and "[pause" not in t for t in texts)


def test_bad_arguments_are_named(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--texts", "0"])
    assert "--texts" in capsys.readouterr().err
