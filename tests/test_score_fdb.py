"""FDB rules on hand-built segment and word lists (``paper`` and ``fdb_code`` profiles, SPEC 6)."""

import math

import numpy as np
import pytest

from fdenv.score import fdb
from fdenv.score.asr import Word
from fdenv.score.judge import OfflineJudge

W = Word


def words(*spec):
    return [W(t, s, e) for t, s, e in spec]


# ------------------------------------------------------------------ backchannel definition


def test_backchannel_definition():
    assert fdb.is_backchannel((1.0, 1.5), words(("mm-hmm", 1.1, 1.4)))
    assert fdb.is_backchannel((1.0, 1.5), [])
    assert not fdb.is_backchannel((1.0, 1.5), words(("oh", 1.0, 1.2), ("yes", 1.2, 1.4)))  # 2 words
    assert not fdb.is_backchannel((1.0, 2.0), [])  # 1 s is not shorter than 1 s
    # words outside the segment do not count; touching ends do not overlap
    assert fdb.is_backchannel((1.0, 1.5), words(("a", 0.5, 1.0), ("b", 1.5, 1.8), ("c", 1.2, 1.3)))


def test_missing_word_end_times():
    # a word without an end belongs to the segment its start lies in
    assert fdb.word_in(W("okay", 1.2, None), (1.0, 1.5))
    assert not fdb.word_in(W("okay", 1.6, None), (1.0, 1.5))
    assert not fdb.is_backchannel((1.0, 1.5), words(("hmm", 1.0, 1.2), ("okay", 1.3, None)))
    # fdb_code: span falls back to the last word's start
    assert fdb.fdb_code_tor(words(("hmm", 2.0, 2.3), ("okay", 2.4, None))) == 0
    assert fdb.fdb_code_tor(words(("hmm", 2.0, 2.3), ("okay", 3.1, None))) == 1


# ------------------------------------------------------------------ pause handling (paper)

PAUSE = (2.0, 6.0)


def test_pause_no_speech():
    r = fdb.paper_pause([], [], PAUSE)
    assert r["to"] == 0 and all(r[k] is None for k in fdb.KEYS if k != "to")


def test_pause_only_backchannels():
    segs = [(2.5, 3.0), (4.0, 4.6)]
    assert fdb.paper_pause(segs, words(("mm", 2.6, 2.9), ("yeah", 4.1, 4.4)), PAUSE)["to"] == 0


def test_pause_speech_before_the_pause_is_not_a_takeover():
    assert fdb.paper_pause([(0.0, 1.9)], words(("so", 0.1, 0.3), ("well", 0.5, 0.9)), PAUSE)["to"] == 0


def test_pause_takeover():
    assert fdb.paper_pause([(5.0, 7.5)], [], PAUSE)["to"] == 1
    assert fdb.paper_pause([(1.0, 2.0)], [], PAUSE)["to"] == 1  # closed intervals: touching the start counts
    # short but with two words: not a backchannel
    assert fdb.paper_pause([(3.0, 3.8)], words(("oh", 3.0, 3.3), ("right", 3.4, 3.7)), PAUSE)["to"] == 1


# ------------------------------------------------------------------ backchannel (paper)

WIN = (1.0, 9.0)
TRPS = (3.0, 6.0)


def test_backchannel_no_speech_gets_uniform_p():
    r = fdb.paper_backchannel([], [], WIN, TRPS)
    n = 40
    q = fdb.kernel_histogram([t + 0.2 for t in TRPS], WIN[0], n)
    assert r["to"] == 0 and r["freq_hz"] == 0.0 and r["n_backchannels"] == 0
    assert r["jsd"] == pytest.approx(fdb.jsd_base2(np.ones(n), q))
    assert 0 < r["jsd"] < 1


def test_backchannel_only_backchannels():
    on_time = fdb.paper_backchannel([(3.2, 3.6), (6.2, 6.6)], [], WIN, TRPS)
    late = fdb.paper_backchannel([(1.2, 1.6), (8.0, 8.4)], [], WIN, TRPS)
    assert on_time["to"] == 0 and on_time["n_backchannels"] == 2
    assert on_time["freq_hz"] == pytest.approx(2 / 8)
    assert on_time["jsd"] < 0.05 < late["jsd"]  # P centred where Q is: near 0
    assert 0 <= late["jsd"] <= 1


def test_backchannel_takeover_and_long_segment():
    r = fdb.paper_backchannel([(3.2, 3.6), (5.0, 8.5)], [], WIN, TRPS)  # a segment over 3 s
    assert r["to"] == 1 and r["freq_hz"] is None and r["jsd"] is None and r["n_backchannels"] == 1


def test_backchannel_crossing_a_window_edge():
    # onset inside, end past the window: counted, its duration is the whole segment's (0.8 s)
    r = fdb.paper_backchannel([(8.6, 9.4)], [], WIN, TRPS)
    assert r["to"] == 0 and r["n_backchannels"] == 1
    # onset before the window: not counted, and not a takeover (still a backchannel)
    r = fdb.paper_backchannel([(0.5, 1.3)], [], WIN, TRPS)
    assert r["to"] == 0 and r["n_backchannels"] == 0
    # 1.2 s across the edge: not a backchannel -> takeover
    assert fdb.paper_backchannel([(8.5, 9.7)], [], WIN, TRPS)["to"] == 1


def test_backchannel_explicit_distribution():
    dist = [0.0] * 10 + [1.0] + [0.0] * 29  # all mass in the bin [3.0, 3.2)
    r = fdb.paper_backchannel([(3.0, 3.4)], [], WIN, (), distribution=dist)
    r_far = fdb.paper_backchannel([(7.0, 7.4)], [], WIN, (), distribution=dist)
    assert r["jsd"] < r_far["jsd"]
    # a distribution of another length is stretched by index
    assert fdb.stretch(np.array([0.0, 1.0]), 3).tolist() == [0.0, 0.5, 1.0]


def test_jsd_base2_bounds():
    assert fdb.jsd_base2(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1.0)
    assert fdb.jsd_base2(np.array([1.0, 1.0]), np.array([2.0, 2.0])) == pytest.approx(0.0)
    assert fdb.jsd_base2(np.zeros(3), np.ones(3)) is None


# ------------------------------------------------------------------ turn-taking (paper)

E = 3.0


def test_turn_taking_no_speech_and_only_backchannels():
    for segs, ws in (([], []), ([(3.4, 3.8)], words(("mm", 3.5, 3.7)))):
        r = fdb.paper_turn_taking(segs, ws, E)
        assert r["to"] == 0 and r["latency_s"] is None


def test_turn_taking_latency():
    r = fdb.paper_turn_taking([(3.5, 6.0)], [], E)
    assert r["to"] == 1 and r["latency_s"] == pytest.approx(0.5) and r["overlapping"] is False


def test_turn_taking_onset_before_the_turn_end():
    r = fdb.paper_turn_taking([(2.2, 5.0)], [], E)
    assert r["to"] == 1 and r["latency_s"] == pytest.approx(-0.8) and r["overlapping"] is True


def test_turn_taking_window_is_8_s():
    assert fdb.paper_turn_taking([(11.5, 13.0)], [], E)["to"] == 0
    assert fdb.paper_turn_taking([(10.9, 13.0)], [], E)["latency_s"] == pytest.approx(7.9)


def test_turn_taking_backchannel_then_answer():
    r = fdb.paper_turn_taking([(3.2, 3.6), (4.0, 6.0)], words(("mm", 3.3, 3.5)), E)
    assert r["latency_s"] == pytest.approx(1.0)


# ------------------------------------------------------------------ interruption (paper)

S, F = 5.0, 6.5


def test_interruption_never_stops():
    r = fdb.paper_interruption([(3.5, 20.0)], [], S, F, OfflineJudge())
    assert r["spoke_at_interrupt"] and r["did_not_stop"]
    assert r["stop_latency_s"] is None and r["to"] == 0 and r["relevance"] is None


def test_interruption_stops_and_answers():
    ws = words(("sure", 7.1, 7.4), ("dinner", 7.5, 7.9), ("plans", 8.0, 8.3))
    r = fdb.paper_interruption([(3.5, 5.4), (7.1, 8.4)], ws, S, F, OfflineJudge(),
                               "what time is it", "wait, what about dinner plans")
    assert r["spoke_at_interrupt"] and not r["did_not_stop"]
    assert r["stop_latency_s"] == pytest.approx(0.4)
    assert r["to"] == 1 and r["latency_s"] == pytest.approx(0.6)
    assert r["response_text"] == "sure dinner plans" and r["relevance"] == 5 and r["judge"] == "offline"


def test_interruption_response_before_the_user_finished():
    r = fdb.paper_interruption([(3.5, 5.2), (6.0, 8.0)], [], S, F)
    assert r["to"] == 1 and r["latency_s"] == pytest.approx(-0.5) and r["relevance"] is None


def test_interruption_silent_and_backchannel_only():
    r = fdb.paper_interruption([], [], S, F, OfflineJudge())
    assert r["to"] == 0 and not r["spoke_at_interrupt"] and r["stop_latency_s"] is None
    r = fdb.paper_interruption([(7.0, 7.4)], words(("okay", 7.0, 7.3)), S, F)
    assert r["to"] == 0


def test_interruption_old_answer_does_not_count_and_window_is_f_plus_10():
    # the segment covering s is the old answer; a segment starting after f + 10 is not a response
    r = fdb.paper_interruption([(3.5, 6.0), (16.6, 18.0)], [], S, F)
    assert r["to"] == 0 and r["stop_latency_s"] == pytest.approx(1.0)


def test_response_span_follows_short_gaps():
    segs = [(7.0, 8.0), (8.5, 9.0), (10.5, 11.0)]
    assert fdb.response_span(segs, segs[0]) == [(7.0, 8.0), (8.5, 9.0)]


# ------------------------------------------------------------------ fdb_code rules


def test_fdb_code_take_turn_rule():
    assert fdb.fdb_code_tor([]) == 0
    three = words(("a", 0.0, 0.3), ("b", 0.3, 0.6), ("c", 0.6, 0.9))
    assert fdb.fdb_code_tor(three) == 0
    assert fdb.fdb_code_tor(three + words(("d", 0.9, 0.95))) == 1
    assert fdb.fdb_code_tor(words(("a", 0.0, 0.5), ("b", 0.6, 1.0))) == 1  # exactly 1 s


def test_fdb_code_latency_clipped_at_zero():
    ws = words(("yes", 1.5, 1.9), ("that", 2.0, 2.2), ("works", 2.2, 2.6))
    assert fdb.fdb_code_turn_taking(ws, 2.0)["latency_s"] == 0
    assert fdb.fdb_code_interruption(ws, 1.0)["latency_s"] == pytest.approx(0.5)
    assert fdb.fdb_code_turn_taking(words(("mm", 2.4, 2.6)), 2.0)["latency_s"] is None


def test_fdb_code_backchannel_walk():
    # a segment over 3 s stops the walk and is not counted
    r = fdb.fdb_code_backchannel([(1.0, 1.5), (2.0, 5.5), (7.0, 7.4)], [], 10.0, [1.0] * 51)
    assert r["to"] == 1 and r["n_backchannels"] == 1 and r["freq_hz"] == pytest.approx(0.1)
    # the official quirk: a later short segment overwrites the verdict
    ws = words(("well", 1.0, 1.4), ("I", 1.5, 1.6), ("think", 1.7, 2.0), ("so", 2.1, 2.4))
    r = fdb.fdb_code_backchannel([(1.0, 2.5), (5.0, 5.3)], ws, 10.0, [1.0] * 51)
    assert r["to"] == 0 and r["n_backchannels"] == 2
    # no backchannel: JSD 1
    assert fdb.fdb_code_backchannel([], [], 10.0, [1.0] * 51)["jsd"] == 1


def test_fdb_code_jsd_bins():
    from scipy.spatial.distance import jensenshannon

    # bins of 200 ms from 0, int(span / 0.2) + 1 of them, each backchannel fills int(a/0.2)..int(b/0.2)
    got = fdb.fdb_code_jsd([(0.0, 0.1)], 0.3, [0.5, 0.5])
    assert got == pytest.approx(jensenshannon([1, 1e-10], [0.5, 0.5]), abs=1e-6)
    assert fdb.fdb_code_jsd([(0.0, 0.3)], 0.3, [0.5, 0.5]) == pytest.approx(0.0, abs=1e-6)


def test_fdb_code_word_match_quirks():
    seg = (2.0, 3.0)
    ws = words(("in", 2.2, 2.5), ("across-end", 2.9, 3.2), ("across-start", 1.8, 2.1), ("after", 3.0, 3.3),
               ("before", 1.5, 2.0))
    assert [w.text for w in fdb.fdb_code_words_in(seg, ws)] == ["in", "across-end", "across-start", "after"]
    # a word without an end is skipped when it starts before the segment end
    assert fdb.fdb_code_words_in(seg, [W("x", 2.5, None)]) == []


def test_trp_distribution_shape():
    d = fdb.trp_distribution([2.1], 5.0)
    assert len(d) == 26 and math.isclose(sum(d), 1.0)
    assert int(np.argmax(d)) == 11  # centred at 2.1 + 0.2 s, in the bin [2.2, 2.4)


def test_explicit_distribution_lies_over_the_monologue_in_both_profiles():
    # all mass in the monologue's first 200 ms; the monologue starts 5 s into the (cropped) track
    dist = [1.0] + [0.0] * 9
    gt = fdb.fdb_ground_truth(dist, (), (5.0, 7.0), 7.0)
    assert len(gt) == 36 and sum(gt[:25]) == 0 and gt[25] == max(gt) > 0.9 and sum(gt) == pytest.approx(1.0)
    on_time = fdb.fdb_code_jsd([(5.0, 5.1)], 7.0, gt)
    late = fdb.fdb_code_jsd([(6.6, 6.7)], 7.0, gt)
    assert on_time < late
    # a monologue that is the whole track (FDB's own samples) keeps the file's distribution as is
    assert fdb.fdb_ground_truth([0.2, 0.8], (), (0.0, 7.0), 7.0) == [0.2, 0.8]
    assert fdb.fdb_ground_truth(None, (1.0,), (0.0, 3.0), 3.0) == fdb.trp_distribution((1.0,), 3.0)


def test_fdb_code_jsd_without_backchannels_is_the_float_1():
    assert fdb.fdb_code_jsd([], 10.0, [0.5, 0.5]) == 1.0 and isinstance(fdb.fdb_code_jsd([], 10.0, [1.0]), float)
