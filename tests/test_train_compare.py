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
