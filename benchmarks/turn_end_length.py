"""How much the turn-end model leans on how much was said, and what that does between splits.

    python benchmarks/turn_end_length.py --checkpoint single_user_enhanced \\
        --files runs/tx/val_anechoic.jsonl runs/tx/test_anechoic.jsonl \\
        [--train runs/tp/train_k.jsonl --val runs/en/val_s0.jsonl runs/en/val_s1.jsonl runs/en/val_s2.jsonl]

The model reads the transcript's length (``fdenv.train.turn_end.LENGTH_COLUMN``: log(1 + words)
of all the user has said since the assistant last spoke). Within a scene it is a real cue: the
words at a turn's end include those before its pauses. Across scenes it follows the scripts: a
split whose scenes hold more words reads as more finished everywhere, its pauses too. This prints:

1. the scripts, per scene set and split: scenes, turns and words per scene (mean and spread);
2. the checkpoint's weights on the words' columns, the length's named;
3. per ``--files`` file (``collect`` files): the median words of the transcript at the pauses
   inside a turn and at the turn-taking scenes' ends, and the share of those ends the checkpoint
   answers at its first look, at its own threshold;
4. with ``--train`` and ``--val``: the single-user recipe (words, silence, sound, confidence)
   fitted with the length column, without it, and with the length of the transcript's last
   sentence in its place (a length less tied to how many turns a script holds;
   ``fit_plus_columns``'s L2 pick on ``--val``), and each one's per-frame ROC AUC on the pause
   set's silences of ``--val`` and of every file.

Deterministic.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")
SPLITS = ("train", "val", "test")


def scripts() -> list[str]:
    """Part 1: per scene set and split, scenes, turns per scene and words per scene."""
    from fdenv.train.envs import load_scenes

    out = []
    for scene_set in SETS:
        for split in SPLITS:
            scenes = load_scenes([scene_set], split)
            turns = [len(sc.turns) for sc in scenes]
            words = [sum(len(p.text.split()) for t in sc.turns for p in t.pieces) for sc in scenes]
            out.append(f"{scene_set}, {split}: {len(scenes)} scenes, {np.mean(turns):.2f} turns and "
                       f"{np.mean(words):.1f} words per scene (sd {np.std(words):.1f})")
    return out


def weights(model) -> str:
    """Part 2: the words' columns by name."""
    from fdenv.train import turn_end as te

    names = [f"mark {m}" for m in te.PUNCT] + ["no mark", "closed-class last word", "empty", "length",
                                                "name heard", "ellipsis"]
    assert len(names) == te.N_TEXT and names[te.LENGTH_COLUMN] == "length"
    return ", ".join(f"{n} {w:+.2f}" for n, w in zip(names, model.weights[:te.N_TEXT]))


def lengths(model, rows: list[dict]) -> str:
    """Part 3 for one file's silences."""
    from fdenv.cli.turn_end import silence_probs
    from fdenv.train.turn_end import bare_words

    pauses = [r for r in rows if r["set"] == "pause" and r["labels"][0] == 0 and r.get("last_turn") == "pause"]
    ends = [r for r in rows if r["set"] == "turn_taking" and r["labels"][0] == 1]
    first = sum(p[0] >= model.threshold for p in silence_probs(model, ends))

    def median(rs):
        return f"{np.median([len(bare_words(r['text'])) for r in rs]):.1f}" if rs else "-"

    return (f"{len(pauses)} pauses at a median {median(pauses)} words, {len(ends)} turn ends at "
            f"{median(ends)}; turn ends answered at the first look {first}/{len(ends)}")


def last_sentence_words(text: str) -> int:
    """How many words the transcript's last sentence holds (after its last ``.``, ``?`` or ``!``
    that ends a sentence inside it)."""
    from fdenv.train.turn_end import bare_words

    sentences = [s for s in re.split(r"(?<=[.?!])\s+", text.strip()) if s]
    return len(bare_words(sentences[-1])) if sentences else 0


def pause_auc(model, rows: list[dict]) -> str:
    from fdenv.cli.turn_end import auc_cell, silence_probs

    pauses = [r for r in rows if r["set"] == "pause"]
    return auc_cell(pauses, silence_probs(model, pauses))


def main(argv=None) -> None:
    from fdenv.cli.turn_end import fit_plus_columns, lines_as_heard, of_sets, read_lines, recipe_columns
    from fdenv.train import turn_end as te

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", default="single_user_enhanced", help="a shipped turn-end checkpoint's name, or a file")
    ap.add_argument("--files", nargs="*", default=[], type=Path, help="collect files, each reported alone")
    ap.add_argument("--train", nargs="*", default=[], type=Path, help="with --val: refit the recipe without the length")
    ap.add_argument("--val", nargs="*", default=[], type=Path)
    args = ap.parse_args(argv)
    if bool(args.train) != bool(args.val):
        ap.error("--train and --val go together")
    model = te.load(te.checkpoint_path(args.checkpoint))

    for line in scripts():
        print(line)
    print(f"{args.checkpoint} (threshold {model.threshold:.2f}), the words' weights: {weights(model)}")
    files = {p.name: lines_as_heard(model, [p], list(SETS), "--files") for p in args.files}
    for name, rows in files.items():
        print(f"{name}: {lengths(model, rows)}", flush=True)
    if args.train:
        def lines(paths, option):  # every line with its sound and words, whatever the checkpoint reads
            return of_sets([r for p in paths for r in read_lines(p, sound=True, words=True)], list(SETS), option)

        def recipe(rows, last_sentence: bool):
            return [{**r, "sound": recipe_columns(r)
                     + ([np.log1p(last_sentence_words(r["text"]))] if last_sentence else [])} for r in rows]

        groups = {"validation": lines(args.val, "--val"), **{p.name: lines([p], "--files") for p in args.files}}
        train = lines(args.train, "--train")
        for name, without, last in (("the recipe", (), False), ("without the length", (te.LENGTH_COLUMN,), False),
                                    ("the last sentence's length instead", (te.LENGTH_COLUMN,), True)):
            heard = {n: recipe(rows, last) for n, rows in groups.items()}
            fitted = fit_plus_columns(recipe(train, last), heard["validation"], without)
            cells = [f"{n} {pause_auc(fitted, rows)}" for n, rows in heard.items()]
            print(f"{name}: pause ROC AUC per frame: {', '.join(cells)}", flush=True)


if __name__ == "__main__":
    main()
