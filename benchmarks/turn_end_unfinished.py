"""Would a hard rule on unfinished words help a turn-end model: never answer early after a
transcript that stops on a closed-class word ("What's a good exercise for?"), trails off
("... a table for...") or ends in a cut word ("... ideas for g-")?

    python benchmarks/turn_end_unfinished.py --checkpoint single_user_enhanced \\
        --val runs/en/val_s0.jsonl runs/en/val_s1.jsonl runs/en/val_s2.jsonl [--heldout FILE ...] \\
        [--pick-on FILE ...]

The model already reads those cues (``fdenv.train.turn_end.features``: the closed-class last word,
the ellipsis, the hyphen among the final marks), but as terms of a sum: a long enough silence or a
confident recogniser outweighs them, and the model answers a phrase cut by a pause. The rule makes
them a veto (``TurnEndModel.hold_unfinished``, ``calibrate --hold-unfinished``): such a silence is
left to the agent's endpoint. Each file group (``--val`` pooled,
each ``--heldout`` file alone) is played at the checkpoint's own threshold without and with the
rule: the pause scenes with a not-to-answer silence answered early, the assistant's turn ends
answered early and after what median silence, and how many of those turn ends the rule would
hold. With ``--pick-on``, each rule is played at its own threshold instead, picked on those files
as ``python -m fdenv.cli.turn_end calibrate --pooled`` picks (``--max-early``, per set): the rule
frees the budget its held pauses took, so a fair comparison lets it spend it. Files are
``python -m fdenv.cli.turn_end collect``'s (``--words`` where the model reads the
recogniser's confidence). Deterministic.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")


def held(model, hold: bool):
    """``model`` with the rule (``TurnEndModel.hold_unfinished``) on or off, its weights shared."""
    import copy

    model = copy.copy(model)
    model.hold_unfinished = hold
    return model


def played(model, rows: list[dict], threshold: float, veto: bool) -> str:
    """The table cells of ``rows`` played at ``threshold``, with or without the rule."""
    from fdenv.cli.turn_end import FRAME_S, pause_scenes_taken, play, silence_probs
    from fdenv.train.turn_end import unfinished

    model = held(model, veto)
    probs = silence_probs(model, rows)
    pauses = [(r, p) for r, p in zip(rows, probs) if r["set"] == "pause"]
    taken, scenes = pause_scenes_taken([r for r, _ in pauses], [p for _, p in pauses], threshold)
    ends = [(r, p) for r, p in zip(rows, probs) if r["set"] == "turn_taking" and r["labels"][0] == 1]
    answered = play(model, [r for r, _ in ends], threshold, [p for _, p in ends])
    at = [float(r["silence_s"]) + first * FRAME_S for (r, _), (first, _) in zip(ends, answered) if first is not None]
    holds = sum(unfinished(r["text"]) for r, _ in ends)
    median = f"{np.median(at):.2f} s" if at else "-"
    return (f"{len(taken)}/{scenes}" + (f" ({', '.join(taken)})" if taken else "") +
            f" | {len(at)}/{len(ends)} at {median} | {holds if veto else '-'}")


def main(argv=None) -> None:
    from fdenv.cli.turn_end import by_set, lines_as_heard, pick_threshold
    from fdenv.train.turn_end import checkpoint_path, load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="a shipped turn-end checkpoint's name, or a file")
    ap.add_argument("--val", nargs="+", required=True, type=Path, help="reported pooled")
    ap.add_argument("--heldout", nargs="*", default=[], type=Path, help="each reported alone")
    ap.add_argument("--pick-on", nargs="*", default=[], type=Path,
                    help="each rule at its own threshold, picked on these files together (default: the checkpoint's)")
    ap.add_argument("--max-early", type=float, default=0.02, help="the pick's budget, as calibrate's")
    args = ap.parse_args(argv)
    model = load(checkpoint_path(args.checkpoint))

    def rows_of(paths):
        return lines_as_heard(model, paths, list(SETS), "--val/--heldout/--pick-on")

    if args.pick_on:
        picked = rows_of(args.pick_on)
        thresholds = {veto: pick_threshold(held(model, veto), picked, args.max_early, group=by_set)
                      for veto in (False, True)}
        print(f"{args.checkpoint}, each rule at the threshold picked on {', '.join(p.name for p in args.pick_on)}: "
              f"{thresholds[False]:.2f} as it is, {thresholds[True]:.2f} with unfinished words held")
    else:
        thresholds = {False: model.threshold, True: model.threshold}
        print(f"{args.checkpoint} at its threshold {model.threshold:.2f}")
    print("| files | rule | pause scenes taken | the assistant's turn ends answered early, at a median silence "
          "| of those turn ends, held by the rule |\n|---|---|---|---|---|")
    groups = {"validation": rows_of(args.val), **{p.name: rows_of([p]) for p in args.heldout}}
    for name, rows in groups.items():
        for veto in (False, True):
            print(f"| {name} | {'unfinished words held' if veto else 'as it is'} | "
                  f"{played(model, rows, thresholds[veto], veto)} |", flush=True)


if __name__ == "__main__":
    main()
