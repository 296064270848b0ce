"""Turn-end checkpoints side by side on the same `collect` files, each at its own threshold:

    python benchmarks/turn_end_checkpoints.py --checkpoints single_user_enhanced runs/big/pool_s0_097.json \\
        --files runs/big/val_new_s0.jsonl runs/tx/val_anechoic.jsonl runs/tx/val_office_noise_echo.jsonl \\
        runs/pd/val_car_cabin.jsonl

Per checkpoint (a shipped name or a file) and file: the per-frame ROC AUC of each scene set's
silences, the pause scenes in which a not-to-answer silence is answered early, and per set the
share of not-to-answer silences answered early / of the assistant's answered early, at a median
silence (as ``fit`` and ``calibrate`` report them). Each checkpoint hears the lines as its agent
would (its sound and contour sources). Files are ``python -m fdenv.cli.turn_end collect``'s
(``--words`` for a model that reads the recogniser's confidence). Deterministic.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")


def row(name: str, model, file: str, rows: list[dict]) -> str:
    """One table row: ``model`` on ``rows`` (one file's silences) at its threshold."""
    from fdenv.cli.turn_end import auc_cell, by_set, pause_scenes_taken, rule_cell, silence_probs

    probs = dict(zip(map(id, rows), silence_probs(model, rows)))  # each silence scored once
    aucs = [f"{s} {auc_cell(group, [probs[id(r)] for r in group])}" for s, group in by_set(rows).items()]
    pauses = [r for r in rows if r["set"] == "pause"]
    taken, scenes = pause_scenes_taken(pauses, [probs[id(r)] for r in pauses], model.threshold)
    return (f"| {name} ({model.threshold:.2f}) | {file} | {', '.join(aucs)} | {len(taken)}/{scenes} | "
            f"{rule_cell(model, rows, model.threshold)} |")


def main(argv=None) -> None:
    from fdenv.cli.turn_end import lines_as_heard
    from fdenv.train.turn_end import checkpoint_path, load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoints", nargs="+", required=True, help="shipped turn-end checkpoints' names, or files")
    ap.add_argument("--files", nargs="+", required=True, type=Path, help="`collect` files, each reported alone")
    args = ap.parse_args(argv)
    for path in args.files:
        if not path.is_file():
            ap.error(f"--files {str(path)!r}: no such file; make it with `python -m fdenv.cli.turn_end collect`")
    print("| checkpoint (threshold) | file | ROC AUC per frame | pause scenes taken | per set: not-to-answer "
          "answered early / the assistant's answered early, at a median silence |\n|---|---|---|---|---|")
    for name in args.checkpoints:
        model = load(checkpoint_path(name))
        for path in args.files:
            print(row(name, model, path.name, lines_as_heard(model, [path], list(SETS), "--files")), flush=True)


if __name__ == "__main__":
    main()
