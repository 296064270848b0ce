"""Does the recogniser's confidence in the words it ends on help the turn-end model?

    python benchmarks/turn_end_confidence.py --train runs/tw/train_k.jsonl --val runs/tw/val_k.jsonl \\
        [--sets pause turn_taking]

The files are ``python -m fdenv.cli.turn_end collect --words``'s: each judged silence keeps the
recogniser's words with their probabilities (and, as every collect, the sound of the turn's end). Whisper closes a phrase cut by a pause as if it were
a sentence ("Remind me too.", "... pasta too?"), and a closing question mark is the model's
strongest cue of a finished turn; a word the recogniser made up to close a phrase tends to be one
it is less sure of than the last word of a finished question. The columns tried
(``fdenv.train.turn_end.confidence_features``): the last word's probability, the same when the transcript ends in a
sentence mark (? . !) and 0 otherwise, and the lowest probability of the last three words.

The models, each fitted on the train files and scored on the validation files: ``shipped`` (the
default shipped checkpoint), ``words`` (its features fitted on these files, ``fit_main``),
``words + confidence`` (the same plus the columns, ``fit_main(confidence=True)``, as
``fit --confidence``), ``words + sound`` (``fit --sound``: the sound of the turn's end pooled into
more columns) and ``words + sound + confidence`` (both, as the shipped ``single_user`` model). For each: the per-frame
ROC AUC in each scene set, and the agent's rule on the validation silences at the threshold
``fit`` would pick (the lowest at which each set's not-to-answer silences are answered early at
most 5 % of the time): per set, that share and the share of the assistant's silences answered
early, with their median silence. Deterministic.
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")



def words_before_pauses(rows: list[dict]) -> str:
    """How the recogniser ends the words before a pause, against the scripts' own words: the share
    of the scripts' pieces before a pause (in the pause scenes of ``rows``) that end on a
    closed-class word (``FUNCTION_WORDS``), and of the transcripts at the pause silences of
    ``rows`` (the pause turn's own silences the assistant must wait through) that do, end in "?",
    or end in a sentence mark."""
    from fdenv.train.envs import load_scenes
    from fdenv.train.turn_end import FUNCTION_WORDS, SENTENCE_MARKS, bare_words

    ids = {r["scene_id"] for r in rows if r.get("set") == "pause"}
    script = []
    for split in ("train", "val", "test"):
        for sc in load_scenes(["pause"], split):
            if sc.id in ids:
                for turn in (t for t in sc.turns if t.label == "pause"):
                    pieces = turn.pieces
                    script += [" ".join(p.text for p in pieces[:i + 1]) for i, p in enumerate(pieces) if p.silence_after_s > 0]
    heard = [r["text"] for r in rows if r.get("set") == "pause" and r.get("last_turn") == "pause" and 0 in r["labels"]]
    if not script or not heard:
        return "no pause silences"
    closed = lambda texts: np.mean([bool(bare_words(t)) and bare_words(t)[-1] in FUNCTION_WORDS for t in texts])  # noqa: E731
    return (f"the scripts' words before the {len(script)} pauses of these pause scenes end on a closed-class word "
            f"{closed(script):.0%} of the time; the transcripts at the {len(heard)} pause silences "
            f"{closed(heard):.0%}, in \"?\" {np.mean([t.rstrip().endswith('?') for t in heard]):.0%}, in a sentence "
            f"mark {np.mean([t.rstrip().endswith(SENTENCE_MARKS) for t in heard]):.0%}")


def main(argv=None) -> None:
    from fdenv.cli.turn_end import RULE_HEADER, benchmark_files, fitted_rule_rows, last_weights, rule_row
    from fdenv.train import turn_end as te

    args, train, val = benchmark_files(__doc__.split("\n\n")[0], argv, sound=True, words=True)
    matched = np.mean(["".join(w for w, _ in r["words"]).startswith("".join(r["text"].split())) for r in train + val])
    print(f"{len(train)} train silences, {len(val)} validation silences; the words spell the transcript in "
          f"{matched:.1%} of them")
    print(f"validation: {words_before_pauses(val)}; train: {words_before_pauses(train)}")
    print(RULE_HEADER)
    print(rule_row("shipped", te.load(te.default_checkpoint()), val), flush=True)
    models = [(name, dict(sound=sound, confidence=confidence)) for name, sound, confidence in (
        ("words", False, False), ("words + confidence", False, True), ("words + sound", True, False),
        ("words + sound + confidence", True, True))]
    for row in fitted_rule_rows(args, val, models,
                                lambda m: last_weights(m, te.N_CONFIDENCE) if m.uses_confidence else ""):
        print(row, flush=True)


if __name__ == "__main__":
    main()
