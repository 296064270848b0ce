"""Does Smart Turn v3, an audio turn-end model trained on real people's speech, help the turn-end
model, beside the words, the silence, the sound and the recogniser's confidence?

    python benchmarks/turn_end_smart_turn.py --train runs/st/train_s0.jsonl --val runs/st/val_s0.jsonl \\
        [--sets pause turn_taking] [--max-early 0.02]

The files are ``python -m fdenv.cli.turn_end collect --words --smart-turn``'s, which keep each
judged silence's Smart Turn probability that the turn is complete (``fdenv.train.smart_turn``: the
turn's last 8 s up to the first look, 0.25 s into the silence). First, how it tells the kinds of
silence apart on its own: per kind, how many and the median probability, and its ROC AUC between
pauses inside a turn and the assistant's silences. Then three models, each fitted on the train
files and scored on the validation files: ``words + sound + confidence`` (the single-user recipe,
fitted on these files); the same ``+ smart turn``; and ``words + smart turn``. For each: the
per-frame ROC AUC in each scene set, and the agent's rule on the validation silences at the
threshold ``fit`` would pick with ``--max-early`` (the single-user model's 2 %): per set, the share
of not-to-answer silences answered early and of the assistant's answered early, at a median
silence. Deterministic.
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODELS = (("words + sound + confidence", dict(sound=True, confidence=True)),
          ("words + sound + confidence + smart turn", dict(sound=True, confidence=True, smart_turn=True)),
          ("words + smart turn", dict(smart_turn=True)))
KINDS = {"pause inside a turn": lambda r: r["labels"][0] == 0 and r.get("last_turn") == "pause",
         "other, not to answer": lambda r: r["labels"][0] == 0 and r.get("last_turn") != "pause",
         "the assistant's": lambda r: r["labels"][0] == 1}


def contrast(rows: list[dict]) -> list[str]:
    """Per kind of silence, how many and Smart Turn's median probability; then its ROC AUC
    between the assistant's silences and the pauses inside a turn."""
    from fdenv.cli.turn_end import roc_auc

    p = {name: np.array([r["smart_turn"] for r in rows if of_kind(r)]) for name, of_kind in KINDS.items()}
    out = [f"{name}: {len(v)} silences, median P(complete) {np.median(v):.3f}" for name, v in p.items() if len(v)]
    pause, ours = p["pause inside a turn"], p["the assistant's"]
    if len(pause) and len(ours):
        out.append(f"Smart Turn alone, the assistant's against pauses: ROC AUC "
                   f"{roc_auc(np.concatenate([ours, pause]), np.r_[np.ones(len(ours)), np.zeros(len(pause))]):.3f}")
    return out


def main(argv=None) -> None:
    from fdenv.cli.turn_end import RULE_HEADER, benchmark_files, fitted_rule_rows, last_weights
    from fdenv.train import turn_end as te

    args, train, val = benchmark_files(__doc__.split("\n\n")[0], argv, sound=True, words=True, smart_turn=True,
                                       max_early=0.02)
    print(f"{len(train)} train silences, {len(val)} validation silences")
    for split, rows in (("train", train), ("validation", val)):
        for line in contrast(rows):
            print(f"{split}, {line}")
    print(RULE_HEADER)
    for row in fitted_rule_rows(args, val, MODELS,
                                lambda m: last_weights(m, te.N_SMART_TURN) if m.uses_smart_turn else ""):
        print(row, flush=True)


if __name__ == "__main__":
    main()
