"""Duplex-MPE scoring (SPEC 7, 9): the rules on hand-built segments, the scorer on speech-like
audio with a scripted recogniser, the MPEScore wrapper, aggregation and MPE's table, the report,
and the statistics (bootstrap over pairs, paired differences, exact McNemar, Spearman) against
known values. Fast: no TTS, no Whisper."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
from scipy.stats import binomtest, spearmanr

from fdenv.record import EpisodeRecord, PlayedClip, PlayedTurn
from fdenv.scene.load import scene_from_dict
from fdenv.score import mpe as M
from fdenv.score import mpe_aggregate as A
from fdenv.score import mpe_table as T
from fdenv.score import stats, vad
from fdenv.score.rescore import SWEEP_MS

from .test_score_helpers import RecordEnv, ScriptedASR, track

os.environ["HF_HUB_OFFLINE"] = "1"

# ------------------------------------------------------------------ a hand-built MPE episode

# (id, label, start, end, extra): the played timeline of one scene (seconds)
TIMELINE = [
    ("t0", "duty", 0.3, 4.0, {}),
    ("t1", "ctx", 4.5, 6.0, {}),
    ("t2", "N1", 6.5, 8.0, {}),  # window [6.5, 9.0]
    ("t3", "ctx", 8.6, 10.0, {}),
    ("t4", "T", 10.5, 12.0, {"gold_answer": "The total comes to 31 euros. The total is 31 euros."}),
    ("t5", "N2", 15.0, 16.0, {"addressee": "Ben"}),  # window [15.0, 17.0] (the N4Q ends later, at 17.3)
    ("t6", "N4Q", 16.5, 17.3, {"addressee": "Aria"}),  # q = 17.3
    ("t7", "N4R", 20.3, 21.5, {"resolves": "t6"}),  # r = 20.3, deadline 22.3, window to 22.8
    ("t8", "N3", 23.0, 24.0, {}),  # window [23.0, 25.0]
]
DURATION = 29.0


def mpe_record(bursts=(), condition="explicit", pair="p1", seed=0, timeline=TIMELINE, duration=DURATION) -> EpisodeRecord:
    turns, played, clips = [], [], []
    for tid, label, start, end, extra in timeline:
        speaker = "Narrator" if label == "duty" else ("Ann" if label != "N2" else "Cat")
        text = {"T": "Aria, how much is that?" if condition == "explicit" else "How much is that?",
                "N1": "Aria must be tired of us.", "N4Q": "Aria, is it raining?", "N2": "Ben, pass the salt."}.get(label, "Some words here.")
        t = {"id": tid, "speaker": speaker, "label": label, "text": text, **extra}
        if label == "T" and condition == "implicit":
            t.pop("addressee", None)
        turns.append(t)
        played.append(PlayedTurn(tid, speaker, label, start, end, text, addressee=extra.get("addressee"),
                                 gold_answer=extra.get("gold_answer"), resolves=extra.get("resolves")))
        clips.append(PlayedClip(tid, 0, speaker, start, end, text))
    scene = scene_from_dict({"id": f"{pair}-{condition}", "kind": "mpe", "condition": condition, "pair_id": pair,
                             "speakers": ["Narrator", "Ann", "Ben", "Cat"], "duty": "Be quiet unless asked.",
                             "turns": turns}, source="test")
    audio = track(duration, bursts, seed=seed)
    return EpisodeRecord(scene=scene, sample_rate=16000, frame_samples=1280, assistant=audio, turns=played,
                         clips=clips, n_frames=len(audio) // 1280, seed=seed, config={"scheduler": {"max_response_s": 20.0}})


ORACLE = [(12.5, 1.9), (17.8, 2.9)]  # answers T 0.5 s after its end; answers N4Q in the gap, stops 0.4 s into N4R
ANSWER_WORDS = [("The", 12.55, 12.7), ("total", 12.75, 13.1), ("comes", 13.15, 13.4), ("to", 13.45, 13.5),
                ("31", 13.55, 13.9), ("euros", 13.95, 14.4)]


def scorer(words=ANSWER_WORDS, **kw):
    return M.MPEScorer(asr=ScriptedASR(words), cache=False, **kw)


# ------------------------------------------------------------------ rules


def test_request_measures_boundaries():
    e = 10.0
    assert M.request_measures([], e) == {"presence": False, "fresh_onset": False, "under_way": False, "first": None, "onset_s": None}
    m = M.request_measures([(10.5, 12.0)], e)
    assert m["presence"] and m["fresh_onset"] and m["onset_s"] == pytest.approx(0.5)
    m = M.request_measures([(8.0, 11.0)], e)  # under way at e: presence, not fresh
    assert m["presence"] and m["under_way"] and not m["fresh_onset"]
    m = M.request_measures([(8.0, 11.0), (12.0, 13.0)], e)  # a later onset does not make it fresh
    assert m["presence"] and not m["fresh_onset"]
    m = M.request_measures([(8.0, 10.0)], e)  # ends exactly at e: overlaps the closed window, does not cover e
    assert m["presence"] and not m["under_way"] and not m["fresh_onset"]
    assert M.request_measures([(15.0, 16.0)], e)["fresh_onset"]  # onset at e + 5 is inside (e, e + 5]
    assert not M.request_measures([(15.01, 16.0)], e)["presence"]


def test_answer_span_joins_gaps_under_one_second_and_caps():
    segs = [(1.0, 2.0), (2.5, 3.0), (3.9, 4.5), (6.0, 7.0)]
    assert M.answer_span(segs, (1.0, 2.0)) == [(1.0, 2.0), (2.5, 3.0), (3.9, 4.5)]
    assert M.answer_span(segs, (1.0, 2.0), max_response_s=2.2) == [(1.0, 2.0), (2.5, 3.0)]
    assert M.answer_span([(0.0, 50.0)], (0.0, 50.0), max_response_s=20.0) == [(0.0, 20.0)]


def test_silence_windows_are_cut_at_the_next_request():
    rec = mpe_record()
    wins = [(t.id, a, b) for t, a, b in M.silence_windows(rec.turns)]
    assert wins == [("t2", 6.5, 9.0), ("t5", 15.0, 17.0), ("t8", 23.0, 25.0)]
    # a silence turn right before T: its window ends with the T turn
    tl = [("a", "N3", 1.0, 2.0, {}), ("b", "T", 2.2, 2.6, {"gold_answer": "x y"})]
    rec2 = mpe_record(timeline=tl, duration=6.0)
    assert [(a, b) for _, a, b in M.silence_windows(rec2.turns)] == [(1.0, 2.6)]


def test_window_verdict_and_acknowledgements():
    ack = lambda s: (s[1] - s[0]) < 1.0  # noqa: E731
    assert M.window_verdict([], 1, 2, ack) == (True, [])
    assert M.window_verdict([(1.2, 1.6)], 1, 2, ack) == (True, [])
    assert M.window_verdict([(1.2, 2.6)], 1, 2, ack) == (False, [(1.2, 2.6)])
    assert M.window_verdict([(0.0, 0.99)], 1, 2, ack) == (True, [])  # before the window
    assert M.window_verdict([(1.2, 1.6)], 1, 2, lambda s: None) == (None, [])


def test_n4_measures_eligibility_and_failure_kinds():
    ack = lambda s: (s[1] - s[0]) < 1.0  # noqa: E731
    q0, q, r, r_end = 16.0, 16.8, 19.8, 21.0
    ok = M.n4_measures([(17.3, 20.2)], q0, q, r, r_end, ack)
    assert ok["window_response"] and ok["eligible"] and ok["yielded"] is True and ok["failure"] is None
    still = M.n4_measures([(17.3, 23.0)], q0, q, r, r_end, ack)
    assert still["eligible"] and still["yielded"] is False and still["failure"] == "still_speaking"
    again = M.n4_measures([(17.3, 20.2), (21.9, 23.5)], q0, q, r, r_end, ack)
    assert again["failure"] == "spoke_again" and again["yielded"] is False
    brief = M.n4_measures([(17.3, 20.2), (21.9, 22.4)], q0, q, r, r_end, ack)  # an acknowledgement is fine
    assert brief["yielded"] is True
    late = M.n4_measures([(22.4, 23.0)], q0, q, r, r_end, ack)  # after the window: no matter
    assert not late["eligible"]
    assert not M.n4_measures([(16.5, 20.2)], q0, q, r, r_end, ack)["eligible"]  # spoke during the question
    assert not M.n4_measures([(17.3, 19.5)], q0, q, r, r_end, ack)["eligible"]  # stopped before r
    assert not M.n4_measures([(20.0, 21.0)], q0, q, r, r_end, ack)["window_response"]


# ------------------------------------------------------------------ the scorer on audio


def test_oracle_like_track():
    res = scorer().score(mpe_record(ORACLE))
    assert {k: res[k] for k in M.COUNT_KEYS} == {
        "requests": 1, "presence": 1, "fresh_onset": 1, "answered": 1, "correct": 1, "silence_windows": 3,
        "silence_judged": 3, "silence_preserved": 3, "n4_events": 1, "window_response": 1, "yield_eligible": 1,
        "yield_judged": 1, "yielded": 1, "fail_still_speaking": 0, "fail_spoke_again": 0, "reasks": 0,
        "answered_after_reask": 0}
    assert res["condition"] == "explicit" and res["pair_id"] == "p1" and res["t_position"] == pytest.approx(4 / 9)
    d = res["details"]["requests"][0]
    assert d["answer"] == "The total comes to 31 euros" and d["correct"] is True
    assert d["onset_s"] == pytest.approx(0.5, abs=0.05)


def test_silent_track():
    asr = ScriptedASR()
    res = M.MPEScorer(asr=asr, cache=False).score(mpe_record())
    assert res["presence"] == res["fresh_onset"] == res["answered"] == 0
    assert res["silence_preserved"] == res["silence_windows"] == 3 and res["yield_eligible"] == 0
    assert asr.calls == 0  # silence costs no recognition


def test_talker_track():
    res = scorer([]).score(mpe_record([(0.0, DURATION)]))
    assert res["presence"] == 1 and res["fresh_onset"] == 0 and res["silence_preserved"] == 0
    assert res["window_response"] == 1 and res["yield_eligible"] == 0  # spoke during the question
    assert res["answered"] == 1 and res["correct"] == 0


def test_short_acknowledgements_keep_the_silence():
    # 0.5 s "mm-hmm" in every silence window; the recogniser hears one or two words
    bursts = [(7.0, 0.5), (15.5, 0.5), (23.5, 0.5)]
    words = [("Mm", 7.05, 7.3), ("hmm", 7.3, 7.45), ("Mm", 15.55, 15.9), ("Mm", 23.55, 23.8), ("mm.", 23.8, 23.95)]
    res = scorer(words).score(mpe_record(bursts))
    assert res["silence_preserved"] == 3
    assert all(len(w["acknowledgements"]) == 1 for w in res["details"]["silence"])
    # three words: an intrusion; longer than a second: an intrusion
    words3 = words + [("yes", 7.46, 7.49)]
    assert scorer(words3).score(mpe_record(bursts))["silence_preserved"] == 2
    assert scorer(words).score(mpe_record([(7.0, 1.6), (15.5, 0.5), (23.5, 0.5)]))["silence_preserved"] == 2


def test_missing_verdicts_are_none_not_a_pass():
    class NoVerdicts:
        name = "anthropic:test"
        prompt_version = "v1"

        def correct(self, *a, **k):
            return None

        def acknowledgement(self, *a, **k):
            return None

    res = scorer(judge=NoVerdicts()).score(mpe_record(ORACLE + [(7.0, 0.5)]))
    assert res["presence"] == 1 and res["answered"] == 0 and res["correct"] == 0
    assert res["details"]["requests"][0]["correct"] is None
    assert res["silence_windows"] == 3 and res["silence_judged"] == 2 and res["silence_preserved"] == 2
    agg = A.aggregate_mpe([res], n_resamples=200)
    assert agg["conditions"]["explicit"]["accuracy"]["value"] is None
    assert agg["coverage"]["explicit"]["accuracy"] == {"judged": 0, "of": 1}
    assert agg["coverage"]["explicit"]["silence"] == {"judged": 2, "of": 3}


def test_segments_equal_vad_segments_at_every_min_speech_ms():
    x = track(20.0, [(1.0, 0.15), (2.0, 0.22), (3.0, 0.35), (5.0, 2.0), (9.0, 0.6)], seed=3)
    probs = vad.region_probs(x, cache=False)
    for ms in (0, 100, 200, 250, 300, 500):
        assert vad.segments_from_probs(x, probs, ms) == vad.segments(x, "paper", ms, cache=False), ms


def test_probabilities_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    x = track(6.0, [(1.0, 2.0)], seed=5)
    a = vad.region_probs(x)
    assert list((tmp_path / "vad").rglob("*.probs"))
    assert vad.region_probs(x) == a


def test_saved_record_scores_the_same(tmp_path):
    rec = mpe_record(ORACLE)
    rec.assistant = rec.assistant * 2.5 + 1e-5  # off the 16-bit grid, and loud: save's 32767 vs load's 32768 matters
    live = scorer().score(rec)
    rec.save(tmp_path / "ep")
    back = EpisodeRecord.load(tmp_path / "ep")
    assert np.array_equal(M.scoring_audio(back), M.scoring_audio(rec))
    x = M.scoring_audio(rec)  # the live track is scored on the saved file's 16-bit grid
    assert np.array_equal(np.round(x.astype(np.float64) * 32768) / 32768, x)
    assert not np.array_equal(x, rec.assistant)  # (the track itself was off the grid)
    assert scorer().score(back) == live
    # loading again and again changes nothing
    back.save(tmp_path / "ep2")
    again = EpisodeRecord.load(tmp_path / "ep2")
    assert np.array_equal(again.assistant, back.assistant)  # save/load of a loaded record is an identity
    assert np.array_equal(M.scoring_audio(back), M.scoring_audio(rec))  # and scoring sees the same samples


def test_score_many_equals_score_per_value():
    rec = mpe_record([(7.0, 0.12), (12.5, 1.9), (15.6, 0.22), (17.8, 2.9)])
    many = scorer().score_many(rec, SWEEP_MS)
    for ms in SWEEP_MS:
        assert many[ms] == scorer(min_speech_ms=ms).score(rec), ms
    assert many[0]["min_speech_ms"] == 0 and many[500]["min_speech_ms"] == 500


def test_non_mpe_scene_scores_none():
    from .test_score_records import record_for

    assert scorer().score(record_for("turn_taking")) is None


# ------------------------------------------------------------------ wrapper


def test_mpe_score_wrapper():
    from fdenv.wrappers import MPEScore

    env = MPEScore(RecordEnv(mpe_record(ORACLE), steps=2), asr=ScriptedASR(ANSWER_WORDS))
    env.reset()
    *_, info = env.step(np.zeros(1280, np.float32))
    assert "mpe" not in info
    *_, term, _, info = env.step(np.zeros(1280, np.float32))
    assert term and info["mpe"]["yielded"] == 1 and info["mpe"]["correct"] == 1
    assert info["segments"]["mpe"]["paper"]["segments"]
    cfg = env.scoring_config()
    assert cfg["vad"]["min_speech_ms"] == 250 and cfg["judge"]["name"] == "offline"
    env2 = pickle.loads(pickle.dumps(MPEScore(RecordEnv(None), asr="tiny.en", min_speech_ms=100)))
    assert env2.scorer.min_speech_ms == 100 and env2._saved_kwargs["min_speech_ms"] == 100


def test_scoring_wrappers_add_mpe_score_for_mpe_scenes():
    from fdenv.scene import load_set
    from fdenv.wrappers import FDBScore, MPEScore, scoring_wrappers

    mpe_scenes = load_set("mpe")[:2]
    ws = scoring_wrappers(mpe_scenes)
    assert [w.func for w in ws] == [MPEScore]
    both = scoring_wrappers(mpe_scenes + load_set("pause")[:1], min_speech_ms=100)
    assert [w.func for w in both] == [FDBScore, MPEScore] and both[1].keywords["min_speech_ms"] == 100


# ------------------------------------------------------------------ aggregation and the table


def fake(pair, cond, presence, fresh=None, correct=None, seed=0, position=0.5, silence=(5, 5), n4=(1, 1, 1), extra=None):
    fresh = presence if fresh is None else fresh
    correct = presence if correct is None else correct
    d = {k: 0 for k in M.COUNT_KEYS}
    d.update(requests=1, presence=presence, fresh_onset=fresh, answered=presence, correct=correct,
             silence_windows=silence[0], silence_judged=silence[0], silence_preserved=silence[1], n4_events=n4[0],
             window_response=n4[0], yield_eligible=n4[1], yield_judged=n4[1], yielded=n4[2],
             fail_still_speaking=n4[1] - n4[2], condition=cond, pair_id=pair, scene_id=f"{pair}-{cond}", seed=seed,
             t_position=position, min_speech_ms=250, judge="offline", **(extra or {}))
    return d


def test_aggregate_rates_denominators_and_headline():
    items = []
    for i in range(40):
        p = f"p{i}"
        items.append(fake(p, "explicit", 1, position=0.3 + 0.015 * i))
        items.append(fake(p, "implicit", int(i % 4 != 0), fresh=int(i % 2 == 0), position=0.3 + 0.015 * i,
                          n4=(1, 1, int(i % 5 != 0))))
    agg = A.aggregate_mpe(items, n_resamples=500)
    ex, im = agg["conditions"]["explicit"], agg["conditions"]["implicit"]
    assert ex["presence"]["value"] == 1.0 and ex["presence"]["n"] == 40 and ex["presence"]["lo"] == ex["presence"]["hi"] == 1.0
    assert im["presence"]["value"] == pytest.approx(30 / 40) and im["presence"]["num"] == 30
    assert im["fresh_onset"]["value"] == pytest.approx(20 / 40)
    assert im["accuracy"]["den"] == 30 and im["accuracy"]["value"] == 1.0
    assert im["yield"]["value"] == pytest.approx(32 / 40) and im["yield"]["reported"]
    assert agg["failures"]["implicit"]["still_speaking"] == 8
    p = agg["paired"]["presence"]
    assert p["diff"]["value"] == pytest.approx(-0.25) and p["diff"]["hi"] < 0
    assert p["mcnemar"]["b10"] == 10 and p["mcnemar"]["b01"] == 0
    assert p["mcnemar"]["p"] == pytest.approx(binomtest(10, 10, 0.5).pvalue)
    keys = [k for k, _, _ in agg["headline"]]
    assert "presence.explicit" in keys and "presence.implicit" in keys and "presence.diff" in keys
    assert all({"value", "lo", "hi", "n"} <= set(e) for _, _, e in agg["headline"])
    # request-position quartiles
    groups = agg["positions"]["implicit"]
    assert [g["n"] for g in groups] == [10, 10, 10, 10] and len(agg["positions"]["cuts"]) == 3
    assert all(groups[i]["range"][1] <= groups[i + 1]["range"][0] for i in range(3))
    text = T.format_mpe(agg)
    for label, *_ in [c[1:] for c in A.CAPABILITIES]:
        assert label in text
    assert "p=" in text and "quartiles" in text


def test_yield_rate_needs_30_eligible_events():
    few = [fake(f"p{i}", "explicit", 1) for i in range(29)]
    y = A.aggregate_mpe(few, n_resamples=200)["conditions"]["explicit"]["yield"]
    assert y["value"] is None and y["reported"] is False and y["eligible"] == 29 and y["num"] == 29
    y = A.aggregate_mpe(few + [fake("p29", "explicit", 1)], n_resamples=200)["conditions"]["explicit"]["yield"]
    assert y["value"] == 1.0 and y["reported"]


def test_aggregate_reads_run_lines_and_report(tmp_path):
    from fdenv.report import format_runs, run_summary

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"agent": {"name": "test"}, "scenes": {"set": "mpe"}}))
    lines = []
    for i in range(6):
        for cond in ("explicit", "implicit"):
            m = fake(f"p{i}", cond, 1)
            lines.append({"scene_id": f"p{i}-{cond}", "kind": "mpe", "pair_id": f"p{i}", "condition": cond, "seed": 0,
                          "privileged": False, "record": "x", "mpe": m})
    (run / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    s = run_summary(run, n_resamples=200)
    assert s["mpe"]["n_episodes"] == 12 and s["mpe"]["headline"]
    text = format_runs([s])
    assert "multi-party" in text and "presence 1.00" in text and "fresh onset 1.00" in text
    assert T.mpe_summary(run, n_resamples=200).startswith("MPE: 12 episodes")


# ------------------------------------------------------------------ statistics against known values


def test_mcnemar_equals_scipy_binomial_test():
    rng = np.random.default_rng(0)
    a = rng.random(300) < 0.6
    b = rng.random(300) < 0.5
    res = stats.mcnemar_exact(a.tolist(), b.tolist())
    b10 = int(np.sum(a & ~b))
    b01 = int(np.sum(~a & b))
    assert (res["b10"], res["b01"], res["n_pairs"]) == (b10, b01, 300)
    assert res["p"] == binomtest(b10, b10 + b01, 0.5, alternative="two-sided").pvalue
    assert stats.mcnemar_exact([1, 0], [1, 0])["p"] == 1.0
    assert stats.mcnemar_exact([1, None, 0], [0, 1, None])["n_pairs"] == 1


def test_constant_metric_has_a_zero_width_interval():
    e = stats.bootstrap_mean([0.7] * 500, [i // 2 for i in range(500)], n_resamples=2000)
    assert e.value == pytest.approx(0.7) and e.lo == pytest.approx(0.7) and e.hi == pytest.approx(0.7)
    r = stats.bootstrap_ratios({"c": ([1] * 100, [2] * 100)}, list(range(100)), n_resamples=500)["c"]
    assert (r.value, r.lo, r.hi) == (0.5, 0.5, 0.5)


def test_bernoulli_interval_over_2000_scenes():
    rng = np.random.default_rng(7)
    v = (rng.random(2000) < 0.3).astype(float)
    e = stats.bootstrap_mean(v, [f"s{i}" for i in range(2000)], n_resamples=10_000, seed=0)
    assert e.lo <= 0.3 <= e.hi
    assert e.hi - e.lo == pytest.approx(0.04, abs=0.005)
    # pairs kept together: 1,000 pairs of two scenes, same outcome rate
    ep = stats.bootstrap_mean(v, [f"p{i // 2}" for i in range(2000)], n_resamples=10_000, seed=0)
    assert ep.n_groups == 1000 and ep.lo <= 0.3 <= ep.hi


def test_bootstrap_ratios_of_many_metrics_match_one_at_a_time():
    # The cost (10,000 resamples x 2,000 scenes) is measured by benchmarks/bench_stats.py.
    rng = np.random.default_rng(1)
    n = 2000
    metrics = {k: ((rng.random(n) < p).astype(float), np.ones(n)) for k, p in (("a", 0.3), ("b", 0.6), ("c", 0.9))}
    groups = [f"p{i // 2}" for i in range(n)]
    one = stats.bootstrap_ratio(metrics["a"][0], metrics["a"][1], list(range(n)))
    assert one.n_groups == 2000
    many = stats.bootstrap_ratios(metrics, groups)
    alone = stats.bootstrap_ratio(metrics["b"][0], metrics["b"][1], groups)
    assert (many["b"].value, many["b"].lo, many["b"].hi) == (alone.value, alone.lo, alone.hi)


def test_difference_between_two_runs_on_the_same_scenes():
    rng = np.random.default_rng(3)
    groups = [f"s{i}" for i in range(400)]
    a = (rng.random(400) < 0.5).astype(float)
    b = np.where(rng.random(400) < 0.2, 1.0, a)  # run b answers more
    d = stats.bootstrap_ratio_diff(a, np.ones(400), groups, b, np.ones(400), groups, n_resamples=2000)
    assert d.value == pytest.approx(b.mean() - a.mean()) and 0 < d.lo < d.value < d.hi
    same = stats.bootstrap_ratio_diff(a, np.ones(400), groups, a, np.ones(400), groups, n_resamples=500)
    assert (same.value, same.lo, same.hi) == (0.0, 0.0, 0.0)
    # only shared scenes count
    part = stats.bootstrap_ratio_diff(a[:10], np.ones(10), groups[:10], b, np.ones(400), groups, n_resamples=200)
    assert part.n_groups == 10


def test_spearman_between_rankings():
    x = [0.95, 0.81, 0.65, 0.99, 0.95]
    y = [0.95, 0.70, 0.60, 0.25, 0.90]
    assert stats.spearman(x, y) == pytest.approx(spearmanr(x, y).statistic)
    assert stats.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert stats.spearman([1, 1, 1], [1, 2, 3]) is None and stats.spearman([1], [2]) is None
    assert stats.ranks([3.0, 1.0, 3.0]) == [2.5, 1.0, 2.5]


def test_rank_correlation_between_metrics_over_runs():
    runs = []
    for k, (pres, fresh) in enumerate([(1.0, 0.25), (0.95, 0.95), (0.8, 0.5)]):
        items = []
        for i in range(40):
            for cond in ("explicit", "implicit"):
                items.append(fake(f"p{i}", cond, int(i < 40 * pres), fresh=int(i < 40 * fresh)))
        runs.append(A.aggregate_mpe(items, n_resamples=100))
    x = [r["conditions"][c]["fresh_onset"]["value"] for r in runs for c in ("explicit", "implicit")]
    y = [r["conditions"][c]["presence"]["value"] for r in runs for c in ("explicit", "implicit")]
    assert A.rank_correlation(runs) == pytest.approx(spearmanr(x, y).statistic)


def test_sweep_reproduces_the_run_and_covers_five_values(tmp_path):
    from fdenv.score.rescore import sweep_min_speech

    run = tmp_path / "run"
    lines = []
    recs = [mpe_record([(7.0, 0.15), (12.5, 1.9), (15.6, 0.23), (17.8, 2.9)], pair=f"p{i}", condition=c, seed=i)
            for i in range(2) for c in ("explicit", "implicit")]
    sc = scorer()
    for i, r in enumerate(recs):
        stem = f"episodes/{i}"
        r.save(run / stem)
        lines.append({"scene_id": r.scene.id, "kind": "mpe", "pair_id": r.scene.pair_id, "condition": r.scene.condition,
                      "seed": r.seed, "record": stem, "mpe": sc.score(r)})
    (run / "episodes.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    out = sweep_min_speech(run, asr=ScriptedASR(ANSWER_WORDS), n_resamples=200)
    assert out["values"] == [0, 100, 200, 300, 500] and set(out["summary"]) == set(out["values"])
    at250 = sweep_min_speech(run, values=[250], asr=ScriptedASR(ANSWER_WORDS), aggregate=False)["episodes"][250]
    assert at250 == [ln["mpe"] for ln in lines]
    # short bursts (0.15 s, 0.23 s) count as speech only below their length
    assert out["episodes"][0][0]["silence_preserved"] == out["episodes"][0][0]["silence_windows"]  # acknowledgements
    assert [len(e["details"]["silence"]) for e in out["episodes"][500]] == [3] * 4


def _counts(cond, pair, eligible, yielded, seed=0):
    return {"requests": 1, "presence": 1, "fresh_onset": 1, "answered": 1, "correct": 1, "silence_windows": 2,
            "silence_judged": 2, "silence_preserved": 1, "n4_events": 1, "window_response": 1,
            "yield_eligible": eligible, "yield_judged": eligible, "yielded": yielded,
            "fail_still_speaking": eligible - yielded, "fail_spoke_again": 0, "condition": cond, "pair_id": pair,
            "scene_id": f"{pair}-{cond}", "seed": seed, "t_position": 0.5}


def test_yield_difference_is_not_reported_under_30_eligible_events():
    items = [c for i in range(5) for c in (_counts("explicit", f"p{i}", 1, 1), _counts("implicit", f"p{i}", 1, i % 2))]
    agg = A.aggregate_mpe(items, n_resamples=200)
    assert agg["conditions"]["implicit"]["yield"]["value"] is None
    d = agg["paired"]["yield"]["diff"]
    assert d["value"] is None and d["reported"] is False
    assert agg["paired"]["presence"]["diff"]["value"] == 0.0  # the others are still there
    row = [line for line in T.format_mpe(agg).splitlines() if line.startswith("answering-window yield")]
    assert row and row[0].rstrip().endswith("<30 eligible         -")
    many = [c for i in range(30) for c in (_counts("explicit", f"p{i}", 1, 1), _counts("implicit", f"p{i}", 1, i % 2))]
    assert A.aggregate_mpe(many, n_resamples=200)["paired"]["yield"]["diff"]["value"] == pytest.approx(-0.5)


def test_mcnemar_without_matched_pairs_is_no_test():
    assert stats.mcnemar_exact([], [])["p"] is None
    items = [_counts("explicit", "p0", 1, 1), _counts("implicit", "p0", 1, 1, seed=1)]  # seeds differ
    agg = A.aggregate_mpe(items, n_resamples=100)
    assert agg["paired"]["presence"]["mcnemar"]["n_pairs"] == 0 and agg["paired"]["presence"]["mcnemar"]["p"] is None
    T.format_mpe(agg)  # prints without a p value


def test_an_answer_running_to_the_yield_deadline_is_still_speaking():
    ack = lambda s: (s[1] - s[0]) < 1.0  # noqa: E731
    q0, q, r, r_end = 16.0, 16.8, 19.8, 21.0
    out = M.n4_measures([(17.0, 21.8)], q0, q, r, r_end, ack)  # ends exactly at r + 2
    assert out["yielded"] is False and out["failure"] == "still_speaking"
    out = M.n4_measures([(17.0, 20.5), (22.0, 23.0)], q0, q, r, r_end, ack)  # stopped, then spoke
    assert out["yielded"] is False and out["failure"] == "spoke_again"


def test_rank_correlation_of_empty_runs_is_none():
    empty = A.aggregate_mpe([], n_resamples=10)
    assert A.rank_correlation([empty, empty]) is None
