"""The comparison table of a learned policy against a baseline, on hand-made run lines."""

from __future__ import annotations

from fdenv.train.compare import compare_lines, markdown, observations


def fdb(scene_id, dim, to, latency=None):
    res = {"to": to, "latency_s": latency}
    return {"scene_id": scene_id, "kind": dim, "fdb": {"dimension": dim, "paper": res, "fdb_code": dict(res)}}


def mpe(scene_id, pair, preserved, windows, fresh, requests=1):
    return {"scene_id": scene_id, "kind": "mpe", "pair_id": pair,
            "mpe": {"silence_preserved": preserved, "silence_windows": windows, "silence_judged": windows,
                    "fresh_onset": fresh, "presence": fresh, "requests": requests}}


def lines(pause_to, tt_to, preserved, fresh):
    out = [fdb(f"p{i}", "pause_handling", pause_to[i]) for i in range(len(pause_to))]
    out += [fdb(f"t{i}", "turn_taking", tt_to[i], 0.5) for i in range(len(tt_to))]
    for i, (p, f) in enumerate(zip(preserved, fresh)):
        out.append(mpe(f"m{i}-explicit", f"m{i}", p, 4, f))
        out.append(mpe(f"m{i}-implicit", f"m{i}", p, 4, f))
    return out


def test_observations_expand_counts_per_window_and_group_by_pair():
    obs = observations(lines([1, 0], [1, 1], [3, 4], [1, 1]))
    v, g = obs["mpe_silence"]
    assert len(v) == 16 and sum(v) == 14 and set(g) == {"m0", "m1"}
    assert obs["pause_tor"] == ([1, 0], ["p0", "p1"])


def test_criteria_met_and_missed():
    n = 12
    base = lines([1] * n, [1] * n, [2] * n, [1] * n)
    good = lines([0] * n, [1] * n, [4] * n, [1] * n)
    table = compare_lines(good, base)
    assert table["pause_tor"]["ok"] and table["mpe_silence"]["ok"]
    assert table["turn_taking_tor"]["ok"] and table["mpe_fresh_onset"]["ok"]
    bad = lines([1] * n, [0] + [1] * (n - 1), [2] * n, [0] + [1] * (n - 1))
    table = compare_lines(bad, base)
    assert table["pause_tor"]["ok"] is False and table["mpe_silence"]["ok"] is False
    assert table["turn_taking_tor"]["ok"] is False  # 1/12 below: more than 0.05
    text = markdown(table)
    assert "**no**" in text and text.count("\n") == len(table) + 1


def test_missing_measures_are_reported_not_invented():
    table = compare_lines([fdb("p0", "pause_handling", 0)], [fdb("p0", "pause_handling", 1)])
    assert table["mpe_silence"]["missing"] and "not scored" in markdown(table)


def _point(pause_tos, latencies, preserved=(4, 4)):
    lines = [fdb(f"p{i}", "pause_handling", to) for i, to in enumerate(pause_tos)]
    lines += [fdb(f"t{i}", "turn_taking", 1, lat) for i, lat in enumerate(latencies)]
    lines += [mpe(f"m{i}", f"m{i}", p, 4, 1) for i, p in enumerate(preserved)]
    data = __import__("fdenv.train.frontier", fromlist=["x"]).point_data(lines)
    return {"setting": {}, "data": data}


def _summarised_point() -> dict:
    """A stub frontier point (two pause scenes, two answered turns) with its summary, as
    ``fdenv.train.frontier.run_point`` returns one."""
    from fdenv.train.frontier import summarise

    p = _point([0, 0], [0.5, 0.5])
    return {**p, "summary": summarise(p["data"])}


def test_frontier_point_measures_from_run_lines():
    from fdenv.train.frontier import summarise

    p = _point([0, 1, 0, 0], [0.2, 0.4, 0.6, 0.8, 1.0], preserved=(4, 2))
    s = summarise(p["data"])
    assert s["pause_tor"]["value"] == 0.25 and s["turn_taking_tor"]["value"] == 1.0
    assert s["latency_median"]["value"] == 0.6 and abs(s["latency_p90"]["value"] - 0.92) < 1e-9
    assert s["mpe_silence"]["value"] == 0.75


def test_latency_at_a_pause_tor_interpolates_both_frontiers_with_intervals():
    """Policy: TOR 0 at 1.2 s, TOR 0.2 at 0.4 s -> 0.8 s at TOR 0.1; cascade: 1.6 s and 1.0 s ->
    1.3 s. 40 pause and 40 turn-taking scenes: the difference (-0.5 s) is clearly below 0."""
    from fdenv.train.frontier import latency_at_tor, markdown

    n = 40
    two_in_ten = [1 if i % 5 == 0 else 0 for i in range(n)]
    pol = [_point([0] * n, [1.2] * n), _point(two_in_ten, [0.4] * n)]
    cas = [_point([0] * n, [1.6] * n), _point(two_in_ten, [1.0] * n)]
    at = latency_at_tor(pol, cas, n_resamples=400)
    assert abs(at["policy"]["value"] - 0.8) < 1e-9 and abs(at["cascade"]["value"] - 1.3) < 1e-9
    assert abs(at["diff"]["value"] + 0.5) < 1e-9 and at["diff"]["hi"] < 0 and at["policy_faster"]
    # a frontier that never gets down to TOR 0.10 has no latency there
    high = [_point([1] * n, [0.3] * n)]
    at = latency_at_tor(high, cas, n_resamples=50)
    assert at["policy"]["value"] is None and not at["policy_faster"]
    for p in pol + cas:
        from fdenv.train.frontier import summarise

        p["summary"] = summarise(p["data"])
    text = markdown({"anechoic": {"policy": pol, "cascade": cas, "at_tor": latency_at_tor(pol, cas, n_resamples=50)}})
    assert text.count("| policy |") == 2 and "Median latency at pause TOR 0.10" in text


def test_the_turn_taking_tor_is_read_where_the_latency_is():
    """A frontier fast only on the few turns it answers shows it: policy points TOR 0 answering 4 of
    40 turns in 0.6 s and TOR 0.2 answering all in 0.4 s -> at TOR 0.1 latency 0.5 s, turn-taking
    TOR (0.1 + 1.0) / 2 = 0.55; the cascade answers every turn."""
    from fdenv.train.frontier import latency_at_tor, markdown, point_data, summarise

    n = 40
    two_in_ten = [1 if i % 5 == 0 else 0 for i in range(n)]
    few = [fdb(f"p{i}", "pause_handling", 0) for i in range(n)]
    few += [fdb(f"t{i}", "turn_taking", int(i < 4), 0.6 if i < 4 else None) for i in range(n)]
    pol = [{"setting": {}, "data": point_data(few)}, _point(two_in_ten, [0.4] * n)]
    cas = [_point([0] * n, [1.6] * n), _point(two_in_ten, [1.0] * n)]
    at = latency_at_tor(pol, cas, n_resamples=300)
    assert abs(at["policy"]["value"] - 0.5) < 1e-9 and abs(at["tt_policy"]["value"] - 0.55) < 1e-9
    assert at["tt_cascade"]["value"] == 1.0 and at["tt_cascade"]["lo"] == 1.0
    assert at["tt_policy"]["lo"] < 0.55 < at["tt_policy"]["hi"]
    for p in pol + cas:
        p["summary"] = summarise(p["data"])
    text = markdown({"anechoic": {"policy": pol, "cascade": cas, "at_tor": at}})
    assert "turn-taking TOR there: policy 0.550 [" in text and "cascade 1.000 [1.000, 1.000]" in text


def _episodes(per_scene: list[list], dim: str, latencies: list[list] | None = None) -> list[dict]:
    """Run lines of several episodes (seeds 0, 1, ...) of each scene: ``per_scene[i]`` its TOs."""
    out = []
    for i, tos in enumerate(per_scene):
        for seed, to in enumerate(tos):
            lat = None if latencies is None else latencies[i][seed]
            out.append({**fdb(f"{dim[0]}{i}", dim, to, lat), "seed": seed})
    return out


def test_several_episodes_of_a_scene_are_pooled_and_resampled_with_their_scene():
    """Two episodes per scene: each is kept under its own key, the measures pool them, and the
    bootstrap draws scenes, so a scene's episodes move together (an interval over 4 scenes, not 8
    episodes)."""
    from fdenv.train.frontier import point_data, scene_of, summarise

    lines = _episodes([[1, 0], [0, 0], [1, 1], [0, 0]], "pause_handling")
    lines += _episodes([[1, 1], [1, 0]], "turn_taking", [[0.3, 0.5], [0.9, None]])
    data = point_data(lines)
    assert sorted(data["pause"]) == ["p0@0", "p0@1", "p1@0", "p1@1", "p2@0", "p2@1", "p3@0", "p3@1"]
    assert data["latency"] == {"t0@0": 0.3, "t0@1": 0.5, "t1@0": 0.9}
    assert {scene_of(k) for k in data["pause"]} == {"p0", "p1", "p2", "p3"} and scene_of("p0") == "p0"
    s = summarise(data)
    assert s["pause_tor"]["value"] == 3 / 8 and (s["pause_tor"]["n"], s["pause_tor"]["n_groups"]) == (8, 4)
    assert s["turn_taking_tor"]["value"] == 3 / 4 and s["turn_taking_tor"]["n_groups"] == 2
    assert s["latency_median"]["value"] == 0.5 and s["latency_median"]["n_groups"] == 2
    # one episode per scene: the keys are the scene ids, as before
    assert sorted(point_data(_episodes([[1], [0]], "pause_handling"))["pause"]) == ["p0", "p1"]


def test_an_episode_repeated_changes_no_measure_nor_interval():
    """Each scene played twice with the same results is the same evidence as once: every measure,
    interval and the latency at pause TOR 0.10 against the cascade come out the same."""
    from fdenv.train.frontier import latency_at_tor, point_data, summarise

    n = 30
    pauses = [[int(i % 4 == 0)] for i in range(n)]
    lats = [[0.3 + 0.05 * (i % 7)] for i in range(n)]

    def point(k, pause, lat):
        data = point_data(_episodes([t * k for t in pause], "pause_handling")
                          + _episodes([[1] * k] * n, "turn_taking", [t * k for t in lat]))
        return {"setting": {}, "data": data}

    once = [point(1, pauses, lats), point(1, [[0]] * n, [[x[0] + 0.6] for x in lats])]
    twice = [point(2, pauses, lats), point(2, [[0]] * n, [[x[0] + 0.6] for x in lats])]
    assert "p0@1" in twice[0]["data"]["pause"]
    for a, b in zip(once, twice):
        sa, sb = summarise(a["data"]), summarise(b["data"])
        for key in sa:
            assert {k: v for k, v in sa[key].items() if k != "n"} == {k: v for k, v in sb[key].items() if k != "n"}
    cascade = lambda k: [point(k, pauses, [[x[0] + 0.8] for x in lats]), point(k, [[0]] * n, [[2.0]] * n)]  # noqa: E731
    assert latency_at_tor(once, cascade(1), n_resamples=200) == latency_at_tor(twice, cascade(2), n_resamples=200)


def test_a_real_point_with_two_episodes_per_scene_reads_both_seeds_from_one_folder(tmp_path):
    """``run_point(episodes=2)``: one run folder per set holds seeds 0 and 1 of each scene, the
    point reads both, and the single-episode point read from the same folder is seed 0's alone."""
    from fdenv_agents import make_agent

    from fdenv.runs import read_episodes
    from fdenv.train.frontier import run_point

    two = run_point(make_agent("talker"), None, sets=("pause",), limit=2, out=tmp_path, episodes=2)
    one = run_point(make_agent("talker"), None, sets=("pause",), limit=2, out=tmp_path)
    assert sorted(two["data"]["pause"]) == ["pause-0005@0", "pause-0005@1", "pause-0012@0", "pause-0012@1"]
    assert one["data"]["pause"] == {k.split("@")[0]: v for k, v in two["data"]["pause"].items() if k.endswith("@0")}
    (folder,) = {p.parent for p in tmp_path.glob("*/episodes.jsonl")}
    assert sorted((ln["scene_id"], ln["seed"]) for ln in read_episodes(folder)) == [
        ("pause-0005", 0), ("pause-0005", 1), ("pause-0012", 0), ("pause-0012", 1)]
    assert two["summary"]["pause_tor"]["n_groups"] == 2
    # a later first seed reads that seed's episodes from the same folder, playing none anew
    later = run_point(make_agent("talker"), None, sets=("pause",), limit=2, out=tmp_path, seed=1)
    assert later["data"]["pause"] == {k.split("@")[0]: v for k, v in two["data"]["pause"].items() if k.endswith("@1")}
    assert len(read_episodes(folder)) == 4
    import pytest

    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="episodes="):
            run_point(make_agent("talker"), None, sets=("pause",), limit=2, out=tmp_path, episodes=bad)


def test_the_frontier_says_how_many_episodes_and_keeps_reports_of_other_counts_apart(monkeypatch):
    import pytest

    from fdenv.train import frontier as fr

    counts = []

    def run_point(agent, room, sets, split, limit, out, scoring, tts="espeak", behaviour="natural", seed=0, episodes=1,
                  reuse_alike=False):
        counts.append(episodes)
        return _summarised_point()

    monkeypatch.setattr(fr, "run_point", run_point)
    kw = dict(conditions=["anechoic"], thresholds=[0.5], endpoints_ms=[1000], log=lambda s: None)
    three = fr.frontier("p.pt", lambda name, **k: name, episodes=3, **kw)
    assert counts == [3, 3] and three["anechoic"]["episodes"] == 3
    assert "; 3 episodes per scene" in fr.markdown(three)
    one = fr.frontier("p.pt", lambda name, **k: name, **kw)
    assert "episodes" not in one["anechoic"] and "episodes per scene" not in fr.markdown(one)
    with pytest.raises(ValueError, match="episodes 3, an earlier report's None"):
        fr.merge([one, three])


def test_the_frontier_plays_fresh_draws_from_a_later_first_episode_and_keeps_them_apart(monkeypatch):
    """``first_episode``: every point's episodes start at that seed; the report says which seeds,
    and a report of other draws is not merged with it."""
    import pytest

    from fdenv.train import frontier as fr

    played = []

    def run_point(agent, room, sets, split, limit, out, scoring, tts="espeak", behaviour="natural", seed=0, episodes=1,
                  reuse_alike=False):
        played.append((seed, episodes))
        return _summarised_point()

    monkeypatch.setattr(fr, "run_point", run_point)
    kw = dict(conditions=["anechoic"], thresholds=[0.5], endpoints_ms=[1000], log=lambda s: None)
    fresh = fr.frontier("p.pt", lambda name, **k: name, episodes=3, first_episode=3, **kw)
    assert played == [(3, 3), (3, 3)] and fresh["anechoic"]["first_episode"] == 3
    assert "; 3 episodes per scene (episode seeds 3-5)" in fr.markdown(fresh)
    first = fr.frontier("p.pt", lambda name, **k: name, episodes=3, **kw)
    assert played[2:] == [(0, 3), (0, 3)] and "first_episode" not in first["anechoic"]
    assert "episode seeds" not in fr.markdown(first)
    single = fr.frontier("p.pt", lambda name, **k: name, first_episode=4, **kw)
    assert "; episode seed 4" in fr.markdown(single)
    with pytest.raises(ValueError, match="first_episode 3, an earlier report's None"):
        fr.merge([first, fresh])
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="first_episode="):
            fr.frontier("p.pt", lambda name, **k: name, first_episode=bad, **kw)


def test_the_frontier_command_refuses_a_negative_first_episode(capsys):
    import pytest

    from fdenv.cli.compare import main

    with pytest.raises(SystemExit):
        main(["frontier", "--first-episode", "-1", "--conditions", "anechoic"])
    assert "--first-episode -1: give 0 or more" in capsys.readouterr().err


def test_the_frontier_command_refuses_fewer_than_one_episode(capsys):
    import pytest

    from fdenv.cli.compare import main

    with pytest.raises(SystemExit):
        main(["frontier", "--episodes", "0", "--conditions", "anechoic"])
    assert "--episodes 0: give at least 1" in capsys.readouterr().err


def test_frontier_plays_every_point_with_the_chosen_voices(monkeypatch):
    """``tts``: the humans' back end (the runs') and both agents' own voices, at every point."""
    from fdenv.train import frontier as fr

    made, played = [], []

    def make_agent(name, **kw):
        made.append((name, kw["tts"]))
        return name

    def run_point(agent, room, sets, split, limit, out, scoring, tts="espeak", behaviour="natural", seed=0, episodes=1,
                  reuse_alike=False):
        played.append((agent, room, tts))
        reused.append(reuse_alike)
        return _summarised_point()

    reused = []
    monkeypatch.setattr(fr, "run_point", run_point)
    res = fr.frontier("p.pt", make_agent, conditions=["car_cabin"], thresholds=[0.3, 0.5], endpoints_ms=[500],
                      log=lambda s: None, tts="kokoro")
    assert made == [("policy", "kokoro"), ("policy", "kokoro"), ("cascade", "kokoro")]
    assert played == [("policy", "car_cabin", "kokoro")] * 2 + [("cascade", "car_cabin", "kokoro")]
    # the swept agent's points may copy what another threshold played alike; the cascade's play all
    assert reused == [True, True, False]
    reused.clear()
    fr.frontier("p.pt", make_agent, conditions=["car_cabin"], thresholds=[0.3], endpoints_ms=[], log=lambda s: None,
                reuse_alike=False)
    assert reused == [False]
    assert len(res["car_cabin"]["policy"]) == 2
    # the agents' own voice apart from the humans': both agents alike, the runs keep the humans'
    made.clear(), played.clear()
    res = fr.frontier("p.pt", make_agent, conditions=["car_cabin"], thresholds=[0.3], endpoints_ms=[500],
                      log=lambda s: None, tts="kokoro", agent_tts="espeak")
    assert made == [("policy", "espeak"), ("cascade", "espeak")]
    assert played == [("policy", "car_cabin", "kokoro"), ("cascade", "car_cabin", "kokoro")]
    assert "voices: the humans' kokoro, the agents' espeak" in fr.markdown(res)


def test_frontier_sweeps_the_chosen_agent_with_its_shipped_checkpoint_by_default(monkeypatch):
    """``policy_agent="turn_detector"``: the cascade with the learned turn-end model is the swept
    side; no checkpoint: the agent's shipped one (None reaches the agent, not the string 'None')."""
    from fdenv.train import frontier as fr

    made = []

    def make_agent(name, **kw):
        made.append((name, kw.get("checkpoint"), kw.get("threshold")))
        return name

    monkeypatch.setattr(fr, "run_point", lambda *args, **kwargs: _summarised_point())
    res = fr.frontier(None, make_agent, conditions=["anechoic"], thresholds=[0.2, 0.8], endpoints_ms=[1000],
                      log=lambda s: None, policy_agent="turn_detector")
    assert made == [("turn_detector", None, 0.2), ("turn_detector", None, 0.8), ("cascade", None, None)]
    assert res["anechoic"]["policy_agent"] == "turn_detector" and res["anechoic"]["policy_checkpoint"] is None
    assert "policy: the turn_detector agent; voices" in fr.markdown(res)


def test_frontier_gives_the_swept_agent_its_other_settings_at_every_threshold(monkeypatch, capsys):
    """``policy_kwargs`` (``--policy-kwargs``): e.g. the turn detector's group model reaches the swept
    agent at each threshold, never the cascade; the report names them; the frontier's own knobs
    are refused there."""
    import pytest

    from fdenv.cli import compare as cli
    from fdenv.train import frontier as fr

    made = []

    def make_agent(name, **kw):
        made.append((name, kw.get("threshold"), kw.get("group_checkpoint")))
        return name

    monkeypatch.setattr(fr, "run_point", lambda *args, **kwargs: _summarised_point())
    res = fr.frontier("single_user", make_agent, conditions=["anechoic"], thresholds=[0.9, 0.95], endpoints_ms=[1000],
                      log=lambda s: None, policy_agent="turn_detector", policy_kwargs={"group_checkpoint": "words"})
    assert made == [("turn_detector", 0.9, "words"), ("turn_detector", 0.95, "words"), ("cascade", None, None)]
    assert res["anechoic"]["policy_checkpoint"] == "single_user"
    assert "policy: the turn_detector agent, checkpoint=single_user, group_checkpoint=words;" in fr.markdown(res)
    with pytest.raises(ValueError, match="threshold"):
        fr.frontier(None, make_agent, conditions=["anechoic"], policy_kwargs={"threshold": 0.5}, log=lambda s: None)

    seen = []
    monkeypatch.setattr(fr, "frontier", lambda *a, **kw: seen.append(kw["policy_kwargs"]) or _one_point_frontier())
    cli.main(["frontier", "--conditions", "anechoic", "--policy-kwargs", '{"group_checkpoint": "words"}'])
    assert seen == [{"group_checkpoint": "words"}]


def test_frontier_plays_every_point_under_the_chosen_human_behaviour(monkeypatch):
    """``behaviour``: the humans' profile reaches every point's runs (both agents), and the report
    names it; the env's default (natural) when not given."""
    from fdenv.train import frontier as fr

    played = []

    def run_point(agent, room, sets, split, limit, out, scoring, tts="espeak", behaviour="natural", seed=0, episodes=1,
                  reuse_alike=False):
        played.append((agent, behaviour))
        return _summarised_point()

    monkeypatch.setattr(fr, "run_point", run_point)
    res = fr.frontier(None, lambda name, **kw: name, conditions=["anechoic"], thresholds=[0.5], endpoints_ms=[1000],
                      log=lambda s: None, behaviour="paper")
    assert played == [("policy", "paper"), ("cascade", "paper")]
    assert res["anechoic"]["behaviour"] == "paper"
    assert "the humans' behaviour: paper" in fr.markdown(res)
    played.clear()
    res = fr.frontier(None, lambda name, **kw: name, conditions=["anechoic"], thresholds=[0.5], endpoints_ms=[],
                      log=lambda s: None)
    assert played == [("policy", "natural")] and "the humans' behaviour: natural" in fr.markdown(res)


def test_a_frontier_point_runs_the_env_with_the_chosen_human_behaviour(tmp_path):
    """A real point (the silent agent, two pause scenes): its run folder's env ran the profile it
    was given, and the natural and paper runs are kept apart."""
    import json

    from fdenv_agents import make_agent

    from fdenv.train import frontier as fr

    for profile in ("paper", "natural"):
        p = fr.run_point(make_agent("silent"), None, sets=("pause",), limit=2, out=tmp_path, behaviour=profile)
        assert list(p["data"]["pause"].values()) == [0.0, 0.0]  # two scenes; the silent agent takes no pause
    configs = [json.loads(f.read_text()) for f in sorted(tmp_path.glob("*/config.json"))]
    assert sorted(c["env"]["behaviour"] for c in configs) == ["natural", "paper"]


def _one_point_frontier() -> dict:
    """What ``fdenv.train.frontier.frontier`` returns for one policy point in the anechoic room."""
    from fdenv.train import frontier as fr

    p = _point([0, 0], [0.5, 0.5])
    point = {**p, "summary": fr.summarise(p["data"]), "setting": {"threshold": 0.5}}
    return {"anechoic": {"policy": [point], "cascade": [], "at_tor": fr.latency_at_tor([point], [])}}


def test_frontier_cli_makes_the_report_folder_before_the_runs_and_refuses_a_folder(monkeypatch, tmp_path, capsys):
    """A report path in a folder that does not exist yet is made before the runs (they may take
    hours; the report must not be lost at the end), and a path that is a folder fails at once."""
    import pytest

    from fdenv.cli import compare as cli
    from fdenv.train import frontier as fr

    report = tmp_path / "new" / "deeper" / "frontier.md"
    seen = []

    def frontier(*args, **kwargs):
        seen.append(report.parent.is_dir())  # the folder exists while the runs go
        return _one_point_frontier()

    monkeypatch.setattr(fr, "frontier", frontier)
    monkeypatch.setattr(fr, "plot", lambda res, folder: [])
    cli.main(["frontier", "--policy", "p.pt", "--conditions", "anechoic", "--report", str(report)])
    assert seen == [True]
    assert report.is_file() and report.with_suffix(".json").is_file()

    seen.clear()
    with pytest.raises(SystemExit):
        cli.main(["frontier", "--policy", "p.pt", "--report", str(tmp_path)])
    assert seen == [] and "is a folder" in capsys.readouterr().err


def test_frontier_cli_prints_each_point_as_it_ends(monkeypatch, capsys):
    """A frontier runs for an hour or more, often with its output sent to a file: each point's
    line is flushed as it is printed, not held in the buffer until the end."""
    import sys

    from fdenv.cli import compare as cli
    from fdenv.train import frontier as fr

    flushed = []

    class Out:
        def write(self, text):
            return len(text)

        def flush(self):
            flushed.append(True)

    def frontier(*args, log, **kwargs):
        real, sys.stdout = sys.stdout, Out()
        try:
            log("[anechoic] policy threshold 0.5: ...")
        finally:
            sys.stdout = real
        assert flushed, "the point's line was not flushed"
        return _one_point_frontier()

    monkeypatch.setattr(fr, "frontier", frontier)
    cli.main(["frontier", "--policy", "p.pt", "--conditions", "anechoic"])
    assert "Median latency at pause TOR" in capsys.readouterr().out


def test_frontier_cli_passes_the_human_behaviour_and_refuses_an_unknown_one(monkeypatch, capsys):
    import pytest

    from fdenv.cli import compare as cli
    from fdenv.train import frontier as fr

    seen = []

    def frontier(*args, **kwargs):
        seen.append(kwargs["behaviour"])
        return _one_point_frontier()

    monkeypatch.setattr(fr, "frontier", frontier)
    cli.main(["frontier", "--conditions", "anechoic", "--behaviour", "paper"])
    cli.main(["frontier", "--conditions", "anechoic"])
    assert seen == ["paper", "natural"]
    with pytest.raises(SystemExit):
        cli.main(["frontier", "--behaviour", "scripted"])
    assert "--behaviour: invalid choice: 'scripted'" in capsys.readouterr().err


def test_frontier_cli_copies_alike_episodes_unless_told_to_play_all(monkeypatch):
    from fdenv.cli import compare as cli
    from fdenv.train import frontier as fr

    seen = []

    def frontier(*args, **kwargs):
        seen.append(kwargs["reuse_alike"])
        return _one_point_frontier()

    monkeypatch.setattr(fr, "frontier", frontier)
    cli.main(["frontier", "--conditions", "anechoic"])
    cli.main(["frontier", "--conditions", "anechoic", "--play-all"])
    assert seen == [True, False]


def test_compare_plays_the_chosen_learned_agent_with_its_shipped_checkpoint_under_the_chosen_humans(monkeypatch):
    """``policy_agent``: the agent compared (the command line's ``--policy-agent`` used to be
    ignored, always the GRU policy); no checkpoint: the agent's shipped one (None reaches it, not
    the string 'None'); ``behaviour`` reaches both agents' runs."""
    from fdenv.train import compare as cmp

    made, ran = [], []
    monkeypatch.setattr(cmp, "run_agent", lambda agent, *a, **kw: ran.append((agent, kw["behaviour"])) or [])

    def make_agent(name, **kw):
        made.append((name, kw.get("checkpoint")))
        return name

    res = cmp.compare(None, "cascade", sets=("pause",), make_agent=make_agent, policy_agent="turn_detector",
                      behaviour="paper")
    assert made == [("turn_detector", None), ("cascade", None)]
    assert ran == [("cascade", "paper"), ("turn_detector", "paper")]
    assert "not scored" in res["markdown"]
    made.clear(), ran.clear()
    cmp.compare("p.pt", make_agent=make_agent, sets=("pause",))
    assert made == [("policy", "p.pt"), ("cascade", None)] and ran == [("cascade", "natural"), ("policy", "natural")]


def test_compare_cli_passes_the_learned_agent_and_the_human_behaviour(monkeypatch, capsys):
    from fdenv.cli import compare as cli
    from fdenv.train import compare as cmp

    seen = []

    def compare(policy, baseline, baseline_kwargs, **kw):
        seen.append((policy, kw["policy_agent"], kw["behaviour"]))
        return {"markdown": "table"}

    monkeypatch.setattr(cmp, "compare", compare)
    cli.main(["--policy-agent", "turn_detector", "--behaviour", "paper"])
    cli.main(["--policy", "p.pt"])
    assert seen == [(None, "turn_detector", "paper"), ("p.pt", "policy", "natural")]
