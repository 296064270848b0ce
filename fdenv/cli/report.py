"""``fdenv-report RUN...``: runs side by side with 95% intervals, each labelled by what differs
between them; pictures, JSON/CSV rows and an episode browser.

    fdenv-report runs/3f2a9c1d0b7e runs/9b1e07c2d4aa --bars bars.png
    fdenv-report outputs/multirun/2026-12-01/14-03-11 --csv results.csv --html site/
    fdenv-report runs/3f2a9c1d0b7e --timeline turn_taking-0005 --png ep.png
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    from .. import report
    from ..plots import episode_png, episode_title, metric_bars
    from ..record import EpisodeRecord
    from ..runs import read_episodes

    ap = argparse.ArgumentParser(prog="fdenv-report", description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (each with config.json and episodes.jsonl), "
                    "folders of them (runs/), or fdenv-run output and multirun folders")
    ap.add_argument("--bars", type=Path, help="write per-metric bar charts with intervals to this PNG")
    ap.add_argument("--timeline", help="a scene id: draw its episode (first run folder) ...")
    ap.add_argument("--png", type=Path, default=Path("timeline.png"), help="... into this PNG")
    ap.add_argument("--json", type=Path, help="write one row per (run, dimension, metric) with its interval to this JSON file")
    ap.add_argument("--csv", type=Path, help="the same rows as CSV")
    ap.add_argument("--html", type=Path, metavar="OUT", help="write the episode browser (a static site) into this folder")
    ap.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10,000)")
    ap.add_argument("--mpe", action="store_true", help="also the multi-party table per run: explicit and "
                    "implicit side by side, their paired difference and McNemar p")
    args = ap.parse_args(argv)
    try:
        folders = report.find_run_folders(args.runs)
    except ValueError as e:
        print(f"fdenv-report: {e}", file=sys.stderr)
        return 2
    summaries = [report.run_summary(r, n_resamples=args.resamples) for r in folders]
    print(report.format_runs(summaries))
    if args.mpe:
        from ..score.mpe_table import format_mpe

        for s in summaries:
            if s.get("mpe"):
                print(f"\n{s['label']} ({s['folder']})\n{format_mpe(s['mpe'])}")
    if args.bars:
        print(f"wrote {metric_bars(summaries, args.bars)}")
    if args.json:
        print(f"wrote {report.write_json(summaries, args.json)}")
    if args.csv:
        print(f"wrote {report.write_csv(summaries, args.csv)}")
    if args.html:
        from ..browser import write_site

        print(f"wrote {write_site(summaries, args.html)}")
    if args.timeline:
        lines = [ln for ln in read_episodes(folders[0]) if ln["scene_id"] == args.timeline]
        if not lines:
            print(f"fdenv-report: no episode of scene {args.timeline!r} in {folders[0]}", file=sys.stderr)
            return 2
        record = EpisodeRecord.load(folders[0] / lines[0]["record"])
        print(f"wrote {episode_png(record, args.png, episode_title(record, lines[0], summaries[0]['label']))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
