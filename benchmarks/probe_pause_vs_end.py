"""Can a microphone-only policy tell a mid-turn pause from a turn's end, a few frames into the silence?

    python benchmarks/probe_pause_vs_end.py [--frames 12] [--rooms anechoic | randomized] [--after 3,4,5]
                                            [--tts espeak | kokoro] [--lexical] [--scenes] [--seeds 3]

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

``--lexical``: the same question with words. At the first ``--after`` frame of each silence the
last ``LEXICAL_S`` seconds of microphone 0 are transcribed (Whisper tiny.en, greedy, no
voice-activity filter: a streaming recogniser's partial transcript as the assistant could have
it then; microphone 0 as the observations gave it), and two more classifiers are trained on the
train split: one on the transcript's ending alone (``lexical_features``: its last two words,
hashed, whether the last is a function word, and its final punctuation; logistic regression), one
on the acoustic frames and those features together. The three are printed side by side.

``--scenes``: the question as the benchmark asks it, per scene rather than per frame. Every
frame of every silence after a user's turn in the two sets, from the first ``--after`` frame to
``MAX_QUIET`` frames in, is kept: in a pause (the turn goes on), after a turn that is the
assistant's to answer (a ``pause`` or ``final`` turn's end) or between two turns of the same
speaker (a ``ctx`` turn's end: not the assistant's to take). A classifier trained on the train
split's frames (``--seeds`` seeds) then plays the validation split's silences with the rule "speak
at the first frame whose score reaches the threshold", for thresholds ``SCENE_THRESHOLDS``: per
threshold, the share of pause scenes with a pause taken (pause TOR, as FDB counts it), the share
of turn-taking scenes answered within ``MAX_QUIET`` frames (turn-taking TOR), their median
latency (frames of silence heard x 80 ms) and the share of same-speaker gaps taken; and the median
latency at pause TOR 0.10 along the thresholds (``fdenv.train.frontier.latency_at_tor``, 95 %
interval over scenes). With ``--lexical`` the transcript is made at the first ``--after`` frame of
each silence and joins every later frame of it.

``--rooms randomized``: every episode in a room drawn as in training (office, living room,
kitchen, car cabin; white, pink, babble or no noise at 5-40 dB SNR; the echo path off, as the
assistant is silent), instead of the anechoic simulation.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from fdenv.sim.env import FRAME_S  # noqa: E402  (the env's frame: 80 ms)
# the punctuation classes and closed-class words of the turn detector's features
from fdenv.train.turn_end import FUNCTION_WORDS, PUNCT  # noqa: E402

LEXICAL_S = 5.0  # seconds of microphone 0 transcribed for --lexical
HASH_BINS = 256  # buckets of each hashed word feature
AFTER = (3, 4, 5)  # default frames of silence after the user's speech at which the observation is kept
MAX_QUIET = 30  # --scenes: frames of silence (2.4 s) within which a turn counts as answered
SCENE_THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)
PAUSE, END, GAP = 0, 1, 2  # --scenes: a silence in a pause, after a turn to answer, between one speaker's turns
ROOMS = {"anechoic": None,
         "randomized": {"rooms": ["office", "living_room", "kitchen", "car_cabin"], "echo_gain": [0.0, 0.0],
                        "noise": ["none", "white", "pink", "babble"]}}


def silent_frames(split: str, randomize, tts: str, transcribe_at: int | None):
    """Every frame of silence after a user's turn in the split's pause and turn-taking scenes, played
    with a silent assistant: ``(scene id, silence index, frames of silence heard, the turn before it,
    the turn now, observation, transcript)``; the transcript (``--lexical``) is made at frame
    ``transcribe_at`` of each silence (None before it, or without ``transcribe_at``)."""
    from fdenv.train.envs import TurnTakingEnv

    env = TurnTakingEnv(scene_sets=["pause", "turn_taking"], split=split, teacher=False, randomize=randomize, tts=tts,
                        features={"history": 24, "normalise": "floor", "playback": True})
    n_silences = 0
    for i, sc in enumerate(env.room.scenes):
        env.reset(seed=i, options={"scene": sc.id})
        last, quiet, done, text = None, 0, False, None
        while not done:
            obs, _, term, trunc, info = env.step(0)
            done = term or trunc
            lab = info["labels"]
            if lab["speaking"]:
                n_silences += quiet > 0
                quiet, last, text = 0, lab["turn"], None
                continue
            quiet += 1
            if quiet == transcribe_at:
                text = partial_transcript(env.room.episode)
            if last is not None and last["id"] is not None:
                yield sc.id, n_silences, quiet, last, lab["turn"], obs, text
        n_silences += 1
    env.close()


def collect(split: str, randomize, after=AFTER, tts: str = "espeak", lexical: bool = False):
    """(observations, 1 = the turn has ended / 0 = a pause, transcripts) over the split's pause and
    turn-taking scenes; the transcripts (``lexical``: see the module docstring) are None otherwise."""
    xs, ys, texts = [], [], []
    for _, _, quiet, last, cur, obs, text in silent_frames(split, randomize, tts, min(after) if lexical else None):
        if quiet not in after:
            continue
        if cur["id"] == last["id"] and cur["label"] == "pause":
            ys.append(0)
        elif cur["id"] is None and last["label"] in ("pause", "T"):
            ys.append(1)
        else:
            continue
        xs.append(obs.copy())
        texts.append(text)
    return np.stack(xs), np.array(ys), texts if lexical else None


def collect_silences(split: str, randomize, frames: int, first: int, tts: str = "espeak", lexical: bool = False) -> dict:
    """``--scenes``' data: every frame ``first``..``MAX_QUIET`` of every silence after a user's
    turn in the split's pause and turn-taking scenes. Arrays ``x`` (the last ``frames`` feature
    frames), ``kind`` (``PAUSE`` / ``END`` / ``GAP``), ``quiet`` (frames of silence heard),
    ``silence`` (an index per silence), ``scene`` (scene id per frame) and ``texts`` (``lexical``:
    the transcript made at frame ``first`` of its silence; else None)."""
    out = {"x": [], "kind": [], "quiet": [], "silence": [], "scene": [], "texts": []}
    for sid, silence, quiet, last, cur, obs, text in silent_frames(split, randomize, tts, first if lexical else None):
        if not first <= quiet <= MAX_QUIET:
            continue
        if cur["id"] == last["id"] and cur["label"] == "pause":
            kind = PAUSE
        elif cur["id"] is None and last["label"] in ("pause", "final"):
            kind = END
        elif cur["id"] is None and last["label"] == "ctx":
            kind = GAP
        else:
            continue
        for key, value in (("x", obs[-frames:].copy()), ("kind", kind), ("quiet", quiet), ("silence", silence),
                           ("scene", sid), ("texts", text)):
            out[key].append(value)
    return {k: (v if k == "texts" else np.array(v)) for k, v in out.items()}


def play_scenes(score: np.ndarray, data: dict, threshold: float) -> dict:
    """What the rule "speak at the first frame of a silence whose score reaches ``threshold``"
    does in each scene: ``{"pause": {scene: 1 if a pause was taken}, "tt": {scene: 1 if its turn
    was answered}, "latency": {scene: s}, "gap": share of same-speaker gaps taken}``."""
    res = {"pause": {}, "tt": {}, "latency": {}}
    gaps = []
    for sil in np.unique(data["silence"]):
        m = data["silence"] == sil
        sid, kind = data["scene"][m][0], data["kind"][m][0]
        hit = np.flatnonzero(score[m] >= threshold)
        if kind == GAP:
            gaps.append(len(hit) > 0)
        elif kind == PAUSE:
            res["pause"][sid] = max(res["pause"].get(sid, 0), int(len(hit) > 0))
        elif not sid.startswith("pause"):  # a turn-taking scene's final turn
            res["tt"][sid] = int(len(hit) > 0)
            if len(hit):
                res["latency"][sid] = float(data["quiet"][m][hit[0]] * FRAME_S)
    res["gap"] = float(np.mean(gaps)) if gaps else float("nan")
    return res


def partial_transcript(episode) -> str:
    """What Whisper tiny.en makes of the last ``LEXICAL_S`` seconds at microphone 0, up to now."""
    from fdenv.score.asr import transcribe

    end = (episode.k + 1) * episode.frame_samples
    x = episode.mic[0, max(0, end - int(LEXICAL_S * episode.sample_rate)) : end]
    return " ".join(w.text for w in transcribe(x, model="tiny.en", snap=False, decode={"vad_filter": False}))


def lexical_features(text: str) -> np.ndarray:
    """The ending of a transcript as a vector: its last word, the two last words together (each
    hashed into ``HASH_BINS`` buckets, lower case, no punctuation), its final punctuation mark
    (``PUNCT`` or none), whether its last word is a function word (``FUNCTION_WORDS``) and
    whether it is empty."""
    import zlib

    words = text.split()
    bare = [w.strip(".,?!-\"'").lower() for w in words]
    v = np.zeros(2 * HASH_BINS + len(PUNCT) + 3, np.float32)
    if not words:
        v[-1] = 1.0
        return v
    v[-2] = float(bare[-1] in FUNCTION_WORDS)
    v[zlib.crc32(bare[-1].encode()) % HASH_BINS] = 1.0
    v[HASH_BINS + zlib.crc32(" ".join(bare[-2:]).encode()) % HASH_BINS] = 1.0
    mark = words[-1][-1]
    v[2 * HASH_BINS + (PUNCT.index(mark) if mark in PUNCT else len(PUNCT))] = 1.0
    return v


def roc_auc(score: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(score, kind="stable")
    rank = np.empty(len(score))
    rank[order] = np.arange(1, len(score) + 1)
    pos = y == 1
    return float((rank[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum()))


def last_frames(x: np.ndarray, frames: int) -> np.ndarray:
    """Observations ``(n, history, features)`` as vectors of their last ``frames`` frames."""
    return x[:, -frames:, :].reshape(len(x), -1)


def probe(train, val, frames: int, seed: int = 0, hidden: int = 64) -> np.ndarray:
    """Validation scores of a one-hidden-layer classifier trained on ``train`` (``(x, y)``; ``x``:
    observations ``(n, history, features)`` of which the last ``frames`` are used, or ready
    vectors ``(n, d)``); ``hidden=0``: logistic regression."""
    import torch

    (xt, yt), (xv, _) = train, val
    flat = lambda x: torch.tensor(last_frames(x, frames) if x.ndim == 3 else x, dtype=torch.float32)  # noqa: E731
    xt, xv = flat(xt), flat(xv)
    mu, sd = xt.mean(0), xt.std(0) + 1e-3
    xt, xv = (xt - mu) / sd, (xv - mu) / sd
    torch.manual_seed(seed)
    net = (torch.nn.Sequential(torch.nn.Linear(xt.shape[1], hidden), torch.nn.ReLU(), torch.nn.Dropout(0.3),
                               torch.nn.Linear(hidden, 1)) if hidden else torch.nn.Linear(xt.shape[1], 1))
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


def scene_report(train: dict, val: dict, frames: int, seeds: int, lexical: bool) -> None:
    """``--scenes``: per seed and input, the scene-level measures at each threshold and the median
    latency at pause TOR 0.10."""
    from fdenv.train.frontier import TARGET_TOR, latency_at_tor

    yt, yv = ((d["kind"] == END).astype(int) for d in (train, val))
    inputs = {"sound": (train["x"], val["x"])}
    if lexical:
        lex = [np.stack([lexical_features(t) for t in d["texts"]]) for d in (train, val)]
        inputs["sound + words"] = tuple(np.concatenate([last_frames(d["x"], frames), x], axis=1)
                                        for d, x in zip((train, val), lex))
    for name, (xt, xv) in inputs.items():
        for seed in range(seeds):
            score = 1 / (1 + np.exp(-probe((xt, yt), (xv, yv), frames, seed=seed)))
            points = []
            print(f"{name}, seed {seed}:")
            for thr in SCENE_THRESHOLDS:
                r = play_scenes(score, val, thr)
                lat = list(r["latency"].values())
                print(f"  threshold {thr:.2f}: pause TOR {np.mean(list(r['pause'].values())):.2f}, turn-taking TOR "
                      f"{np.mean(list(r['tt'].values())):.2f}, median latency "
                      f"{np.median(lat) if lat else float('nan'):.2f} s, same-speaker gaps taken {r['gap']:.2f}")
                points.append({"data": r})
            at = latency_at_tor(points, [])["policy"]
            if at["value"] is None:
                print(f"  median latency at pause TOR {TARGET_TOR:.2f}: off the thresholds' frontier")
            else:
                print(f"  median latency at pause TOR {TARGET_TOR:.2f}: {at['value']:.2f} s [{at['lo']:.2f}, "
                      f"{at['hi']:.2f}] (defined in {at['defined_share']:.0%} of resamples)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=12, help="feature frames the classifier sees (default 12: 0.96 s)")
    ap.add_argument("--rooms", default="anechoic", choices=sorted(ROOMS))
    ap.add_argument("--after", default="3,4,5", help="frames of silence (80 ms each) at which to ask (default 3,4,5)")
    ap.add_argument("--tts", default="espeak", choices=("espeak", "kokoro"))
    ap.add_argument("--lexical", action="store_true", help="also transcribe, and compare words, sound and both")
    ap.add_argument("--scenes", action="store_true", help="play every silence per scene (pause and turn-taking TOR, "
                                                          "latency) instead of scoring frames")
    ap.add_argument("--seeds", type=int, default=3, help="--scenes: classifier seeds (default 3)")
    args = ap.parse_args(argv)
    if not 1 <= args.frames <= 24:
        ap.error(f"--frames must be in 1..24 (the observation's history), got {args.frames}")
    try:
        after = tuple(int(a) for a in args.after.split(","))
    except ValueError:
        ap.error(f"--after: comma-separated frame counts, got {args.after!r}")
    if min(after) < 1:
        ap.error(f"--after: frame counts start at 1, got {args.after!r}")
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.scenes:
        train, val = (collect_silences(split, ROOMS[args.rooms], args.frames, min(after), args.tts, args.lexical)
                      for split in ("train", "val"))
        print(f"tts={args.tts}, rooms={args.rooms}, {args.frames} frames, deciding from {min(after) * FRAME_S:.2f} s "
              f"into each silence to {MAX_QUIET * FRAME_S:.2f} s; train {len(train['kind'])} frames of "
              f"{len(np.unique(train['silence']))} silences, validation {len(val['kind'])} frames of "
              f"{len(np.unique(val['silence']))} silences in {len(np.unique(val['scene']))} scenes")
        scene_report(train, val, args.frames, args.seeds, args.lexical)
        return
    train, val = (collect(split, ROOMS[args.rooms], after, args.tts, args.lexical) for split in ("train", "val"))
    y = val[1]
    asked = [round(a * FRAME_S, 2) for a in after]
    print(f"tts={args.tts}, rooms={args.rooms}, {args.frames} frames, asked {asked} s into the silence; "
          f"train {len(train[1])} observations "
          f"({int(train[1].sum())} ends), validation {len(y)} ({int(y.sum())} ends)")
    scores = {"sound": probe(train[:2], val[:2], args.frames)}
    if args.lexical:
        lex = [np.stack([lexical_features(t) for t in part[2]]) for part in (train, val)]
        both = [np.concatenate([last_frames(part[0], args.frames), x], axis=1) for part, x in zip((train, val), lex)]
        scores["words"] = probe((lex[0], train[1]), (lex[1], y), args.frames, hidden=0)
        scores["sound + words"] = probe((both[0], train[1]), (both[1], y), args.frames)
    for name, score in scores.items():
        print(f"{name}: ROC AUC {roc_auc(score, y):.3f}")
        for tpr in (0.80, 0.90, 0.95):
            thr = np.quantile(score[y == 1], 1 - tpr)
            print(f"  answering {tpr:.0%} of ends speaks in {np.mean(score[y == 0] >= thr):.1%} of pause frames")


if __name__ == "__main__":
    main()
