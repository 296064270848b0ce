"""What a turn-end checkpoint would do in each validation room across thresholds: the share of
pause episodes it takes (a pause answered early, as the pause TOR counts them) and the share of
turn ends it answers at the first look (the rest wait for its endpoint, so when fewer than half
are answered at once the median latency falls among the endpoint's answers). Read from
``collect`` files alone (validation), so that a default can be judged against both targets
before it meets the test split.

    python benchmarks/turn_end_rooms.py --checkpoint CKPT --val d0.jsonl,d1.jsonl,d2.jsonl car.jsonl \\
        [--thresholds 0.7 0.75 0.8 0.85 0.9]

Each ``--val`` item is a room of its own (``calibrate`` without ``--pooled``); files joined by
commas are draws of the same rooms, read together (each draw's pause scene counted as an episode
of its own). The last line per item is the lowest threshold at which at most ``--max-pause`` of
its pause episodes are taken, and its first-look share there.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from fdenv.cli.turn_end import lines_as_heard, pause_scenes_taken, rates, silence_probs
from fdenv.train.turn_end import checkpoint_path, load


def room_curve(model, rows: list[dict], thresholds) -> list[tuple[float, float, int, float, int]]:
    """Per threshold: (threshold, share of pause episodes taken, pause episodes, share of turn ends
    answered at the first look, turn ends), from the room's pause and turn-taking silences (a
    pause scene is an episode once per file it is in)."""
    pauses = [r for r in rows if r["set"] == "pause"]
    turns = [r for r in rows if r["set"] == "turn_taking"]
    pause_probs, turn_probs = silence_probs(model, pauses), silence_probs(model, turns)
    out = []
    for t in thresholds:
        taken, n = pause_scenes_taken(pauses, pause_probs, t)
        at_once = rates(model, turns, t, turn_probs)
        out.append((t, len(taken) / n if n else 0.0, n, at_once["early_on_positives"], at_once["positives"]))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--val", nargs="+", required=True,
                   help="collect files, one per room; draws of the same rooms joined by commas")
    p.add_argument("--thresholds", type=float, nargs="+", default=[round(x, 2) for x in np.arange(0.70, 0.96, 0.01)])
    p.add_argument("--max-pause", type=float, default=0.05,
                   help="the share of pause episodes taken that the last line of each room looks for (default 0.05)")
    args = p.parse_args(argv)
    model = load(checkpoint_path(args.checkpoint))
    print(f"{args.checkpoint}: its own threshold {model.threshold:.2f}, answering within "
          f"{model.answer_within_s} s of a silence")
    for item in args.val:
        paths = [Path(name) for name in item.split(",")]
        rows = lines_as_heard(model, paths, ["pause", "turn_taking"], "--val")
        curve = room_curve(model, rows, args.thresholds)
        print("\n" + " + ".join(path.name for path in paths))
        print("threshold  pause episodes taken  turn ends answered at once")
        for t, taken, n, at_once, m in curve:
            print(f"{t:9.2f}  {taken:13.3f} of {n:3d}  {at_once:18.3f} of {m:3d}")
        ok = next(((t, a) for t, taken, _, a, _ in curve if taken <= args.max_pause), None)
        print(f"lowest threshold taking at most {args.max_pause} of the pause episodes: "
              + (f"{ok[0]:.2f}, answering {ok[1]:.3f} of the turn ends at once" if ok else "none in the sweep"))


if __name__ == "__main__":
    main()
