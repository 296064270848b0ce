"""The ``fdb15_code`` timing rules reproduce the public Full-Duplex-Bench v1.5 ``get_timing.py``
values (tests/data/fdb15_golden) exactly, float for float; the per-event reading, the behaviour
categories, the judge prompt and the bad-input errors."""

import json
import math
from pathlib import Path
from string import Template

import pytest

from fdenv.score import fdb15
from fdenv.score.fdb15 import (BEHAVIOURS, behaviour_shares, event_timing, latencies, merge_segments,
                               parse_behaviour, response_intervals, seconds_from_vad, stop_intervals, timing,
                               words_json)

GOLDEN = Path(__file__).parent / "data" / "fdb15_golden"
INPUTS = json.loads((GOLDEN / "inputs.json").read_text())
EXPECTED = json.loads((GOLDEN / "expected.json").read_text())


def _exact(got, want):
    # == on floats (and lists of them): the golden values are the public code's own floats
    assert [list(x) for x in got] == want
    assert all(type(v) is type(w) or {type(v), type(w)} <= {int, float}
               for g, x in zip(got, want) for v, w in zip(g, x))


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_reproduces_public_v15_timing(name):
    case, want = INPUTS[name], EXPECTED[name]
    if case["kind"] == "intervals":  # straight into the two interval rules, no merging
        _exact(stop_intervals(case["user"], case["model"]), want["latency_stop_list"])
        _exact(response_intervals(case["user"], case["model"]), want["latency_resp_list"])
        return
    got = timing(case["user"], case["model"], unit="samples" if case["kind"] == "vad" else "s")
    _exact(got["user_segments"], want["user_merged"])
    _exact(got["model_segments"], want["model_merged"])
    _exact(got["latency_stop_list"], want["latency_stop_list"])
    _exact(got["latency_resp_list"], want["latency_resp_list"])


def test_golden_set_is_complete_and_covers_the_edges():
    assert set(INPUTS) == set(EXPECTED) and len(INPUTS) >= 20
    kinds = {c["kind"] for c in INPUTS.values()}
    assert kinds == {"vad", "segments", "intervals"}
    # the float edge the thresholds hinge on is in the set, both ways
    assert EXPECTED["v07_user_gap_0p6_float_above"]["user_merged"] == [[0.0, 1.0], [1.6, 2.5]]
    assert EXPECTED["v08_user_gap_0p6_exact"]["user_merged"] == [[0.0, 1.25]]


def test_merge_threshold_is_float_arithmetic():
    assert merge_segments([(0.0, 1.0), (1.6, 2.0)], 0.6) == [(0.0, 1.0), (1.6, 2.0)]  # 1.6-1.0 > 0.6
    assert merge_segments([(0.0, 0.25), (0.85, 2.0)], 0.6) == [(0.0, 2.0)]  # 0.85-0.25 == 0.6
    assert merge_segments([(2.0, 3.0), (0.0, 5.0)], 0.0) == [(0.0, 5.0)]  # sorted, nested absorbed
    assert merge_segments([], 0.5) == []


def test_samples_are_divided_by_the_rate():
    assert seconds_from_vad([{"start": 8000, "end": 24000}]) == [(0.5, 1.5)]
    assert seconds_from_vad([(8000, 24000)], sample_rate=8000) == [(1.0, 3.0)]


def test_model_that_never_stops_gets_the_user_segment_as_stop_interval():
    t = timing([(0.0, 1.0), (4.0, 5.0)], [(1.5, 10.0)])
    assert t["latency_stop_list"] == [[4.0, 5.0]]
    assert t["latency_resp_list"] == [[1.0, 1.5]]  # no model start after the event
    ev = event_timing(t, 4.0)
    assert ev == {"stop_interval": [4.0, 5.0], "stop_latency_s": 1.0, "response_interval": None,
                  "response_latency_s": None}


def test_event_timing_picks_this_events_intervals():
    # question 0-1, answer 1.5-4.3 stops 0.3 s into the interruption at 4.0-5.0, new answer at 5.6;
    # a second event at 9-9.4 over the new answer, which keeps going
    t = timing([(0.0, 1.0), (4.0, 5.0), (9.0, 9.4)], [(1.5, 4.3), (5.6, 12.0)])
    first = event_timing(t, 4.0, 9.0)
    assert first["stop_interval"] == [4.0, 4.3] and first["stop_latency_s"] == pytest.approx(0.3)
    assert first["response_interval"] == [5.0, 5.6] and first["response_latency_s"] == pytest.approx(0.6)
    second = event_timing(t, 9.0)
    assert second["stop_interval"] == [9.0, 9.4] and second["response_interval"] is None
    # the question's own response interval never belongs to an event after it
    assert event_timing(t, 1.2, 3.9) == {"stop_interval": None, "stop_latency_s": None,
                                         "response_interval": None, "response_latency_s": None}


def test_event_at_time_zero():
    t = timing([(0.0, 0.5)], [(0.0, 2.0)])
    assert event_timing(t, 0.0)["stop_interval"] == [0.0, 0.5]


def test_latencies_are_interval_lengths():
    assert latencies([[4.0, 4.5], [1.0, 1.0]]) == [0.5, 0.0]


def test_behaviour_categories_follow_v15_tags():
    assert BEHAVIOURS == ("C_RESPOND", "C_RESUME", "C_UNCERTAIN_HANDLING", "C_UNKNOWN")
    assert all(fdb15.BEHAVIOUR_DEFINITIONS[t] for t in BEHAVIOURS)
    assert parse_behaviour('{"behaviour": "C_RESUME"}') == "C_RESUME"
    assert parse_behaviour(' {"behaviour": ["C_RESPOND"]}\n') == "C_RESPOND"  # v1.5's own form
    for bad in ('{"behaviour": "C_STOP"}', '{"behaviour": ["C_RESUME", "C_RESPOND"]}', "C_RESUME",
                '{"behaviour": "C_RESUME", "why": "x"}', '{"behavior": "C_RESUME"}', None):
        with pytest.raises(ValueError, match="behaviour"):
            parse_behaviour(bad)


def test_behaviour_shares_leave_out_missing_verdicts():
    shares = behaviour_shares(["C_RESUME", "C_RESUME", None, "C_RESPOND", "C_UNKNOWN"])
    assert shares == {"C_RESPOND": 0.25, "C_RESUME": 0.5, "C_UNCERTAIN_HANDLING": 0.0, "C_UNKNOWN": 0.25}
    assert behaviour_shares([None]) == dict.fromkeys(BEHAVIOURS)
    with pytest.raises(ValueError, match=r"tags\[0\]"):
        behaviour_shares(["stops"])


def test_behaviour_prompt_loads_and_names_its_fields():
    from fdenv.score.judge import load_prompt

    system, template = load_prompt("behaviour")
    for tag in BEHAVIOURS:
        assert tag in system
    fields = {m.group("named") or m.group("braced") for m in Template.pattern.finditer(template.template)
              if m.group("named") or m.group("braced")}
    assert fields == set(fdb15.BEHAVIOUR_FIELDS)
    text = template.substitute(request="tell me about tides", before=words_json([("tides", 2.0, 2.4)]),
                               overlap=words_json([("mm-hmm", 4.0, 4.3)]), after=words_json([]))
    assert '"timestamp":[4.0,4.3]' in text


def test_words_json_is_v15_compact_form():
    class W:
        text, start, end = "yes", 1.23456, None

    assert words_json([("hi", 0.5, 0.75), W()]) == \
        '[{"text":"hi","timestamp":[0.5,0.75]},{"text":"yes","timestamp":[1.235,null]}]'


@pytest.mark.parametrize("call, match", [
    (lambda: timing([(1.0, 0.5)], []), r"user\[0\]: end 0.5 is before start 1.0"),
    (lambda: timing([(0.0, float("nan"))], []), r"user\[0\] end: nan is not a time"),
    (lambda: timing([], [(-1.0, 2.0)]), r"model\[0\] start: -1.0 is not a time"),
    (lambda: timing([(0, 1, 2)], []), r"user\[0\]: expected \[start, end\]"),
    (lambda: timing([{"start": 0}], [], unit="samples"), r"timestamps\[0\]: a VAD dict needs 'start' and 'end'"),
    (lambda: timing([], [], unit="ms"), r"unit: expected 's'"),
    (lambda: timing([], [], sample_rate=0, unit="samples"), r"sample_rate"),
    (lambda: timing([], [], user_gap_s=-0.1), r"user_gap_s"),
    (lambda: merge_segments([(0.0, 1.0)], math.inf), r"gap_s"),
    (lambda: stop_intervals("0-1", []), r"user: expected a list"),
    (lambda: event_timing({}, 1.0), r"result: expected a timing\(\) result"),
    (lambda: event_timing(timing([], []), 2.0, 1.0), r"until_s: expected a time >= onset_s"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_type_errors_for_non_numbers():
    with pytest.raises(TypeError, match=r"user\[0\] start: expected a number"):
        timing([("0", 1.0)], [])
    with pytest.raises(TypeError, match=r"user\[0\] start"):
        timing([(True, 1.0)], [])


def test_arrays_in_plain_floats_out():
    np = pytest.importorskip("numpy")
    t = timing(np.array([[0, 16000], [64000, 80000]], dtype=np.int64), np.array([[24000, 72000]]), unit="samples")
    assert t["latency_stop_list"] == [[4.0, 4.5]]
    assert all(type(x) is float for iv in t["latency_stop_list"] + t["user_segments"] for x in iv)
    json.dumps(t)  # a result goes into run lines as it is


def test_module_is_a_leaf():
    # pure rules: no other fdenv module, no audio or model library behind them
    import ast

    tree = ast.parse(Path(fdb15.__file__).read_text())
    mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {("." * n.level) + (n.module or "") for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert mods <= {"__future__", "json", "math", "numbers", "typing"}
