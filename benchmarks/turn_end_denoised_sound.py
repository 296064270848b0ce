"""Does the sound of the turn's end, heard noise-suppressed, help the single-user model in noise?

    python benchmarks/turn_end_denoised_sound.py --train runs/dn/train_s0.jsonl --val runs/dn/val_s0.jsonl \\
        runs/dn/val_s1.jsonl runs/dn/val_s2.jsonl [--rooms runs/dn/val_car_cabin.jsonl ...] \\
        [--sets pause turn_taking] [--max-early 0.02]

The files are ``python -m fdenv.cli.turn_end collect --words``'s, which keep each judged
silence's sound descriptor twice: from the echo-cancelled microphone (``sound``, what the shipped
models hear) and from the same noise-suppressed (``sound_denoised``, what the voice-activity
detector hears). In road noise the silence after the words is barely below them on the
microphone, so there the descriptor cannot tell a fading end from a held phrase. First, per kind
of room, how far the silence lies below the speech in each. Then the single-user recipe (words,
silence, sound, the recogniser's confidence) fitted on the train files with each descriptor: its
per-frame ROC AUC and the agent's rule at the threshold ``fit`` picks on the validation files with
``--max-early``; and at that threshold, per ``--rooms`` file (say ``collect --condition``'s, one
per room of the comparison), per set the share of not-to-answer silences answered early and of the
assistant's answered early, at a median silence. Deterministic.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODELS = (("words + sound + confidence, microphone", dict(sound=True, confidence=True)),
          ("words + sound + confidence, noise-suppressed", dict(sound=True, confidence=True, sound_from="denoised")))


def room_kind(row: dict) -> str:
    """The kind of room a line's scene was played in: its comparison room, or the drawn one's."""
    room = row.get("room")
    if room is None:
        return "anechoic, quiet"
    if isinstance(room, str):
        return room.replace("_", " ")
    if room.get("preset") == "car_cabin":
        return "car cabin"
    quiet = room.get("noise") == "none" or room.get("snr_db", 0.0) > 30
    return f"{'anechoic' if room.get('preset') == 'anechoic' else 'reverberant'}, {'quiet' if quiet else 'noisy'}"


def silence_below_speech(rows: list[dict]) -> list[str]:
    """Per kind of room: how many silences, and the median level of a descriptor's silence below
    its speech before it (natural-log power, over the bands) on the microphone and noise-suppressed."""
    def gap(d, silence_s: float) -> float:
        d, k = np.asarray(d, np.float64), max(1, int(silence_s * 1000 // 32))
        return float(d[: -k - 2].mean() - d[-k:].mean())

    kinds: dict = {}
    for r in rows:
        kinds.setdefault(room_kind(r), []).append((gap(r["sound"], r["silence_s"]),
                                                   gap(r["sound_denoised"], r["silence_s"])))
    return [f"{kind}: {len(v)} silences, the silence {np.median([a for a, _ in v]):.1f} below the speech on the "
            f"microphone, {np.median([b for _, b in v]):.1f} noise-suppressed" for kind, v in sorted(kinds.items())]


def main(argv=None) -> None:
    from fdenv.cli.turn_end import (RULE_HEADER, SETS, as_heard, fitted_rule_rows, of_sets, pick_threshold, read_lines,
                                    rule_cell)

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", required=True, type=Path)
    ap.add_argument("--val", nargs="+", required=True, type=Path)
    ap.add_argument("--rooms", nargs="*", default=[], type=Path, help="validation files, each read on its own")
    ap.add_argument("--sets", nargs="+", default=None, choices=list(SETS))
    ap.add_argument("--max-early", type=float, default=0.02)
    args = ap.parse_args(argv)

    def lines(paths, option):
        return of_sets([r for p in paths for r in read_lines(p, True, True, sound_from="denoised")], args.sets, option)

    train, val = lines(args.train, "--train"), lines(args.val, "--val")
    print(f"{len(train)} train silences, {len(val)} validation silences")
    for line in silence_below_speech(train):
        print(f"train, {line}")
    print(RULE_HEADER)
    at = []  # (name, model, its threshold on the validation files)
    for (name, _), (row, model) in zip(MODELS, fitted_rule_rows(args, val, MODELS, with_model=True)):
        print(row, flush=True)
        at.append((name, model, pick_threshold(model, [as_heard(r, model.sound_from) for r in val], args.max_early)))
    for path in args.rooms:
        rows = lines([path], "--rooms")
        for name, model, threshold in at:
            print(f"{path.name}, {name} at {threshold:.2f}: "
                  f"{rule_cell(model, [as_heard(r, model.sound_from) for r in rows], threshold)}", flush=True)

if __name__ == "__main__":
    main()
