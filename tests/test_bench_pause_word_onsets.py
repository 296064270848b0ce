"""``benchmarks/pause_word_onsets.py``: whether the audio before a scripted pause holds the start
of the word after it, read from what the recogniser writes at the pause."""

from __future__ import annotations

import numpy as np
import pytest

from .helpers import benchmark


@pytest.fixture(scope="module")
def bench():
    return benchmark("pause_word_onsets")


@pytest.mark.parametrize("heard, before, after, leak", [
    ("So my daughter asked me why and honestly I didn't know.", "and honestly I didn't", "know what to tell her.", True),
    ("a recipe for something quick with chickpeas and egg.", "with chickpeas and", "eggs that takes less", True),
    ("a recipe for something quick with ch-", "something quick with", "chickpeas and", True),
    ("I think I left my keys somewhere in the", "somewhere in", "the car or maybe", True),
    ("and honestly I didn't...", "and honestly I didn't", "know what to tell her.", False),  # the word said last
    ("climate change is wider.", "climate change is why", "the teacher keeps", False),       # misheard, not the next
    ("I think I left my keys in the", "my keys in the", "the car", False),  # the next word is the word said too
    ("", "somewhere in", "the car", False),
    ("somewhere in t", "somewhere in", "the car", False),  # one letter is no start of a word
])
def test_a_pause_leaks_when_the_transcript_ends_on_the_next_word_or_its_start(bench, heard, before, after, leak):
    assert bench.leaks(heard, before, after) is leak


@pytest.mark.parametrize("heard, before, is_whole", [
    ("and honestly I didn't...", "and honestly I didn't", True),
    ("and honestly I didn't know.", "and honestly I didn't", False),
    ("and honestly I did", "and honestly I didn't", False),   # a cut too early clips the word before
    ("", "and honestly I didn't", False),
])
def test_a_pause_is_whole_when_the_transcript_ends_on_the_word_said_before_it(bench, heard, before, is_whole):
    assert bench.whole(heard, before) is is_whole


def test_the_turn_so_far_at_each_pause_is_its_pieces_cut_joined_and_padded(bench):
    rate = bench.SAMPLE_RATE
    pieces = [np.full(rate, 1.0, np.float32), np.full(rate // 2, 2.0, np.float32), np.full(rate, 3.0, np.float32)]
    join, tail = int(bench.JOIN_S * rate), int(bench.TAIL_S * rate)
    first, second = bench.prefixes(pieces, back_off_ms=100)
    cut = rate // 10
    assert len(first) == rate - cut + tail and first[: rate - cut].min() == 1.0 and not first[rate - cut:].any()
    assert len(second) == (rate - cut) + join + (rate // 2 - cut) + tail
    assert not second[rate - cut: rate - cut + join].any() and second[rate - cut + join] == 2.0
    assert [len(p) for p in bench.prefixes(pieces, 0)] == [rate + tail, rate + join + rate // 2 + tail]


@pytest.mark.parametrize("argv, msg", [(["--back-off", "-40"], "--back-off"), (["--limit", "0"], "--limit")])
def test_bad_arguments_are_named(bench, capsys, argv, msg):
    with pytest.raises(SystemExit):
        bench.main(argv)
    assert msg in capsys.readouterr().err
