"""Scoring EpisodeRecords end to end (Silero on speech-like audio, a scripted recogniser), the
FDBScore wrapper, aggregation with bootstrap intervals, and FDB export / replay import."""

import json
import os
import pickle

import gymnasium as gym
import numpy as np
import pytest

from fdenv.score import fdb
from fdenv.score.fdb import FDBScorer, score_fdb_sample
from fdenv.score.stats import bootstrap_diff, bootstrap_mean
from fdenv.score.summary import aggregate, format_table

from .test_score_helpers import SCENES, RecordEnv, ScriptedASR, make_record, track

os.environ["HF_HUB_OFFLINE"] = "1"


def record_for(dim, assistant_bursts=(), seed=0, **kw):
    kind, turns, duration = SCENES[dim]
    return make_record(kind, turns, track(duration, assistant_bursts, seed=seed), **kw)


def scorer(words=(), **kw):
    return FDBScorer(asr=ScriptedASR(words), **kw)


# ------------------------------------------------------------------ silent and talker agents


@pytest.mark.parametrize("dim", fdb.DIMENSIONS)
def test_silent_agent(dim):
    asr = ScriptedASR()
    res = FDBScorer(asr=asr).score(record_for(dim))
    assert res["dimension"] == dim
    for prof in ("paper", "fdb_code"):
        assert res[prof]["to"] == 0
        assert set(fdb.KEYS) <= set(res[prof])
        assert not any(isinstance(v, float) and np.isnan(v) for v in res[prof].values())
    assert asr.calls == 0  # silence costs no recognition
    if dim == "backchannel":
        t = record_for(dim).turns[0]
        n = int(np.ceil((t.end - t.start) / 0.2 - 1e-9))
        q = fdb.kernel_histogram([x + 0.2 for x in t.trps], t.start, n)
        assert res["paper"]["jsd"] == pytest.approx(fdb.jsd_base2(np.ones(n), q))
        assert res["paper"]["freq_hz"] == 0.0 and res["fdb_code"]["jsd"] == 1


def test_talker_agent():
    talk = lambda dim: [(0.0, SCENES[dim][2])]  # noqa: E731  speech over the whole episode
    sc = scorer()
    assert sc.score(record_for("pause_handling", talk("pause_handling")))["paper"]["to"] == 1
    assert sc.score(record_for("backchannel", talk("backchannel")))["paper"]["to"] == 1
    tt = sc.score(record_for("turn_taking", talk("turn_taking")))["paper"]
    assert tt["to"] == 1 and tt["latency_s"] < 0 and tt["overlapping"] is True
    it = sc.score(record_for("interruption", talk("interruption")))["paper"]
    assert it["spoke_at_interrupt"] and it["did_not_stop"] and it["stop_latency_s"] is None


@pytest.mark.parametrize("d", [0.3, 0.6, 1.2])
def test_turn_taking_latency_on_audio(d):
    e = SCENES["turn_taking"][1][0][2]
    res = scorer().score(record_for("turn_taking", [(e + d, 2.0)]))
    assert res["paper"]["to"] == 1
    assert res["paper"]["latency_s"] == pytest.approx(d, abs=0.04)


@pytest.mark.parametrize("d", [0.3, 0.6, 1.2])
def test_interruption_latencies_on_audio(d):
    (_, _, _), (_, s, f) = SCENES["interruption"][1]
    # answering from 3.5 s, stopping 0.3 s into the interrupt, answering again d after its end
    res = scorer().score(record_for("interruption", [(3.5, s + 0.3 - 3.5), (f + d, 2.0)]))
    p = res["paper"]
    assert p["to"] == 1 and p["latency_s"] == pytest.approx(d, abs=0.04)
    assert p["stop_latency_s"] == pytest.approx(0.3, abs=0.15) and not p["did_not_stop"]


def test_interruption_response_after_a_backchannel_gets_its_words_judged():
    # "okay" (a backchannel) right after the interrupt, the real answer 1.5 s later: the judge
    # must see the answer's words, not an empty response
    (_, _, _), (_, s, f) = SCENES["interruption"][1]
    words = [("okay", f + 0.05, f + 0.25)] + [(w, f + 2.0 + 0.3 * i, f + 2.25 + 0.3 * i)
                                            for i, w in enumerate("sure dinner plans are at seven".split())]
    res = scorer(words).score(record_for("interruption", [(3.5, s + 0.3 - 3.5), (f, 0.3), (f + 2.0, 2.0)]))
    p = res["paper"]
    assert p["to"] == 1 and p["latency_s"] == pytest.approx(2.0, abs=0.04)
    assert p["response_text"] == "sure dinner plans are at seven" and p["relevance"] == 5


def test_backchannels_on_audio():
    t = SCENES["backchannel"][1][0]
    mid = (t[1] + t[2]) / 2  # the TRP
    res = scorer().score(record_for("backchannel", [(mid + 0.2, 0.5)]))
    p = res["paper"]
    assert p["to"] == 0 and p["n_backchannels"] == 1 and p["freq_hz"] == pytest.approx(1 / 8)
    assert p["jsd"] < 0.1
    c = res["fdb_code"]
    assert c["to"] == 0 and c["n_backchannels"] == 1 and c["freq_hz"] == pytest.approx(1 / 9)


def test_fdb_code_on_a_record_uses_crops_and_the_interrupt_offset():
    # interruption: words before f are cut away by FDB's ASR crop
    rec = record_for("interruption", [(3.5, 1.8), (7.0, 2.0)])
    words = [("old", 3.6, 3.9), ("answer", 4.0, 4.4), ("sure", 7.0, 7.3), ("dinner", 7.4, 7.8), ("plans", 7.9, 8.3)]
    c = scorer(words).score(rec)["fdb_code"]
    assert c["to"] == 1 and c["latency_s"] == pytest.approx(0.5) and c["response_text"] == "sure dinner plans"
    assert c["relevance"] == 5 and c["judge"] == "offline"  # wait/dinner/plans: 2 of 3 shared
    # pause: speech after the pause turn ends is cropped away
    rec = record_for("pause_handling", [(5.5, 2.0)])
    sc = scorer([("one", 5.6, 5.9), ("two", 6.0, 6.4), ("three", 6.5, 6.9), ("four", 7.0, 7.4)])
    res = sc.score(rec)
    assert res["fdb_code"]["to"] == 0 and res["paper"]["to"] == 0


def test_non_fdb_scene_scores_none():
    from fdenv.record import EpisodeRecord  # noqa: F401
    from fdenv.scene.load import scene_from_dict

    rec = record_for("turn_taking")
    rec.scene = scene_from_dict({"id": "x", "kind": "custom", "speakers": ["Ann"],
                                 "turns": [{"speaker": "Ann", "text": "hi", "label": "ctx"}]})
    assert FDBScorer(asr=ScriptedASR()).score(rec) is None


# ------------------------------------------------------------------ wrapper


def test_fdb_score_wrapper():
    from fdenv.wrappers import FDBScore

    e = SCENES["turn_taking"][1][0][2]
    env = FDBScore(RecordEnv(record_for("turn_taking", [(e + 0.5, 2.0)])), asr=ScriptedASR(), profiles="paper")
    env.reset(seed=0)
    for _ in range(2):
        *_, info = env.step(np.zeros(1280, np.float32))
        assert "fdb" not in info
    *_, term, trunc, info = env.step(np.zeros(1280, np.float32))
    assert term and info["fdb"]["dimension"] == "turn_taking"
    assert info["fdb"]["paper"]["latency_s"] == pytest.approx(0.5, abs=0.04) and info["fdb"]["fdb_code"] is None
    assert env._saved_kwargs["profiles"] == "paper" and env._saved_kwargs["min_speech_ms"] == 250


def test_fdb_score_wrapper_needs_the_record():
    from fdenv.wrappers import FDBScore

    class NoRecord(RecordEnv):
        def step(self, action):
            obs, r, done, trunc, info = super().step(action)
            info.pop("record", None)
            return obs, r, done, trunc, info

    env = FDBScore(NoRecord(None), asr=ScriptedASR())
    env.reset()
    env.step(np.zeros(1280, np.float32))
    env.step(np.zeros(1280, np.float32))
    with pytest.raises(RuntimeError, match="record"):
        env.step(np.zeros(1280, np.float32))


def test_an_episode_cut_by_a_time_limit_scores_none_with_a_warning():
    from fdenv.run import run_episode
    from fdenv.wrappers import FDBScore
    from fdenv_agents import SilentAgent

    env = FDBScore(gym.make("fdenv/TurnTaking-v0", max_episode_steps=5), asr=ScriptedASR())
    env.reset(seed=0)
    for _ in range(4):
        *_, info = env.step(np.zeros(1280, np.float32))
    with pytest.warns(UserWarning, match="truncated from outside"):
        *_, term, trunc, info = env.step(np.zeros(1280, np.float32))
    assert trunc and not term and info["fdb"] is None
    with pytest.raises(RuntimeError, match="truncated after 5 frames.*without a time limit"):
        run_episode(gym.make("fdenv/TurnTaking-v0", max_episode_steps=5), SilentAgent(), seed=0)


def test_wrapper_pickles():
    from fdenv.wrappers import FDBScore

    env = FDBScore(RecordEnv(None), asr="tiny.en")
    env2 = pickle.loads(pickle.dumps(env))
    assert env2.scorer.asr == "tiny.en" and env2.scorer.judge.name == "offline"


# ------------------------------------------------------------------ aggregation, bootstrap


def test_bootstrap_is_deterministic_and_groups_by_scene():
    vals = [0, 1, 1, 0, 1, 1, 1, 0]
    groups = ["a", "a", "b", "b", "c", "c", "d", "d"]
    a = bootstrap_mean(vals, groups, n_resamples=2000, seed=3)
    b = bootstrap_mean(vals, groups, n_resamples=2000, seed=3)
    assert a == b and a.n == 8 and a.n_groups == 4 and a.lo <= a.value <= a.hi
    cont = np.random.default_rng(0).random(40).tolist()
    g40 = [i // 2 for i in range(40)]
    assert bootstrap_mean(cont, g40, n_resamples=500, seed=4) != bootstrap_mean(cont, g40, n_resamples=500, seed=5)
    assert bootstrap_mean(cont, g40, n_resamples=500, seed=4) == bootstrap_mean(cont, g40, n_resamples=500, seed=4)
    # identical values within each scene: the interval only moves with scene-level variation
    one = bootstrap_mean([1, 1, 1], ["x", "x", "x"], n_resamples=100)
    assert (one.value, one.lo, one.hi, one.n_groups) == (1.0, 1.0, 1.0, 1)
    assert bootstrap_mean([None, None]).value is None
    d = bootstrap_diff([0, 0, 1], ["a", "b", "c"], [1, 1, 1], ["a", "b", "c"], n_resamples=500)
    assert d.value == pytest.approx(2 / 3) and d.lo >= 0


def test_bootstrap_default_is_10000_resamples_of_groups():
    # The vectorised bootstrap against a plain reference: 10,000 draws of 200 scenes (three episodes
    # each) from the fixed seed, the mean of each draw, the 2.5th and 97.5th percentiles. With any
    # other number of resamples, seed or grouping the interval would differ. (Its speed is measured by
    # benchmarks/bench_stats.py.)
    from fdenv.score.stats import N_RESAMPLES, SEED

    values = np.random.default_rng(0).random(600)
    est = bootstrap_mean(values, [i // 3 for i in range(600)])
    group_means = values.reshape(200, 3).mean(axis=1)
    draws = np.random.default_rng(SEED).integers(0, 200, size=(10_000, 200))
    lo, hi = np.percentile(group_means[draws].mean(axis=1), [2.5, 97.5])
    assert N_RESAMPLES == 10_000 and est.n_groups == 200 and est.n == 600
    assert est.value == pytest.approx(values.mean())
    assert est.lo == pytest.approx(lo, abs=1e-12) and est.hi == pytest.approx(hi, abs=1e-12)


def test_aggregate_table_from_results():
    results = []
    for i, lat in enumerate([-0.5, 0.4, 0.8, None]):
        p = {k: None for k in fdb.KEYS}
        p.update(to=0 if lat is None else 1, latency_s=lat, overlapping=None if lat is None else lat < 0)
        results.append({"dimension": "turn_taking", "scene_id": f"s{i % 2}", "paper": p, "fdb_code": None})
    table = aggregate(results, profiles=("paper",), n_resamples=500)
    tt = table["dimensions"]["turn_taking"]
    assert tt["n"] == 4 and tt["n_scenes"] == 2
    assert tt["paper"]["tor"]["value"] == pytest.approx(0.75)
    assert tt["paper"]["latency_s"]["value"] == pytest.approx(0.7 / 3) and tt["paper"]["latency_s"]["n"] == 3
    med, p90 = tt["paper"]["latency_median"], tt["paper"]["latency_p90"]
    assert med["value"] == pytest.approx(0.4) and p90["value"] == pytest.approx(np.percentile([-0.5, 0.4, 0.8], 90))
    assert med["lo"] <= med["value"] <= med["hi"] and med["n_groups"] == 2
    assert tt["paper"]["overlapping"]["value"] == pytest.approx(1 / 3)
    assert "turn_taking" in format_table(table)


def test_aggregate_records_and_run_dir(tmp_path):
    recs = [record_for("backchannel", [(5.2, 0.5)], seed=1, scene_id="bc1"),
            record_for("backchannel", seed=2, scene_id="bc2"),
            record_for("interruption", [(3.5, 1.8), (7.1, 2.0)], scene_id="int1")]
    for r in recs:
        r.mic0 = track(len(r.assistant) / 16000, [(1.0, 2.0)], seed=9)
    table = aggregate(recs, asr=ScriptedASR(), n_resamples=300)
    bc = table["dimensions"]["backchannel"]
    assert bc["paper"]["bc_share"]["value"] == pytest.approx(0.5) and bc["paper"]["tor"]["value"] == 0
    it = table["dimensions"]["interruption"]["paper"]
    assert it["relevance_coverage"]["eligible"] == 1 and it["did_not_stop"]["value"] == 0
    # a run folder: lines with fdb results are used as they are; others are scored from the record
    run = tmp_path / "run"
    lines = []
    for i, r in enumerate(recs):
        stem = f"episodes/{i:04d}"
        r.save(run / stem)
        line = {"scene_id": r.scene.id, "seed": r.seed, "record": stem}
        if i == 0:
            line["fdb"] = FDBScorer(asr=ScriptedASR()).score(r)
        lines.append(json.dumps(line))
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    t2 = aggregate(run, asr=ScriptedASR(), n_resamples=300)
    assert t2["n_episodes"] == 3
    assert t2["dimensions"]["backchannel"]["paper"]["bc_share"]["value"] == pytest.approx(0.5)
    with pytest.raises(FileNotFoundError, match="episodes.jsonl"):
        aggregate(tmp_path)


# ------------------------------------------------------------------ FDB export and replay import


def _run_dir(tmp_path, recs):
    run = tmp_path / "run"
    lines = []
    for i, r in enumerate(recs):
        stem = f"ep/{i}"
        r.save(run / stem)
        lines.append(json.dumps({"scene_id": r.scene.id, "seed": r.seed, "record": stem}))
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    return run


def _export_records():
    words = [("well", 2.0, 2.3), ("I", 2.4, 2.5), ("think", 2.6, 2.9), ("so", 3.0, 3.2), ("yes", 3.3, 3.6),
             ("sure", 6.6, 6.9), ("dinner", 7.0, 7.4), ("plans", 7.5, 7.9), ("mm", 5.3, 5.5)]
    recs = [record_for("pause_handling", [(2.0, 1.7)], scene_id="p"),
            record_for("backchannel", [(5.2, 0.5)], scene_id="b", bc_distribution=[1.0, 2.0, 1.0]),
            record_for("backchannel", [(5.2, 0.5), (6.0, 0.5)], scene_id="b2"),
            record_for("turn_taking", [(3.4, 2.0)], scene_id="t"),
            record_for("interruption", [(3.5, 1.8), (6.6, 2.0)], scene_id="i")]
    for k, r in enumerate(recs):
        r.mic0 = track(len(r.assistant) / 16000, [(t.start, t.end - t.start) for t in r.turns], seed=20 + k)
    return recs, words


def test_export_then_score_equals_scoring_records(tmp_path):
    from fdenv.cli.export import export_fdb
    from fdenv.record import EpisodeRecord

    recs, words = _export_records()
    run = _run_dir(tmp_path, recs)
    out = tmp_path / "fdb"
    index = export_fdb(run, out, asr=ScriptedASR(words))
    assert set(index) == {"pause_handling", "backchannel", "smooth_turn_taking", "user_interruption"}
    gt = json.loads((out / "backchannel" / "gt_distribution.json").read_text())
    # the scene's distribution is over its monologue (1 s to 9 s): on FDB's grid of the cropped track
    assert gt["0"] == fdb.fdb_ground_truth([1.0, 2.0, 1.0], (), (1.0, 9.0), 9.0) and len(gt["1"]) == int(9.0 / 0.2) + 1
    assert sum(gt["0"][:5]) == 0 and gt["0"].index(max(gt["0"])) == 5 + 40 // 2
    direct = FDBScorer(profiles=("fdb_code",), asr=ScriptedASR(words))
    for task, entries in index.items():
        for sid, meta in entries.items():
            folder = out / task / sid
            for name in ("input.wav", "output.wav", "output.json"):
                assert (folder / name).is_file()
            import soundfile as sf

            a, sra = sf.read(str(folder / "input.wav"))
            b, srb = sf.read(str(folder / "output.wav"))
            assert sra == srb == 16000 and len(a) == len(b)
            rec = EpisodeRecord.load(run / meta["record"])
            want = direct.score(rec)["fdb_code"]
            got = score_fdb_sample(folder, task, gt.get(sid) if task == "backchannel" else None, judge=direct.judge)
            for k in ("to", "latency_s", "freq_hz", "jsd", "relevance"):
                assert got[k] == pytest.approx(want[k], abs=1e-9), (task, k)
    # the pause and backchannel exports are cropped at the end of the scored turn
    b, _ = __import__("soundfile").read(str(out / "pause_handling" / "0" / "output.wav"))
    assert len(b) == 5 * 16000


def test_cli_export(tmp_path, capsys):
    from fdenv.cli.export import main

    assert main(["fdb", str(tmp_path / "nothing"), str(tmp_path / "o")]) == 2
    assert "episodes.jsonl" in capsys.readouterr().err


def test_replay_import_round_trip(tmp_path):
    from fdenv.cli.export import export_fdb
    from fdenv.errors import FDBImportError
    from fdenv.sim.replay import load_fdb_task, load_fdb_tasks

    recs, words = _export_records()
    out = tmp_path / "fdb"
    index = export_fdb(recs, out, asr=ScriptedASR(words))
    by_task = {}
    for task, entries in index.items():
        for sid in entries:
            by_task.setdefault(task, []).append(load_fdb_task(out / task / sid))

    import soundfile as sf

    (scene, x, gold), = by_task["pause_handling"]
    assert scene.kind == "pause" and gold["task"] == "pause" and scene.attributes["replay"]
    t = gold["turns"][0]
    assert (t.label, t.start, t.end) == ("pause", 1.0, 5.0)
    assert [p.silence_after_s for p in scene.turns[0].pieces][:1] == [pytest.approx(1.0)]
    assert np.array_equal(x, sf.read(str(out / "pause_handling" / "0" / "input.wav"), dtype="float32")[0])

    (scene, x, gold), = by_task["smooth_turn_taking"]
    assert scene.kind == "turn_taking" and gold["turns"][0].end == 3.0 and gold["turns"][0].start == 1.0

    (scene, x, gold), = by_task["user_interruption"]
    final, it = gold["turns"]
    assert (final.label, final.start, final.end) == ("final", 1.0, 3.0)
    assert (it.label, it.start, it.end) == ("interrupt", 5.0, 6.5)
    assert scene.turns[1].text == "wait, what about dinner plans" and scene.kind == "interruption"

    (s0, x0, g0), (s1, x1, g1) = by_task["backchannel"]
    placed = fdb.fdb_ground_truth([1.0, 2.0, 1.0], (), (1.0, 9.0), 9.0)  # over the whole FDB track now
    assert s0.kind == "backchannel" and s0.bc_distribution == tuple(placed) and g0["bc_distribution"] == placed
    assert g0["turns"][0].label == "monologue" and g0["turns"][0].end == pytest.approx(9.0)
    assert len(s1.bc_distribution) == 46
    assert len(load_fdb_tasks(out / "backchannel")) == 2
    # a backchannel sample without any distribution says what is missing
    lone = tmp_path / "lone" / "7"
    lone.mkdir(parents=True)
    (lone / "input.wav").write_bytes((out / "backchannel" / "0" / "input.wav").read_bytes())
    with pytest.raises(FDBImportError, match="distribution"):
        load_fdb_task(lone)
    scene, _, gold = load_fdb_task(lone, distribution=[1, 1])
    assert scene.bc_distribution == (1.0, 1.0) and gold["turns"][0].trps


def test_import_without_transcription_uses_energy(tmp_path):
    import soundfile as sf

    from fdenv.sim.replay import load_fdb_task

    d = tmp_path / "candor_turn_taking" / "3"
    d.mkdir(parents=True)
    sf.write(str(d / "input.wav"), track(6.0, [(0.5, 2.0)], seed=4), 48000 // 3)
    (d / "turn_taking.json").write_text(json.dumps([{"text": "[TURN-TAKING]", "timestamp": [2.5, 6.0]}]))
    scene, x, gold = load_fdb_task(d)
    t = gold["turns"][0]
    assert t.label == "final" and t.end == 2.5 and t.start == pytest.approx(0.5, abs=0.03)
    assert scene.turns[0].text == "(speech)" and len(x) == 6 * 16000


def test_bootstrap_quantile_matches_numpy_on_every_resample():
    from fdenv.score.stats import bootstrap_quantile, resample_counts

    rng = np.random.default_rng(3)
    vals = rng.normal(size=40)
    groups = [i % 7 for i in range(40)]
    for q in (0.5, 0.9):
        est = bootstrap_quantile(vals, groups, q, n_resamples=300, seed=1)
        # the same resamples, expanded by hand and given to numpy
        gi = np.array(groups)
        ref = [np.percentile(np.repeat(vals, c[gi].astype(int)), 100 * q)
               for chunk in resample_counts(7, 300, 1) for c in chunk]
        assert est.value == pytest.approx(np.percentile(vals, 100 * q))
        assert (est.lo, est.hi) == pytest.approx(tuple(np.percentile(ref, [2.5, 97.5])))
    assert bootstrap_quantile([None], None).value is None


def test_info_results_of_one_scene_are_one_bootstrap_group():
    recs = [record_for("turn_taking", [(3.4, 2.0)], seed=k, scene_id="same") for k in range(3)]
    infos = [scorer().score(r) for r in recs]  # what FDBScore puts in info["fdb"]
    assert all(i["scene_id"] == "same" for i in infos)
    assert aggregate(infos, n_resamples=100)["dimensions"]["turn_taking"]["n_scenes"] == 1
