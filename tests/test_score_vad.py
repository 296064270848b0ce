"""Segmentation of the assistant track (SPEC 5.1, ``paper`` profile): Silero decides what is
speech, the edges are the sound's own (fdenv.score.vad). Real espeak speech at every phase of
Silero's 32 ms window grid."""

from __future__ import annotations

import numpy as np
import pytest
from silero_vad import get_speech_timestamps

from fdenv.render import Renderer
from fdenv.score import vad

SR = 16000
PHASES = range(0, 512, 32)  # where the onset falls inside Silero's 512-sample window


@pytest.fixture(scope="module")
def speak():
    r = Renderer(backend="espeak", sample_rate=SR)

    def clip(text, voice="en-us+m3"):
        c = r.clip(text, voice)
        on = np.flatnonzero(np.abs(c) > 1e-3)
        return c[on[0] : on[-1] + 1]  # first and last sounding sample are the clip's edges
    return clip


def place(*clips_at, total=None):
    """A track with each (clip, start_sample)."""
    n = total or max(a + len(c) for c, a in clips_at) + 8000
    x = np.zeros(n, np.float32)
    for c, a in clips_at:
        x[a : a + len(c)] += c
    return x


def silero_alone(x):
    """Silero's own onset (pad removed), what the paper profile used to report."""
    ts = get_speech_timestamps(x, vad.load_model(), threshold=0.5, min_speech_duration_ms=250,
                               min_silence_duration_ms=100, speech_pad_ms=30)
    return ts[0]["start"] + 480


@pytest.mark.parametrize("text, voice", [
    ("Nine in the morning is when the next train leaves.", "en-gb+f5"),  # a nasal onset
    ("Five minutes from now, I think.", "en-us+m3"),  # fricatives: Silero starts at the vowel
    ("Sure, I can help you with that.", "en-us+f4"),
    ("Hello there, how can I help?", "en-gb-x-rp+m6"),
])
def test_onset_is_the_first_sounding_sample_and_end_the_last_at_every_window_phase(speak, text, voice):
    c = speak(text, voice)
    late = []
    for ph in PHASES:
        a = 8000 + ph
        x = place((c, a))
        segs = vad.segments(x, "paper", cache=False)  # one per phrase
        assert segs[0][0] * SR == pytest.approx(a, abs=32), ph  # 2 ms
        # a word's fading tail ends once it is 35 dB under the loudest: within 25 ms of the last sample
        assert -400 <= segs[-1][1] * SR - (a + len(c)) <= 32, ph
        late.append((silero_alone(x) - a) / SR)
    # Silero alone is late on these onsets at some phase (why the edges are refined at all)
    assert max(late) > 0.04


def test_speech_that_silero_drops_as_too_short_still_starts_the_segment(speak):
    # "The ne-" is 0.22 s to Silero (the "xt tr" cluster reads as silence), under min_speech 250 ms;
    # the sound runs on without a 100 ms gap, so the answer starts at "The", not at "train".
    c = speak("The next train leaves at nine.")
    x = place((c, 8320))
    assert (silero_alone(x) - 8320) / SR > 0.5
    segs = vad.segments(x, "paper", cache=False)
    assert segs[0][0] * SR == pytest.approx(8320, abs=32) and segs[-1][1] * SR == pytest.approx(8320 + len(c), abs=32)


@pytest.mark.parametrize("voice", ["en-us+m3", "en-gb-x-rp+m6", "en-us+f1"])
def test_a_short_answer_that_silero_splits_at_a_fricative_is_one_segment(speak, voice):
    # "That's | September": Silero's probability stays low for 100 ms on the "s" at some window
    # phases, so it returns two sub-second segments, each with at most one word: two backchannels
    # where the oracle answered (turn_taking-0052 scored TO 0). The sound runs on without a gap.
    c = speak("That's September.", voice)
    splits = 0
    for ph in PHASES:
        a = 8000 + ph
        x = place((c, a))
        ts = get_speech_timestamps(x, vad.load_model(), threshold=0.5, min_speech_duration_ms=250,
                                   min_silence_duration_ms=100, speech_pad_ms=30)
        splits += len(ts) > 1
        (s, e), = vad.segments(x, "paper", cache=False)
        assert s * SR == pytest.approx(a, abs=32) and e * SR == pytest.approx(a + len(c), abs=400), ph
    assert splits, "Silero alone splits this answer at some phase (why segments are joined)"


def test_merge_close_joins_only_gaps_under_silero_minimum_silence():
    gap = vad.MIN_SILENCE_MS * SR // 1000
    assert vad.merge_close([(0, 100), (100, 200), (200 + gap, 300)]) == [(0, 200), (200 + gap, 300)]
    assert vad.merge_close([(0, 100), (100 + gap - 1, 300)]) == [(0, 300)]
    assert vad.merge_close([]) == []


def test_two_utterances_stay_apart_with_exact_edges(speak):
    a, b = speak("Yes, that sounds right."), speak("Sure, I can help you with that.")
    t1, t2 = 8000, 8000 + len(a) + 8000  # half a second apart
    segs = np.array(vad.segments(place((a, t1), (b, t2)), "paper", cache=False)) * SR
    first, second = segs[segs[:, 0] < t1 + len(a)], segs[segs[:, 0] >= t1 + len(a)]
    assert len(first) and len(second)
    np.testing.assert_allclose([first[0, 0], first[-1, 1], second[0, 0], second[-1, 1]],
                               [t1, t1 + len(a), t2, t2 + len(b)], atol=32)


def test_a_noisy_track_does_not_pass_for_speech(speak):
    # white noise at -50 dBFS under the whole track: the onset is not pulled back into the noise
    c = speak("Nine in the morning is when the next train leaves.")
    x = place((c, 24000), total=24000 + len(c) + 24000)
    x = x + (0.003 * np.random.default_rng(0).standard_normal(len(x))).astype(np.float32)
    segs = vad.segments(x, "paper", cache=False)
    assert -0.002 <= segs[0][0] - 1.5 <= 0.02
    assert abs(segs[-1][1] - (24000 + len(c)) / SR) < 0.15


def test_segments_under_min_speech_stay_dropped(speak):
    c = speak("Yes.")[:2400]  # 150 ms of speech
    x = place((c, 8000))
    assert vad.segments(x, "paper", min_speech_ms=250, cache=False) == []
    (s, e), = vad.segments(x, "paper", min_speech_ms=0, cache=False)
    assert s * SR == pytest.approx(8000, abs=32)


def test_refine_edges_keeps_silero_edges_without_sound_nearby():
    x = np.zeros(32000, np.float32)
    x[20000:24000] = 0.2  # sound far from the given segment
    assert vad.refine_edges(x, [(4000, 8000)]) == [(4000, 8000)]
    assert vad.refine_edges(x, []) == []


def test_refined_segments_never_cross_their_neighbours():
    rng = np.random.default_rng(1)
    x = (0.1 * rng.standard_normal(48000)).astype(np.float32)  # sound everywhere, no floor to lean on
    x[:4000] = 0
    segs = [(8000, 16000), (20000, 30000), (36000, 40000)]
    out = vad.refine_edges(x, segs)
    flat = [t for s in out for t in s]
    assert flat == sorted(flat) and out[0][1] <= 20000 and out[1][1] <= 36000


def test_params_name_the_edge_rule():
    p = vad.params("paper")
    assert p["edges"]["rel_db"] == -35.0 and p["edges"]["max_gap_ms"] == 100 and p["edges"]["merge_gap_ms"] == 100
    assert "edges" not in vad.params("fdb_code")
