"""How much of a silence should a turn-end model answer in: its first look alone, or later too?

    python benchmarks/turn_end_window.py --checkpoint single_user_enhanced \\
        --val runs/fl/valbig_s0.jsonl runs/fl/val_s1.jsonl runs/fl/val_s2.jsonl [--windows 0.3 0.45 0.6 none] \\
        [--pick-on FILE ...] [--max-early 0.02]

A checkpoint with a window (``TurnEndModel.answer_within_s``, ``calibrate --answer-within-s``)
answers only within that many seconds of each silence and leaves the rest to the agent's endpoint.
A wider window lets the silence's steps raise P, and the pauses they take push the threshold up
for every first look. Each window is played at the threshold ``calibrate --pooled`` would pick for
it on ``--pick-on`` (default: the ``--val`` files; ``--max-early`` per set), and reported on the
``--val`` files pooled: that threshold, the pause scenes taken, and of the turn-taking scenes'
turn ends (the assistant's silences), the share answered within 0.3, 0.5 and 0.6 s of silence
(a median latency target is met by those) and before the endpoint at all. Files are
``python -m fdenv.cli.turn_end collect``'s (``--words`` where the model reads the recogniser's
confidence). Deterministic.
"""

from __future__ import annotations

import argparse
import copy
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")
WITHIN_S = (0.3, 0.5, 0.6)  # the silences by which an answer is counted


def windowed(model, window: float | None):
    """``model`` answering within ``window`` seconds of a silence (None: at any time), its weights shared."""
    model = copy.copy(model)
    model.answer_within_s = window
    return model


def row(model, rows: list[dict], threshold: float) -> str:
    """The table cells of ``rows`` played at ``threshold``."""
    from fdenv.cli.turn_end import FRAME_S, pause_scenes_taken, play, silence_probs

    probs = silence_probs(model, rows)
    pauses = [(r, p) for r, p in zip(rows, probs) if r["set"] == "pause"]
    taken, scenes = pause_scenes_taken([r for r, _ in pauses], [p for _, p in pauses], threshold)
    ends = [(r, p) for r, p in zip(rows, probs) if r["set"] == "turn_taking" and r["labels"][0] == 1]
    answered = play(model, [r for r, _ in ends], threshold, [p for _, p in ends])
    at = np.array([float(r["silence_s"]) + first * FRAME_S if first is not None else np.inf
                   for (r, _), (first, _) in zip(ends, answered)])
    share = (lambda answered: f"{np.mean(answered):.2f}") if len(at) else (lambda answered: "-")
    return (f"{threshold:.2f} | {len(taken)}/{scenes} | {' / '.join(share(at <= s + 1e-9) for s in WITHIN_S)} | "
            f"{share(np.isfinite(at))} ({len(at)})")


def _window(text: str) -> float | None:
    from fdenv.cli.turn_end import seconds_or_none
    from fdenv.train.turn_end import check_answer_within

    seconds = seconds_or_none(text)
    if seconds == "none":
        return None
    try:
        return check_answer_within(seconds, "--windows")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def main(argv=None) -> None:
    from fdenv.cli.turn_end import by_set, lines_as_heard, pick_threshold
    from fdenv.train.turn_end import checkpoint_path, load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="a shipped turn-end checkpoint's name, or a file")
    ap.add_argument("--val", nargs="+", required=True, type=Path, help="reported pooled")
    ap.add_argument("--windows", nargs="+", type=_window, default=[0.3, 0.45, 0.6, None],
                    help="seconds of silence, or none (default: 0.3 0.45 0.6 none)")
    ap.add_argument("--pick-on", nargs="*", default=None, type=Path,
                    help="pick each window's threshold on these files together (default: the --val files)")
    ap.add_argument("--max-early", type=float, default=0.02, help="the pick's budget, as calibrate's")
    args = ap.parse_args(argv)
    model = load(checkpoint_path(args.checkpoint))
    val = lines_as_heard(model, args.val, list(SETS), "--val")
    picked = lines_as_heard(model, args.pick_on, list(SETS), "--pick-on") if args.pick_on else val
    print(f"{args.checkpoint}, each window at the threshold picked on "
          f"{', '.join(p.name for p in (args.pick_on or args.val))} (at most {args.max_early} early, per set)")
    print("| window | threshold | pause scenes taken | turn ends answered within "
          f"{' / '.join(f'{s:g}' for s in WITHIN_S)} s | before the endpoint (turn ends) |\n|---|---|---|---|---|")
    for window in args.windows:
        m = windowed(model, window)
        threshold = pick_threshold(m, picked, args.max_early, group=by_set)
        print(f"| {'none' if window is None else f'{window:g} s'} | {row(m, val, threshold)} |", flush=True)


if __name__ == "__main__":
    main()
