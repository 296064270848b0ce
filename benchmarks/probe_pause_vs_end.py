"""Can a microphone-only policy tell a mid-turn pause from a turn's end, a few frames into the silence?

    python benchmarks/probe_pause_vs_end.py [--frames 12] [--rooms anechoic | randomized] [--after 3,4,5]
                                            [--tts espeak | kokoro]

A diagnostic for when-to-speak training (docs/training.md). It plays the train and validation
splits of the ``pause`` and ``turn_taking`` sets through ``fdenv/WhenToSpeak-v0`` with a silent
assistant (espeak voices, as in training, or Kokoro's with ``--tts kokoro``, which wants the two
sets' train and val clips rendered first: ``fdenv-scenes render <set> --split train --tts
kokoro``; natural humans, the features ``fdenv-train`` uses: log-mel against the
running noise floor plus the assistant's own playback) and keeps the observation 3, 4 and 5
frames (0.24-0.40 s; ``--after``) after a user's speech stops: a *pause* when the user's ``pause`` turn goes
on, an *end* when the turn is over. A small classifier (the last ``--frames`` feature frames, one
hidden layer of 64, trained on the train split) then scores the validation split. Its ROC AUC and
the share of pause frames it would speak in at a given share of ends answered estimate what a
policy deciding that early can reach with these features, whatever it is trained with: a pause
turn holds one or two pauses, so its pause take-over rate would be at least about that share.

``--rooms randomized``: every episode in a room drawn as in training (office, living room,
kitchen, car cabin; white, pink, babble or no noise at 5-40 dB SNR; the echo path off, as the
assistant is silent), instead of the anechoic simulation.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

AFTER = (3, 4, 5)  # default frames of silence after the user's speech at which the observation is kept
ROOMS = {"anechoic": None,
         "randomized": {"rooms": ["office", "living_room", "kitchen", "car_cabin"], "echo_gain": [0.0, 0.0],
                        "noise": ["none", "white", "pink", "babble"]}}


def collect(split: str, randomize, after=AFTER, tts: str = "espeak") -> tuple[np.ndarray, np.ndarray]:
    """(observations, 1 = the turn has ended / 0 = a pause) over the split's pause and turn-taking scenes."""
    from fdenv.train.envs import TurnTakingEnv

    env = TurnTakingEnv(scene_sets=["pause", "turn_taking"], split=split, teacher=False, randomize=randomize, tts=tts,
                        features={"history": 24, "normalise": "floor", "playback": True})
    xs, ys = [], []
    for i, sc in enumerate(env.room.scenes):
        env.reset(seed=i, options={"scene": sc.id})
        last, quiet, done = None, 0, False
        while not done:
            obs, _, term, trunc, info = env.step(0)
            done = term or trunc
            lab = info["labels"]
            if lab["speaking"]:
                quiet, last = 0, lab["turn"]
                continue
            quiet += 1
            if quiet not in after or last is None or last["id"] is None:
                continue
            cur = lab["turn"]
            if cur["id"] == last["id"] and cur["label"] == "pause":
                ys.append(0)
            elif cur["id"] is None and last["label"] in ("pause", "T"):
                ys.append(1)
            else:
                continue
            xs.append(obs.copy())
    env.close()
    return np.stack(xs), np.array(ys)


def roc_auc(score: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(score, kind="stable")
    rank = np.empty(len(score))
    rank[order] = np.arange(1, len(score) + 1)
    pos = y == 1
    return float((rank[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum()))


def probe(train, val, frames: int, seed: int = 0) -> np.ndarray:
    """Validation scores of a one-hidden-layer classifier trained on ``train``."""
    import torch

    (xt, yt), (xv, _) = train, val
    flat = lambda x: torch.tensor(x[:, -frames:, :].reshape(len(x), -1), dtype=torch.float32)  # noqa: E731
    xt, xv = flat(xt), flat(xv)
    mu, sd = xt.mean(0), xt.std(0) + 1e-3
    xt, xv = (xt - mu) / sd, (xv - mu) / sd
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(xt.shape[1], 64), torch.nn.ReLU(), torch.nn.Dropout(0.3),
                              torch.nn.Linear(64, 1))
    opt = torch.optim.Adam(net.parameters(), 1e-3, weight_decay=1e-2)
    target = torch.tensor(yt, dtype=torch.float32)
    for _ in range(300):  # full batch
        net.train()
        opt.zero_grad()
        torch.nn.functional.binary_cross_entropy_with_logits(net(xt)[:, 0], target).backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        return net(xv)[:, 0].numpy()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=12, help="feature frames the classifier sees (default 12: 0.96 s)")
    ap.add_argument("--rooms", default="anechoic", choices=sorted(ROOMS))
    ap.add_argument("--after", default="3,4,5", help="frames of silence (80 ms each) at which to ask (default 3,4,5)")
    ap.add_argument("--tts", default="espeak", choices=("espeak", "kokoro"))
    args = ap.parse_args(argv)
    if not 1 <= args.frames <= 24:
        ap.error(f"--frames must be in 1..24 (the observation's history), got {args.frames}")
    try:
        after = tuple(int(a) for a in args.after.split(","))
    except ValueError:
        ap.error(f"--after: comma-separated frame counts, got {args.after!r}")
    if min(after) < 1:
        ap.error(f"--after: frame counts start at 1, got {args.after!r}")
    train, val = (collect(split, ROOMS[args.rooms], after, args.tts) for split in ("train", "val"))
    score, y = probe(train, val, args.frames), val[1]
    asked = [round(a * 0.08, 2) for a in after]
    print(f"tts={args.tts}, rooms={args.rooms}, {args.frames} frames, asked {asked} s into the silence; "
          f"train {len(train[1])} observations "
          f"({int(train[1].sum())} ends), validation {len(y)} ({int(y.sum())} ends)")
    print(f"ROC AUC {roc_auc(score, y):.3f}")
    for tpr in (0.80, 0.90, 0.95):
        thr = np.quantile(score[y == 1], 1 - tpr)
        print(f"  answering {tpr:.0%} of ends speaks in {np.mean(score[y == 0] >= thr):.1%} of pause frames")


if __name__ == "__main__":
    main()
