"""Does the sound of a turn's end help the turn-end model, beside the words and the silence?

    python benchmarks/turn_end_sound.py --train runs/te/train.jsonl runs/te/train_k.jsonl \\
        --val runs/te/val.jsonl runs/te/val_k.jsonl [--sets pause turn_taking]

The files are ``python -m fdenv.cli.turn_end collect``'s, which keep each judged silence's
``fdenv.train.turn_end.sound_descriptor`` (the log-mel of the turn's last second up to the
decision, against the turn's own speech level). Four models, each fitted on the train files and
scored on the validation files:

- ``shipped``: the shipped checkpoint (words and silence), as it is;
- ``words``: the same features fitted on these files (``fit_main``: L2 penalty by validation
  log-loss);
- ``words + sound, linear``: the descriptor pooled into ``N_SOUND`` columns of the same logistic
  model (``fit_main --sound``);
- ``words + sound, stacked``: a small network (one hidden layer of 32, dropout, weight decay) on
  the whole descriptor, trained to tell the assistant's silences from the others (each silence's
  first label), its score one more column of the logistic model. Its score for each train silence
  comes from a network that did not see that silence's scene (five folds by scene), so the
  logistic model weighs it as it will be on new scenes.

For each: the per-frame ROC AUC in each scene set, and the agent's rule on the validation
silences at the threshold ``fit`` would pick (the lowest at which each set's not-to-answer
silences are answered early at most 5 % of the time): per set, that share and the share of the
assistant's silences answered early, with their median silence. Deterministic (seeded).
"""

from __future__ import annotations

import os
import tempfile
import zlib
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

FOLDS = 5
HIDDEN = 32
STEPS = 300


def _network_scores(x_train: np.ndarray, y_train: np.ndarray, x_score: np.ndarray, seed: int = 0) -> np.ndarray:
    """Logits of a one-hidden-layer network trained on ``x_train``, for ``x_score``."""
    import torch

    mu, sd = x_train.mean(0), x_train.std(0) + 1e-3
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(x_train.shape[1], HIDDEN), torch.nn.ReLU(), torch.nn.Dropout(0.3),
                              torch.nn.Linear(HIDDEN, 1))
    opt = torch.optim.Adam(net.parameters(), 1e-3, weight_decay=1e-2)
    xt, yt = torch.tensor((x_train - mu) / sd), torch.tensor(y_train)
    for _ in range(STEPS):  # full batch: a few thousand silences
        opt.zero_grad()
        torch.nn.functional.binary_cross_entropy_with_logits(net(xt)[:, 0], yt).backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        return net(torch.tensor((x_score - mu) / sd))[:, 0].numpy()


def stacked_scores(train: list[dict], val: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """The network's score of each train silence (out of fold, by scene) and of each validation one."""
    x = lambda rows: np.array([r["sound"] for r in rows], np.float32).reshape(len(rows), -1)  # noqa: E731
    xt, xv = x(train), x(val)
    yt = np.array([r["labels"][0] for r in train], np.float32)
    fold = np.array([zlib.crc32(r["scene_id"].encode()) % FOLDS for r in train])
    oof = np.zeros(len(train), np.float32)
    for k in range(FOLDS):
        oof[fold == k] = _network_scores(xt[fold != k], yt[fold != k], xt[fold == k])
    return oof, _network_scores(xt, yt, xv)


def main(argv=None) -> None:
    from fdenv.cli.turn_end import RULE_HEADER, benchmark_files, fit_main, fit_plus_columns, rule_row
    from fdenv.train import turn_end as te

    args, train, val = benchmark_files(__doc__.split("\n\n")[0], argv, sound=True)
    print(f"{len(train)} train silences, {len(val)} validation silences")
    print(RULE_HEADER)
    print(rule_row("shipped", te.load(te.default_checkpoint()), val), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, sound in (("words", False), ("words + sound, linear", True)):
            fit_main(args.train, args.val, Path(tmp) / "m.json", sound=sound, log=lambda line: None, sets=args.sets)
            print(rule_row(name, te.load(Path(tmp) / "m.json"), val), flush=True)
    # the stacked model: the network's score as the one sound column of a logistic model
    oof, scored = stacked_scores(train, val)
    val_scored = [{**r, "sound": float(z)} for r, z in zip(val, scored)]
    model = fit_plus_columns([{**r, "sound": float(z)} for r, z in zip(train, oof)], val_scored)
    print(rule_row(f"words + sound, stacked (score weight {model.column_weights[0]:+.2f})", model, val_scored))


if __name__ == "__main__":
    main()
