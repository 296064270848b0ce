"""The test targets judged from frontier reports: known verdicts on hand-made reports, and the
command line."""

from __future__ import annotations

import json
import re

import pytest

from fdenv.cli.compare import main
from fdenv.train.targets import all_met, judge, markdown, verdict


def est(value, lo, hi):
    return {"value": value, "lo": lo, "hi": hi}


def point(threshold, pause, tt, latency, silence=None):
    summary = {"pause_tor": pause, "turn_taking_tor": tt, "latency_median": latency}
    if silence is not None:
        summary["mpe_silence"] = silence
    return {"setting": {"threshold": threshold}, "summary": summary}


def condition(points, diff=None, faster=False):
    at = {"target_tor": 0.1, "diff": diff or {"value": None}, "policy_faster": faster}
    return {"policy": points, "cascade": [{"setting": {"endpoint_silence_ms": 1500}}] if diff else [], "at_tor": at}


def report():
    """The quiet room meets everything at 0.9 (pause TOR's interval reaching past 0.10); the car
    cabin misses its pauses and is not shown faster than the cascade."""
    quiet = condition([point(0.5, est(0.4, 0.2, 0.6), est(1, 1, 1), est(0.3, 0.2, 0.4)),
                       point(0.9, est(0.067, 0.0, 0.167), est(1.0, 1.0, 1.0), est(0.39, 0.36, 0.45),
                             est(0.985, 0.97, 0.996))],
                      diff=est(-1.2, -1.4, -0.6) | {"defined_share": 0.98}, faster=True)
    car = condition([point(0.9, est(0.167, 0.03, 0.3), est(0.967, 0.9, 1.0), est(0.75, 0.6, 0.9))],
                    diff=est(-0.9, -1.2, 0.1) | {"defined_share": 0.98}, faster=False)
    return {"anechoic": quiet, "car_cabin": car}


@pytest.mark.parametrize("e, bound, side, expected", [
    (est(0.07, 0.0, 0.17), 0.10, "max", "point"),
    (est(0.07, 0.0, 0.09), 0.10, "max", "met"),
    (est(0.10, 0.0, 0.20), 0.10, "max", "point"),  # at the bound is within it
    (est(0.17, 0.03, 0.30), 0.10, "max", "not met"),
    (est(0.97, 0.96, 0.99), 0.95, "min", "met"),
    (est(0.97, 0.90, 1.00), 0.95, "min", "point"),
    (est(0.94, 0.90, 0.99), 0.95, "min", "not met"),
    ({"value": None}, 0.95, "min", "-"),
    (None, 0.95, "min", "-"),
])
def test_a_verdict_says_whether_the_estimate_and_its_interval_meet_the_bound(e, bound, side, expected):
    assert verdict(e, bound, side) == expected


def test_judging_a_report_at_the_default_threshold():
    j = judge(report(), 0.9)
    quiet, car = j["anechoic"], j["car_cabin"]
    assert {k: v for k, (_, v) in quiet.items()} == {
        "pause_tor": "point", "turn_taking_tor": "met", "latency_median": "met", "mpe_silence": "met",
        "faster_than_cascade": "met"}
    # 0.75 s passes nothing in the car (its bound is 0.7 s); no MPE was measured there
    assert {k: v for k, (_, v) in car.items()} == {
        "pause_tor": "not met", "turn_taking_tor": "point", "latency_median": "not met", "mpe_silence": "-",
        "faster_than_cascade": "not met"}
    assert not all_met(j)
    assert all_met({"anechoic": quiet}) and not all_met({"anechoic": quiet}, strict=True)
    # the quiet room's latency bound is 0.5 s: the same 0.39 s passes, 0.6 s would not
    slow = report()
    slow["anechoic"]["policy"][1]["summary"]["latency_median"] = est(0.6, 0.55, 0.7)
    assert judge(slow, 0.9)["anechoic"]["latency_median"][1] == "not met"
    text = markdown(j, "seed 1")
    assert "| seed 1, car_cabin | 0.167 [0.030, 0.300]: **not met** |" in text
    assert "-1.20 [-1.40, -0.60], defined 98.0%: met" in text


def test_mpe_silence_is_read_from_a_separate_report_at_its_own_threshold():
    mpe = {"car_cabin": condition([point(0.93, None, None, None, est(0.961, 0.94, 0.98))])}
    j = judge(report(), 0.9, mpe_report=mpe, mpe_threshold=0.93)
    assert j["car_cabin"]["mpe_silence"] == (est(0.961, 0.94, 0.98), "point")
    assert j["anechoic"]["mpe_silence"][1] == "met"  # its own report's, the MPE report has no quiet room
    with pytest.raises(ValueError, match=r"MPE report, condition 'car_cabin': no point at threshold 0.9; .*\[0.93\]"):
        judge(report(), 0.9, mpe_report=mpe)


def test_a_frontier_that_never_comes_down_to_the_pause_target_is_not_shown_faster():
    never = {"car_cabin": condition([point(0.9, est(0.3, 0.2, 0.4), None, None)], diff={"value": None})}
    j = judge(never, 0.9)
    assert j["car_cabin"]["faster_than_cascade"][1] == "not met"
    assert markdown(j).endswith("| not reached: **not met** |")
    no_cascade = {"car_cabin": condition([point(0.9, est(0.3, 0.2, 0.4), None, None)])}
    assert judge(no_cascade, 0.9)["car_cabin"]["faster_than_cascade"][1] == "-"


def test_a_threshold_the_report_did_not_run_is_named_with_the_ones_it_did():
    with pytest.raises(ValueError, match=r"'anechoic': no point at threshold 0.93; the report has \[0.5, 0.9\]"):
        judge(report(), 0.93)
    with pytest.raises(ValueError, match="the targets are set for"):
        judge({"kitchen": condition([point(0.9, None, None, None)])}, 0.9)


def test_targets_cli_prints_the_table_and_checks(tmp_path, capsys):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(report()))
    main(["targets", "--frontier", str(path), "--threshold", "0.9", "--label", "seed 1"])
    out = capsys.readouterr().out
    assert out.count("| seed 1, ") == 2 and "latency at pause TOR 0.10" in out
    with pytest.raises(SystemExit) as e:
        main(["targets", "--frontier", str(path), "--threshold", "0.9", "--check", "point"])
    assert e.value.code == 1
    quiet = tmp_path / "quiet.json"
    quiet.write_text(json.dumps({"anechoic": report()["anechoic"]}))
    main(["targets", "--frontier", str(quiet), "--threshold", "0.9", "--check", "point"])  # all met: no exit
    with pytest.raises(SystemExit) as e:
        main(["targets", "--frontier", str(quiet), "--threshold", "0.9", "--check", "interval"])
    assert e.value.code == 1


def test_targets_cli_names_a_bad_report_or_threshold(tmp_path, capsys):
    bad = tmp_path / "notes.json"
    bad.write_text("[1, 2]")
    for args, message in ((["--frontier", str(tmp_path / "missing.json")], "--frontier .*missing.json.*cannot read"),
                          (["--frontier", str(bad)], "--frontier .*notes.json.*not a frontier report")):
        with pytest.raises(SystemExit) as e:
            main(["targets", *args, "--threshold", "0.9"])
        assert e.value.code == 2
        assert re.search(message, capsys.readouterr().err)
    good = tmp_path / "f.json"
    good.write_text(json.dumps(report()))
    with pytest.raises(SystemExit):
        main(["targets", "--frontier", str(good), "--threshold", "0.7"])
    assert "no point at threshold 0.7" in capsys.readouterr().err


def _fake_frontier(monkeypatch):
    """``frontier`` over made-up run lines: the swept agent takes 8 pauses in 20 at 0.5 (answering
    from 0.3 s), 1 at 0.9 (from 0.4 s), none at 0.99 (from 1.0 s); the cascade 5 at 1000 ms (from
    1.1 s), none at 2000 ms (from 2.1 s). Returns ``sweep(thresholds, endpoints_ms, **kw)``."""
    from fdenv.train import frontier as fr

    def fdb(sid, dim, to, latency=None):
        return {"scene_id": sid, "fdb": {"dimension": dim, "paper": {"to": to, "latency_s": latency}}}

    def fake_point(agent, *args, **kwargs):
        # the swept agent takes 1 pause in 20 at 0.9 and answers from 0.4 s, none at 0.99 (from 1.0 s);
        # the cascade 5 pauses at 1000 ms (from 1.1 s) and none at 2000 ms (from 2.1 s)
        taken, lat = {0.5: (8, 0.3), 0.9: (1, 0.4), 0.99: (0, 1.0), 1000: (5, 1.1), 2000: (0, 2.1)}[agent]
        lines = [fdb(f"p{i}", "pause_handling", int(i < taken)) for i in range(20)]
        lines += [fdb(f"t{i}", "turn_taking", 1, lat + 0.01 * i) for i in range(20)]
        data = fr.point_data(lines)
        return {"data": data, "summary": fr.summarise(data)}

    def make_agent(name, threshold=None, endpoint_silence_ms=None, **kw):
        return threshold if name == "turn_detector" else endpoint_silence_ms

    monkeypatch.setattr(fr, "run_point", fake_point)

    def sweep(thresholds, endpoints_ms, **kw):
        return fr.frontier("mine.json", make_agent, conditions=["anechoic"], thresholds=thresholds,
                           endpoints_ms=endpoints_ms, log=lambda s: None, policy_agent="turn_detector", **kw)

    return sweep


def test_a_saved_frontier_report_is_judged_end_to_end(monkeypatch, tmp_path, capsys):
    """What ``frontier --report`` saves is what ``targets`` reads: points summarised from run lines,
    the latency at pause TOR 0.10 against the cascade, through the JSON file."""
    from fdenv.train import frontier as fr

    res = _fake_frontier(monkeypatch)([0.5, 0.9, 0.99], [1000, 2000])
    fr.save(res, tmp_path / "f.json")
    with pytest.raises(SystemExit) as e:  # every other target is met, but MPE was not measured
        main(["targets", "--frontier", str(tmp_path / "f.json"), "--threshold", "0.9", "--check", "point"])
    assert e.value.code == 1
    row = capsys.readouterr().out.splitlines()[-1]
    # pause TOR 0.05, every turn answered, median 0.495 s (under 0.5), faster than the cascade; no MPE
    assert row.startswith("| anechoic | 0.050 [") and "1.000 [1.000, 1.000]: met" in row
    assert "| 0.49 [0.46, 0.54]: point | - | -1.31 [" in row
    j = judge(json.loads((tmp_path / "f.json").read_text()), 0.9)["anechoic"]
    assert j["faster_than_cascade"][1] == "met" and j["mpe_silence"][1] == "-"
    assert j["faster_than_cascade"][0]["value"] < 0


def test_reports_of_the_same_agent_are_merged_into_one_frontier(monkeypatch, tmp_path, capsys):
    """A sweep without the default's point and a later run of that point alone, merged, judge as
    the one sweep with every point does, the latency at pause TOR 0.10 against the cascade
    included; reports of another agent, or a point measured twice with other results, are
    refused."""
    from fdenv.train import frontier as fr

    sweep = _fake_frontier(monkeypatch)
    whole = sweep([0.5, 0.9, 0.99], [1000, 2000])
    fr.save(sweep([0.99, 0.5], [1000, 2000]), tmp_path / "sweep.json")
    fr.save(sweep([0.9], []), tmp_path / "default.json")
    merged = fr.merge([json.loads((tmp_path / n).read_text()) for n in ("sweep.json", "default.json")])
    assert [p["setting"]["threshold"] for p in merged["anechoic"]["policy"]] == [0.5, 0.9, 0.99]
    assert merged["anechoic"]["at_tor"] == json.loads(json.dumps(whole["anechoic"]["at_tor"]))
    assert judge(merged, 0.9) == judge(json.loads(json.dumps(whole)), 0.9)
    main(["targets", "--frontier", str(tmp_path / "sweep.json"), str(tmp_path / "default.json"), "--threshold", "0.9"])
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("| anechoic | 0.050 [") and "| -1.31 [" in row
    # alone, the default's report has no cascade to compare with
    assert judge(json.loads((tmp_path / "default.json").read_text()), 0.9)["anechoic"]["faster_than_cascade"][1] == "-"

    other = json.loads((tmp_path / "default.json").read_text())
    other["anechoic"]["behaviour"] = "paper"
    (tmp_path / "paper.json").write_text(json.dumps(other))
    with pytest.raises(SystemExit):
        main(["targets", "--frontier", str(tmp_path / "sweep.json"), str(tmp_path / "paper.json"), "--threshold", "0.9"])
    assert "report 2, condition 'anechoic': behaviour 'paper'" in capsys.readouterr().err
    again = json.loads((tmp_path / "sweep.json").read_text())
    at_half = next(p for p in again["anechoic"]["policy"] if p["setting"]["threshold"] == 0.5)
    at_half["data"]["pause"]["p7"] = 1 - at_half["data"]["pause"]["p7"]  # one scene's result otherwise
    with pytest.raises(ValueError, match=r"the policy point \{'threshold': 0.5\} is in an earlier report with other"):
        fr.merge([json.loads((tmp_path / "sweep.json").read_text()), again])
    # the same point twice, with the same results, is kept once
    twice = fr.merge([json.loads((tmp_path / "sweep.json").read_text())] * 2)
    assert [p["setting"]["threshold"] for p in twice["anechoic"]["policy"]] == [0.5, 0.99]


def test_targets_plots_the_merged_frontier(monkeypatch, tmp_path, capsys):
    """``--plot PREFIX`` draws the merged frontier, one PNG per condition, every report's points in
    it; a prefix in a folder that does not exist is refused before anything is read."""
    from fdenv.train import frontier as fr

    drawn = []
    real_plot = fr.plot

    def spy(res, folder, prefix="frontier"):
        drawn.append(res)
        return real_plot(res, folder, prefix)

    monkeypatch.setattr(fr, "plot", spy)
    sweep = _fake_frontier(monkeypatch)
    fr.save(sweep([0.99, 0.5], [1000, 2000]), tmp_path / "sweep.json")
    fr.save(sweep([0.9], []), tmp_path / "default.json")
    (tmp_path / "plots").mkdir()
    main(["targets", "--frontier", str(tmp_path / "sweep.json"), str(tmp_path / "default.json"), "--threshold", "0.9",
          "--plot", str(tmp_path / "plots" / "mine")])
    png = tmp_path / "plots" / "mine_anechoic.png"
    assert f"plot: {png}" in capsys.readouterr().out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and [p.name for p in png.parent.iterdir()] == [png.name]
    assert [p["setting"]["threshold"] for p in drawn[0]["anechoic"]["policy"]] == [0.5, 0.9, 0.99]
    with pytest.raises(SystemExit) as e:
        main(["targets", "--frontier", str(tmp_path / "missing.json"), "--threshold", "0.9",
              "--plot", str(tmp_path / "nowhere" / "mine")])
    assert e.value.code == 2
    assert re.search(r"--plot .*nowhere.*does not exist", capsys.readouterr().err)
