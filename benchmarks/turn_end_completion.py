"""Does a language model's sense of a finished sentence help the turn-end model?

    python benchmarks/turn_end_completion.py --train runs/tp/train_k.jsonl --val runs/en/val_s0.jsonl \\
        runs/en/val_s1.jsonl runs/en/val_s2.jsonl --heldout runs/en/val_car_cabin.jsonl

The files are ``python -m fdenv.cli.turn_end collect --words``'s. Two models of the same logistic
form, each fitted on ``--train`` (its L2 penalty picked by log-loss on ``--val``): ``words + sound
+ confidence``, the shipped ``single_user`` recipe, and the same plus two columns of
``fdenv.train.completion.end_probability`` (Whisper's decoder as a language model: the probability
that the transcript's words end a sentence where they stop; the probability and its clipped logit,
as for any probability of a turn's end, ``turn_end.smart_turn_features``). Each model's threshold
is picked on ``--val`` as ``calibrate --pooled`` picks one: the lowest at which at most
``--max-early`` of each scene set's not-to-answer silences are answered early, the files
together. Then, on ``--val`` and on each ``--heldout`` file alone: the pause set's per-frame ROC
AUC; at the threshold, per set, the share of not-to-answer silences answered early / of the
assistant's answered early, at a median silence; and what the benchmark counts, the share of pause
scenes in which a not-to-answer silence is answered early (a scene of each file apart). The
language model reads each distinct transcript once (about 40 ms here). ``--checkpoint``: a
shipped model too, as it is, at its own threshold, naming the pause scenes it takes.
``--scripts``: per split, the share of the scripts' own words before a pause to which the
language model gives an end probability above 0.05 (how often a split's pauses stop where a
sentence could end). ``--pitch-from SOURCE`` (``microphone`` or ``denoised``): a third model, the
recipe plus the pitch of the turn's end (``turn_end.pitch_features``) heard from that signal, each
line's ``pitch`` or ``pitch_denoised``. Deterministic.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODELS = ("words + sound + confidence", "+ language model")  # and, with --pitch-from, "+ pitch (SOURCE)"


def columns(row: dict, completion: float | None, pitch: str | None = None) -> list[float]:
    """The row's columns after the words' and silence's: the sound of the turn's end, the
    recogniser's confidence, (``completion`` given) the language model's two, and (``pitch``: the
    line's field, ``"pitch"`` or ``"pitch_denoised"``) the pitch's four."""
    from fdenv.cli.turn_end import recipe_columns
    from fdenv.train import turn_end as te

    cols = recipe_columns(row) + (list(te.smart_turn_features(completion)) if completion is not None else [])
    return cols + (list(te.pitch_features(row[pitch])) if pitch else [])


def report(name: str, model, rows: list[dict], threshold: float, which: bool = False) -> str:
    from fdenv.cli.turn_end import auc_cell, pause_scenes_taken, rule_cell, silence_probs

    pauses = [r for r in rows if r.get("set") == "pause"]
    probs = silence_probs(model, pauses)  # each silence's frames, read once for the AUC and the scenes
    auc = auc_cell(pauses, probs)
    taken, scenes = pause_scenes_taken(pauses, probs, threshold)
    return (f"| {name} | {auc} | {rule_cell(model, rows, threshold)} | "
            f"{len(taken)}/{scenes} = {len(taken) / scenes if scenes else 0:.3f}"
            + (f": {', '.join(taken)}" if which and taken else "") + " |")


def scripted_prefixes(threshold: float = 0.05) -> str:
    """Per split, the share of the pause scenes' scripted words before a pause (each pause's
    prefix of its turn) that the language model gives an end probability above ``threshold``:
    how often a split's pauses stop where the words could end a sentence."""
    from fdenv.train.completion import end_probability
    from fdenv.train.envs import load_scenes

    parts = []
    for split in ("train", "val", "test"):
        ps = [end_probability(" ".join(p.text for p in turn.pieces[:i + 1]))
              for sc in load_scenes(["pause"], split) for turn in sc.turns if turn.label == "pause"
              for i, p in enumerate(turn.pieces) if p.silence_after_s > 0]
        parts.append(f"{split} {np.mean(np.array(ps) > threshold):.0%} of {len(ps)}")
    return f"scripted words before a pause with an end probability above {threshold}: " + ", ".join(parts)


def main(argv=None) -> None:
    from fdenv.cli.turn_end import SETS, as_heard, by_set, fit_plus_columns, of_sets, pick_threshold, read_lines
    from fdenv.train.completion import end_probability
    from fdenv.train.turn_end import SOUND_SOURCES

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", required=True, type=Path)
    ap.add_argument("--val", nargs="+", required=True, type=Path, help="the L2 penalty and the threshold are picked here")
    ap.add_argument("--heldout", nargs="*", default=[], type=Path, help="files reported each alone, never fitted on")
    ap.add_argument("--sets", nargs="+", default=["pause", "turn_taking"], choices=list(SETS))
    ap.add_argument("--max-early", type=float, default=0.02)
    ap.add_argument("--checkpoint", default=None,
                    help="also a shipped checkpoint (or file) at its own threshold, as it is, on the same files, "
                         "naming the pause scenes it takes")
    ap.add_argument("--scripts", action="store_true",
                    help="also, per split, how often the scripts' words before a pause could end a sentence")
    ap.add_argument("--pitch-from", default=None, choices=list(SOUND_SOURCES),
                    help="also the recipe plus the pitch of the turn's end, heard from this signal")
    args = ap.parse_args(argv)
    pitch_field = {"microphone": "pitch", "denoised": "pitch_denoised", None: None}[args.pitch_from]

    def rows_of(paths, option):
        return of_sets([{**r, "file": str(p)} for p in paths
                        for r in read_lines(p, sound=True, words=True, pitch=args.pitch_from is not None,
                                            pitch_from=args.pitch_from or "microphone")], args.sets, option)

    train, val = rows_of(args.train, "--train"), rows_of(args.val, "--val")
    heldout = {p.name: rows_of([p], "--heldout") for p in args.heldout}
    scores: dict[str, float] = {}  # each distinct transcript read once

    def completion(text: str) -> float:
        if text not in scores:
            scores[text] = end_probability(text)
        return scores[text]

    def with_columns(rows, lm: bool, pitch: str | None = None):
        return [{**r, "sound": columns(r, completion(r["text"]) if lm else None, pitch)} for r in rows]

    print(f"{len(train)} train silences, {len(val)} validation silences")
    if args.scripts:
        print(scripted_prefixes())
    print("| model, files | pause ROC AUC (per frame) | at the threshold, per set: not-to-answer answered early / "
          "the assistant's answered early, at a median silence | pause scenes taken |\n|---|---|---|---|")
    models = [(MODELS[0], False, None), (MODELS[1], True, None)]
    if args.pitch_from:
        models.append((f"+ pitch ({args.pitch_from})", False, pitch_field))
    for name, lm, pitch in models:
        v = with_columns(val, lm, pitch)
        model = fit_plus_columns(with_columns(train, lm, pitch), v)
        threshold = pick_threshold(model, v, args.max_early, group=by_set)
        n = 2 if lm else 4 if pitch else 0
        weights = f", weights {' '.join(f'{w:+.2f}' for w in model.column_weights[-n:])}" if n else ""
        print(f"| **{name}** (threshold {threshold:.2f}{weights}) | | | |")
        print(report("validation", model, v, threshold), flush=True)
        for file, rows in heldout.items():
            print(report(file, model, with_columns(rows, lm, pitch), threshold), flush=True)
    if args.checkpoint:
        from fdenv.train.turn_end import checkpoint_path, load

        model = load(checkpoint_path(args.checkpoint))
        print(f"| **{args.checkpoint}** (its threshold {model.threshold:.2f}) | | | |")
        for file, rows in {"validation": val, **heldout}.items():
            print(report(file, model, [as_heard(r, model.sound_from, model.pitch_from) for r in rows], model.threshold,
                         which=True))


if __name__ == "__main__":
    main()
