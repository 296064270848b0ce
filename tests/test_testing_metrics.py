"""``fdenv.testing.metric_check``: the baseline agents' known extremes hold on the shipped scenes
through the real env and scorers (espeak, Silero, Whisper tiny.en, the offline judge), and the
check fails, naming agent, scene, dimension and value, when a metric is broken."""

import re

import pytest

import fdenv.score.fdb as fdb
import fdenv.score.mpe as mpe
from fdenv.testing import FDB_EXTREMES, MPE_EXTREMES, SANITY_AGENTS, SANITY_SETS, metric_check


def test_metric_check_passes_on_the_shipped_scenes():
    summary = metric_check(scenes_per_set=1)
    assert summary["episodes"] == len(SANITY_AGENTS) * len(SANITY_SETS)
    assert list(summary["scenes"]) == list(SANITY_SETS)
    assert all(len(ids) == 1 for ids in summary["scenes"].values())
    assert summary["agents"] == list(SANITY_AGENTS) and summary["profiles"] == ["paper", "fdb_code"]
    values = summary["values"]
    tt = summary["scenes"]["turn_taking"][0]
    assert 0.3 <= values["oracle"][tt]["paper.latency_s"] <= 1.0
    assert values["talker"][tt]["paper.latency_s"] < 0
    mp = summary["scenes"]["mpe"][0]
    assert values["silent"][mp]["presence"] == "0/1" and values["oracle"][mp]["fresh_onset"] == "1/1"
    # at least one comparison per rule (each rule applies to one scene here), plus the structure checks
    rules = sum(len(keys) for dims in FDB_EXTREMES.values() for by_profile in dims.values()
                for keys in by_profile.values())
    assert summary["checks"] > rules + sum(len(r) for r in MPE_EXTREMES.values())


def test_a_pause_scorer_that_always_takes_over_fails(monkeypatch):
    def broken(segments, words, window):
        out = fdb.empty()
        out["to"] = 1
        return out

    monkeypatch.setattr(fdb, "paper_pause", broken)
    with pytest.raises(AssertionError) as e:
        metric_check(sets=("pause",))
    msg = str(e.value)
    assert re.search(r"silent on pause-\d+ \(pause_handling, paper\): to = 1, expected 0", msg), msg
    assert re.search(r"oracle on pause-\d+ \(pause_handling, paper\): to = 1, expected 0", msg), msg
    assert "fdb_code" not in msg  # the other profile is intact
    assert "2 of " in msg


def test_a_shifted_turn_taking_latency_fails(monkeypatch):
    real = fdb.paper_turn_taking

    def late(segments, words, e):
        out = real(segments, words, e)
        if out["latency_s"] is not None:
            out["latency_s"] += 2.0
        return out

    monkeypatch.setattr(fdb, "paper_turn_taking", late)
    with pytest.raises(AssertionError, match=r"oracle on turn_taking-\d+ \(turn_taking, paper\): latency_s = 2\.5\d*, "
                                             r"expected in \[0\.3, 1\.0\]"):
        metric_check(sets=("turn_taking",), agents=("oracle",))


def test_an_mpe_scorer_that_misses_every_answer_fails(monkeypatch):
    real = mpe.request_measures

    def deaf(segments, e):
        return real([], e)

    monkeypatch.setattr(mpe, "request_measures", deaf)
    with pytest.raises(AssertionError) as e:
        metric_check(sets=("mpe",), agents=("oracle", "silent"))
    msg = str(e.value)
    assert re.search(r"oracle on mpe-\S+ \(multi-party\): presence = 0/1, expected 1\.0", msg), msg
    assert re.search(r"oracle on mpe-\S+ \(multi-party\): fresh_onset = 0/1, expected 1\.0", msg), msg
    assert "silent on" not in msg  # silent's extremes are what a deaf scorer gives


def test_a_missing_score_fails(monkeypatch):
    monkeypatch.setattr(fdb.FDBScorer, "score_details", lambda self, record: (None, {}))
    with pytest.raises(AssertionError, match=r"silent on turn_taking-\d+ \(turn_taking\): info\['fdb'\] = None"):
        metric_check(sets=("turn_taking",), agents=("silent",))


def test_only_the_requested_profiles_are_checked():
    summary = metric_check(sets=("turn_taking",), agents=("silent", "oracle"), scoring={"profiles": ("paper",)})
    assert summary["profiles"] == ["paper"] and summary["episodes"] == 2
    assert all(k.startswith("paper.") for scenes in summary["values"].values() for v in scenes.values() for k in v)


def test_bad_arguments():
    with pytest.raises(ValueError, match="cascade"):
        metric_check(agents=("cascade",))
    with pytest.raises(ValueError, match="scenes_per_set"):
        metric_check(scenes_per_set=0)
