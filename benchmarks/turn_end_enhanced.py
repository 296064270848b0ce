"""Does the turn-end model hear the turn's end better when the recogniser hears enhanced turns?

    python benchmarks/turn_end_enhanced.py --checkpoint single_user --threshold 0.93 \\
        --plain runs/nr/val_car_cabin_fix.jsonl --enhanced runs/en/val_car_cabin.jsonl [--sets pause turn_taking]

The two files are ``python -m fdenv.cli.turn_end collect --words``'s of the same scenes in the same
rooms, the second with ``--enhance-db`` (the recogniser hears each turn noise-suppressed by
DeepFilterNet3). One model, fitted on plain transcripts, reads both: per scene set, its per-frame
ROC AUC, and at ``--threshold`` the share of not-to-answer silences answered early and of the
assistant's answered early, at a median silence (``fit``'s rule, as the agent plays it). Several
``--plain`` / ``--enhanced`` pairs are read in order. Deterministic.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> None:
    from fdenv.cli.turn_end import SETS, of_sets, read_lines, rule_cell
    from fdenv.cli.turn_end import by_set, examples, roc_auc
    from fdenv.train.turn_end import checkpoint_path, load

    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="a shipped name or a checkpoint file")
    ap.add_argument("--threshold", type=float, default=None, help="default: the checkpoint's own")
    ap.add_argument("--plain", nargs="+", required=True, type=Path)
    ap.add_argument("--enhanced", nargs="+", required=True, type=Path)
    ap.add_argument("--sets", nargs="+", default=None, choices=list(SETS))
    args = ap.parse_args(argv)
    if len(args.plain) != len(args.enhanced):
        ap.error(f"--plain and --enhanced: {len(args.plain)} and {len(args.enhanced)} files; give them in pairs")
    model = load(checkpoint_path(args.checkpoint))
    threshold = model.threshold if args.threshold is None else args.threshold
    print(f"{args.checkpoint} at {threshold:.2f}")
    print("| file | heard | per-frame ROC AUC | per set: not-to-answer silences answered early / the assistant's "
          "answered early, at a median silence |\n|---|---|---|---|")
    for plain, enhanced in zip(args.plain, args.enhanced):
        for heard, path in (("as it is", plain), ("enhanced", enhanced)):
            rows = of_sets(read_lines(path, model.uses_sound, model.uses_confidence), args.sets, "--plain/--enhanced")
            aucs = []
            for name, group in by_set(rows).items():
                t, n, s, y, d, w, p, st = examples(group)
                probs = np.array([model.prob(*q) for q in zip(t, n, s, d, w, p, st)])
                aucs.append(f"{name} {roc_auc(probs, np.array(y)):.3f}")
            print(f"| {path.name} | {heard} | {', '.join(aucs)} | {rule_cell(model, rows, threshold)} |", flush=True)


if __name__ == "__main__":
    main()
