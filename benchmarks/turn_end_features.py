"""Which word features help the turn-end model on sentences it has not seen?

    python benchmarks/turn_end_features.py --train runs/turn_end/train.jsonl --val runs/turn_end/val.jsonl

The files are ``python -m fdenv.cli.turn_end collect``'s (docs/training_log.md, "A learned turn
detector"). The model is fitted on the train split's silences, one example per frame, with the
shipped features (``fdenv.train.turn_end.features``: final punctuation, a trailing ellipsis, a closed-class last word,
empty, length, the assistant's name, the silence so far), and again with the words themselves
added: the last word and the last two words, hashed (``probe_pause_vs_end.lexical_features``),
and a hashed bag of the transcript's words. It prints the per-frame ROC AUC on the validation
split, overall and per scene set, for each L2 penalty of ``fdenv.cli.turn_end.L2S``. The splits'
sentences are disjoint, so the words help only where they carry over to new sentences.
"""

from __future__ import annotations

import argparse
import importlib.util
import zlib
from pathlib import Path

import numpy as np

BAG_BINS = 256


def _probe():
    spec = importlib.util.spec_from_file_location("probe", Path(__file__).with_name("probe_pause_vs_end.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bag(text: str) -> np.ndarray:
    from fdenv.train.turn_end import bare_words

    v = np.zeros(BAG_BINS, np.float32)
    for w in set(bare_words(text)):
        v[zlib.crc32(w.encode()) % BAG_BINS] = 1.0
    return v


def design(rows, words: bool, lexical) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from fdenv.cli.turn_end import examples
    from fdenv.train.turn_end import features

    texts, named, silence, labels, *_ = examples(rows)
    cache: dict = {}
    extra = (lambda t: np.concatenate([lexical(t), bag(t)])) if words else (lambda t: np.zeros(0, np.float32))
    x = np.stack([np.concatenate([features(t, n, s), cache.setdefault(t, extra(t))])
                  for t, n, s in zip(texts, named, silence)]).astype(np.float64)
    sets = np.array([r["set"] for r in rows for _ in r["labels"]])
    return x, np.array(labels, np.float64), sets


def main(argv=None) -> None:
    from fdenv.cli.turn_end import L2S, read_lines, roc_auc
    from fdenv.train.turn_end import fit_logistic

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=Path, required=True)
    ap.add_argument("--val", type=Path, required=True)
    args = ap.parse_args(argv)
    lexical = _probe().lexical_features
    train, val = read_lines(args.train), read_lines(args.val)
    print(f"{len(train)} train silences, {len(val)} validation silences")
    for words in (False, True):
        (xt, yt, _), (xv, yv, sv) = design(train, words, lexical), design(val, words, lexical)
        name = "shipped features + the words (hashed)" if words else "shipped features"
        for l2 in L2S:
            wb = fit_logistic(xt, yt, l2)
            p = xv @ wb[:-1] + wb[-1]
            per_set = ", ".join(f"{s} {roc_auc(p[sv == s], yv[sv == s]):.3f}" for s in ("pause", "turn_taking", "mpe"))
            print(f"{name}, l2 {l2}: ROC AUC {roc_auc(p, yv):.3f} ({per_set})", flush=True)


if __name__ == "__main__":
    main()
