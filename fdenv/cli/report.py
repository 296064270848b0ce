"""``fdenv-report RUN...``: runs side by side with 95% intervals, and pictures.

    fdenv-report runs/*/ --bars bars.png
    fdenv-report runs/3f2a9c1d0b7e --timeline turn_taking-0005 --png ep.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    from ..plots import episode_png, metric_bars
    from ..record import EpisodeRecord
    from ..report import format_runs, run_summary
    from ..run import read_episodes

    ap = argparse.ArgumentParser(prog="fdenv-report", description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (each with config.json and episodes.jsonl)")
    ap.add_argument("--bars", type=Path, help="write per-metric bar charts with intervals to this PNG")
    ap.add_argument("--timeline", help="a scene id: draw its episode (first run folder) ...")
    ap.add_argument("--png", type=Path, default=Path("timeline.png"), help="... into this PNG")
    ap.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10,000)")
    ap.add_argument("--mpe", action="store_true", help="also the multi-party table per run: explicit and "
                    "implicit side by side, their paired difference and McNemar p")
    args = ap.parse_args(argv)
    bad = [str(r) for r in args.runs if not (r / "config.json").is_file()]
    if bad:
        print(f"fdenv-report: not run folders (no config.json): {', '.join(bad)}", file=sys.stderr)
        return 2
    summaries = [run_summary(r, n_resamples=args.resamples) for r in args.runs]
    print(format_runs(summaries))
    if args.mpe:
        from ..score.mpe import format_mpe

        for s in summaries:
            if s.get("mpe"):
                print(f"\n{s['agent']} ({s['folder']})\n{format_mpe(s['mpe'])}")
    if args.bars:
        print(f"wrote {metric_bars(summaries, args.bars)}")
    if args.timeline:
        lines = [ln for ln in read_episodes(args.runs[0]) if ln["scene_id"] == args.timeline]
        if not lines:
            print(f"fdenv-report: no episode of scene {args.timeline!r} in {args.runs[0]}", file=sys.stderr)
            return 2
        print(f"wrote {episode_png(EpisodeRecord.load(args.runs[0] / lines[0]['record']), args.png)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
