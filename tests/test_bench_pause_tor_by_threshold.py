"""benchmarks/pause_tor_by_threshold.py: a pause episode counts as taken at a threshold when a
probability judged before the pause turn ends reaches it; silences judged later do not count."""

from .helpers import benchmark


def line(judged, pause_end=5.0):
    return {"timeline": [{"label": "ctx", "end": 1.0}, {"label": "pause", "end": pause_end}],
            "agent_stats": {"judged": [{"t_s": t, "p": p} for t, p in judged]}}


def test_highest_probability_before_the_pause_ends():
    first_look = benchmark("pause_tor_by_threshold").first_look_before_pause_end
    assert first_look(line([(1.2, 0.3), (3.0, 0.6), (5.3, 0.99)])) == 0.6  # the answer after the turn is not a take
    assert first_look(line([(5.3, 0.99)])) == 0.0
    assert first_look(line([])) == 0.0
