"""Does the pitch of a turn's end help the turn-end model, beside the words, the silence, the
sound and the recogniser's confidence?

    python benchmarks/turn_end_pitch.py --train runs/tp/train_k.jsonl --val runs/tp/val_k_s0.jsonl \\
        [--sets pause turn_taking] [--max-early 0.02] [--pitch-from denoised]

The files are ``python -m fdenv.cli.turn_end collect --words``'s, which keep each judged
silence's ``fdenv.train.turn_end.pitch_descriptor`` (the F0 of the turn's last 1.2 s up to the
decision, in semitones against the turn's median). A phrase cut by a pause holds its pitch; a
statement's end falls and a yes/no question's rises (``pitch_features``: voiced or not, the end's
level, its size, its slope). First, how the classes differ: per kind of silence, the share whose
end is voiced and the median level and slope. Then four models, each fitted on the train files
and scored on the validation files: ``shipped single_user`` as it is; ``words + sound +
confidence`` (its recipe, fitted on these files); the same ``+ pitch``; and ``words + pitch``. For
each: the per-frame ROC AUC in each scene set, and the agent's rule on the validation silences at
the threshold ``fit`` would pick with ``--max-early`` (the single-user model's 2 %): per set, the
share of not-to-answer silences answered early and of the assistant's answered early, at a median
silence. ``--pitch-from denoised``: the contour of the same audio noise-suppressed, as the
voice-activity detector hears it (each line's ``pitch_denoised``), in which the tracker finds more
of a voice in road noise. Deterministic.
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODELS = (("words + sound + confidence", dict(sound=True, confidence=True)),
          ("words + sound + confidence + pitch", dict(sound=True, confidence=True, pitch=True)),
          ("words + pitch", dict(pitch=True)))


def contrast(rows: list[dict]) -> list[str]:
    """Per kind of silence (a pause inside the turn, another silence not to answer, the
    assistant's), how many, the share whose end is voiced, and the median level and slope of
    those (semitones; per 100 ms)."""
    from fdenv.train.turn_end import pitch_features

    kinds = {"pause inside a turn": lambda r: r["labels"][0] == 0 and r.get("last_turn") == "pause",
             "other, not to answer": lambda r: r["labels"][0] == 0 and r.get("last_turn") != "pause",
             "the assistant's": lambda r: r["labels"][0] == 1}
    out = []
    for name, of_kind in kinds.items():
        f = np.array([pitch_features(r["pitch"]) for r in rows if of_kind(r)]).reshape(-1, 4)
        voiced = f[f[:, 0] == 1]
        if len(voiced):
            out.append(f"{name}: {len(f)} silences, {len(voiced) / len(f):.0%} voiced at the end; level "
                       f"{np.median(voiced[:, 1]) * 6:+.1f} st, slope {np.median(voiced[:, 3]) * 3:+.2f} st per 100 ms")
        else:
            out.append(f"{name}: {len(f)} silences, none voiced at the end")
    return out


def main(argv=None) -> None:
    from fdenv.cli.turn_end import RULE_HEADER, benchmark_files, fitted_rule_rows, last_weights, rule_row
    from fdenv.train import turn_end as te

    args, train, val = benchmark_files(__doc__.split("\n\n")[0], argv, sound=True, words=True, pitch=True,
                                       max_early=0.02)
    print(f"{len(train)} train silences, {len(val)} validation silences")
    for line in contrast(train):
        print(f"train, {line}")
    print(RULE_HEADER)
    print(rule_row("shipped single_user", te.load(te.checkpoint_path("single_user")), val, args.max_early), flush=True)
    models = [(name, {**columns, "pitch_from": args.pitch_from} if columns.get("pitch") else columns)
              for name, columns in MODELS]
    for row in fitted_rule_rows(args, val, models,
                                lambda m: last_weights(m, te.N_PITCH, "pitch weights") if m.uses_pitch else ""):
        print(row, flush=True)


if __name__ == "__main__":
    main()
