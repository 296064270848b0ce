"""``python -m fdenv.cli.compare``: a learned policy against a baseline agent on the scored test
split (``fdenv.train.compare``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv=None) -> None:
    from fdenv_agents import make_agent

    from ..train.compare import __doc__ as doc, compare

    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--policy", required=True, help="a checkpoint from fdenv-train")
    p.add_argument("--baseline", default="cascade")
    p.add_argument("--sets", nargs="+", default=["pause", "turn_taking", "mpe"])
    p.add_argument("--split", default="test")
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--out", default="runs")
    p.add_argument("--report", default=None, help="write the markdown table (and a .json next to it) here")
    args = p.parse_args(argv)
    res = compare(args.policy, args.baseline, sets=args.sets, split=args.split, seeds=args.seeds, out=args.out,
                  make_agent=make_agent)
    print(res["markdown"])
    if args.report:
        Path(args.report).write_text(res["markdown"] + "\n")
        Path(args.report).with_suffix(".json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
