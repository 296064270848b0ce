"""Whisper's decoder as a language model (``fdenv.train.completion``): finished sentences against
the same words cut short, whatever mark the recogniser closed them with; the same number on every
call; what it reads of a transcript."""

from __future__ import annotations

import pytest

from fdenv.train import completion as cm

# (cut short, finished): the same length and final mark, neither ending on a closed-class word,
# so the words model's own columns cannot tell them apart
PAIRS = [("Could you give me?", "Could you help me?"), ("Tell me about the", "Tell me about it."),
         ("What time is the?", "What time is it?"), ("I'd like to start saving money for a trip to",
                                                     "I'd like to start saving money for a trip.")]


@pytest.mark.parametrize("cut, finished", PAIRS)
def test_a_finished_sentence_ends_more_likely_than_the_same_words_cut_short(cut, finished):
    p_cut, p_finished = cm.end_probability(cut), cm.end_probability(finished)
    assert 0.0 < p_cut < 0.1 and p_finished > 0.3, (p_cut, p_finished)
    assert p_finished > 10 * p_cut


def test_the_closing_mark_is_not_read():
    # the recogniser closes a phrase cut by a pause as a sentence; the probability is the words'
    assert cm.end_probability("Could you give me?") == cm.end_probability("Could you give me") \
        == cm.end_probability("could you give me.")


def test_the_same_probability_on_every_call():
    first = [cm.end_probability(t) for pair in PAIRS for t in pair]
    assert [cm.end_probability(t) for pair in PAIRS for t in pair] == first


def test_no_words_is_nothing_to_go_on():
    assert cm.end_probability("") == cm.end_probability("  ...") == 1.0


def test_a_long_transcript_is_read_by_its_last_words():
    tail = " And could you give me"
    assert cm.end_probability("Well, " * 200 + tail) == pytest.approx(
        cm.end_probability("Well, " * 100 + tail), abs=1e-6)
    assert cm.end_probability("Well, " * 200 + tail) < 0.1
