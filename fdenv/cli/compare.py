"""``python -m fdenv.cli.compare``: a learned policy against a baseline agent on the scored test
split (``fdenv.train.compare``); ``python -m fdenv.cli.compare frontier``: both agents' operating
points (the policy's speak threshold, the cascade's endpointing) in three rooms
(``fdenv.train.frontier``); ``python -m fdenv.cli.compare targets``: which of the test targets a
frontier report shows met at the agent's default threshold (``fdenv.train.targets``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def report_path(parser: argparse.ArgumentParser, report: str | None) -> Path | None:
    """``--report``'s path with its folder made now, before the runs, so that a path that cannot be
    written fails at once rather than after hours of runs."""
    if report is None:
        return None
    path = Path(report)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        parser.error(f"--report {report!r}: cannot make its folder ({e}); give a writable path")
    if path.is_dir():
        parser.error(f"--report {report!r} is a folder; give a file name, e.g. {str(path / 'report.md')!r}")
    return path


def add_behaviour(parser: argparse.ArgumentParser) -> None:
    """``--behaviour``: the simulated humans' profile for every run of the command."""
    from ..sim.behaviour import DEFAULT_PROFILE, PROFILES

    parser.add_argument("--behaviour", default=DEFAULT_PROFILE, choices=list(PROFILES),
                        help="the humans' behaviour profile: natural (drawn timings, overlaps; the env's default) "
                             "or paper (SPEC 3's constants)")


def frontier_main(argv) -> None:
    from fdenv_agents import make_agent

    from ..train import frontier as fr

    p = argparse.ArgumentParser(prog="python -m fdenv.cli.compare frontier",
                                description="latency against pause TOR and MPE silence: policy thresholds vs "
                                            "cascade endpointing, per room condition")
    p.add_argument("--policy", default=None, help="the swept agent's checkpoint (default: its shipped one)")
    p.add_argument("--policy-agent", default="policy", choices=["policy", "turn_detector"],
                   help="the agent whose threshold is swept: the GRU policy from fdenv-train, or the cascade "
                        "with a learned end-of-turn model on words")
    p.add_argument("--conditions", nargs="+", default=list(fr.CONDITIONS), choices=list(fr.CONDITIONS))
    p.add_argument("--thresholds", nargs="+", type=float, default=list(fr.THRESHOLDS))
    p.add_argument("--endpoints-ms", nargs="*", type=int, default=list(fr.ENDPOINTS_MS),
                   help="the cascade's endpointing silences; none: the policy alone")
    p.add_argument("--sets", nargs="+", default=list(fr.SETS), choices=list(fr.SETS),
                   help="scene sets per point (MPE is the slow one: e.g. pause and turn_taking for the "
                        "frontier, mpe at the default threshold alone)")
    p.add_argument("--split", default="test")
    p.add_argument("--limit", type=int, default=None, help="scenes per set (default: all)")
    p.add_argument("--out", default="runs", help="run folders (reused when they exist)")
    p.add_argument("--tts", default="espeak", choices=["espeak", "kokoro"],
                   help="the voices of the humans and of both agents (kokoro: the benchmark's)")
    p.add_argument("--agent-tts", default=None, choices=["espeak", "kokoro"],
                   help="the agents' own voice, when not --tts's (espeak: fast answers with Kokoro's humans)")
    p.add_argument("--policy-kwargs", type=json.loads, default=None,
                   help='the swept agent\'s other settings, the same at every threshold, e.g. '
                        '\'{"group_checkpoint": "words"}\'')
    add_behaviour(p)
    p.add_argument("--episodes", type=int, default=1,
                   help="episodes per scene at every point (seeds 0, 1, ...: the humans' timings and the placement "
                        "drawn anew); the measures pool them, their intervals resample scenes")
    p.add_argument("--first-episode", type=int, default=0,
                   help="the first episode seed (default 0): a later one plays fresh draws of the same scenes")
    p.add_argument("--report", default=None, help="write the markdown here, the numbers next to it (.json), "
                                                  "and a plot per condition into its folder")
    p.add_argument("--play-all", action="store_true",
                   help="play every episode of every threshold; by default an episode that the agent vouches it plays "
                        "exactly as at another threshold already played is copied from that run folder")
    args = p.parse_args(argv)
    if args.episodes < 1:
        p.error(f"--episodes {args.episodes}: give at least 1 (episodes per scene)")
    if args.first_episode < 0:
        p.error(f"--first-episode {args.first_episode}: give 0 or more (the first episode seed)")
    report = report_path(p, args.report)
    res = fr.frontier(args.policy, make_agent, args.conditions, args.thresholds, args.endpoints_ms, sets=args.sets,
                      split=args.split, limit=args.limit, out=args.out, tts=args.tts, policy_agent=args.policy_agent,
                      agent_tts=args.agent_tts, behaviour=args.behaviour, policy_kwargs=args.policy_kwargs,
                      episodes=args.episodes, first_episode=args.first_episode, reuse_alike=not args.play_all,
                      log=lambda line: print(line, flush=True))  # a point's line as it ends, also into a file
    text = fr.markdown(res)
    print(text)
    if report:
        report.write_text(text + "\n")
        fr.save(res, report.with_suffix(".json"))
        for path in fr.plot(res, report.parent):
            print(f"plot: {path}")


def read_report(parser: argparse.ArgumentParser, flag: str, path: str) -> dict:
    """A frontier report's numbers (the .json that ``frontier --report`` writes), or a clear error."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        parser.error(f"{flag} {path!r}: cannot read it as a frontier report ({e}); give the .json that "
                     "`python -m fdenv.cli.compare frontier --report FILE.md` writes next to FILE.md")
    if not isinstance(data, dict) or not all(isinstance(c, dict) and "policy" in c for c in data.values()):
        parser.error(f"{flag} {path!r}: not a frontier report (each room condition needs its 'policy' points)")
    return data


def targets_main(argv) -> None:
    from ..train import frontier as fr
    from ..train import targets as tg

    p = argparse.ArgumentParser(prog="python -m fdenv.cli.compare targets",
                                description="which test targets a frontier report shows met at the agent's default "
                                            "threshold (met: the whole 95 %% interval; point: the estimate alone)")
    p.add_argument("--frontier", required=True, nargs="+",
                   help="the .json of a `frontier --report` run; several of the same agent are merged (say, a sweep "
                        "and a later point at a new default)")
    p.add_argument("--threshold", required=True, type=float, help="the agent's default threshold (one of its points)")
    p.add_argument("--mpe", nargs="+", default=[], help="reports measuring MPE silence (e.g. one per room), when the "
                                                        "frontier report has none")
    p.add_argument("--mpe-threshold", type=float, default=None, help="their point (default: --threshold)")
    p.add_argument("--label", default="", help="a name for the rows, e.g. the training seed")
    p.add_argument("--check", choices=["point", "interval"], default=None,
                   help="exit 1 unless every target is met (by its estimate, or by its whole interval)")
    p.add_argument("--plot", default=None, metavar="PREFIX",
                   help="also plot the merged frontier, one figure per condition: PREFIX_<condition>.png "
                        "(e.g. docs/turn_detector_mine)")
    args = p.parse_args(argv)
    plot_prefix = Path(args.plot) if args.plot else None
    if plot_prefix and not plot_prefix.parent.is_dir():
        p.error(f"--plot {args.plot!r}: the folder {str(plot_prefix.parent)!r} does not exist; create it or give "
                "another prefix")
    reports = [read_report(p, "--frontier", path) for path in args.frontier]
    try:
        report = reports[0] if len(reports) == 1 else fr.merge(reports)
    except ValueError as e:
        p.error(f"--frontier: {e}")
    mpe = {}
    for path in args.mpe:
        mpe.update(read_report(p, "--mpe", path))
    try:
        judged = tg.judge(report, args.threshold, mpe or None, args.mpe_threshold)
    except ValueError as e:
        p.error(str(e))
    print(tg.markdown(judged, args.label))
    if plot_prefix:
        for path in fr.plot(report, plot_prefix.parent, prefix=plot_prefix.name):
            print(f"plot: {path}")
    if args.check and not tg.all_met(judged, strict=args.check == "interval"):
        raise SystemExit(1)


def main(argv=None) -> None:
    import sys

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["frontier"]:
        return frontier_main(argv[1:])
    if argv[:1] == ["targets"]:
        return targets_main(argv[1:])
    from fdenv_agents import make_agent

    from ..train import frontier as fr
    from ..train.compare import __doc__ as doc, compare

    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--policy", default=None, help="the swept agent's checkpoint (default: its shipped one)")
    p.add_argument("--policy-agent", default="policy", choices=["policy", "turn_detector"],
                   help="the agent whose threshold is swept: the GRU policy from fdenv-train, or the cascade "
                        "with a learned end-of-turn model on words")
    p.add_argument("--baseline", default="cascade")
    p.add_argument("--sets", nargs="+", default=["pause", "turn_taking", "mpe"])
    p.add_argument("--split", default="test")
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--out", default="runs")
    p.add_argument("--report", default=None, help="write the markdown table (and a .json next to it) here")
    p.add_argument("--policy-kwargs", type=json.loads, default=None, help='the policy agent\'s settings, e.g. \'{"threshold": 0.4}\'')
    p.add_argument("--baseline-kwargs", type=json.loads, default=None,
                   help='the baseline\'s settings, e.g. \'{"endpoint_silence_ms": 1500}\' or, with --baseline policy, '
                        '\'{"checkpoint": "bc.pt", "threshold": 0.4}\'')
    p.add_argument("--condition", default=None, choices=list(fr.CONDITIONS),
                   help="a room condition of the frontier (default: no room)")
    p.add_argument("--paper-only", action="store_true", help="score the paper profile alone (what the frontier "
                   "runs score: their run folders are reused)")
    add_behaviour(p)
    args = p.parse_args(argv)
    report = report_path(p, args.report)
    res = compare(args.policy, args.baseline, args.baseline_kwargs, sets=args.sets, split=args.split, seeds=args.seeds,
                  out=args.out, make_agent=make_agent, policy_kwargs=args.policy_kwargs,
                  room=fr.CONDITIONS[args.condition] if args.condition else None,
                  scoring={"profiles": ["paper"]} if args.paper_only else None,
                  policy_agent=args.policy_agent, behaviour=args.behaviour)
    print(res["markdown"])
    if report:
        report.write_text(res["markdown"] + "\n")
        report.with_suffix(".json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
