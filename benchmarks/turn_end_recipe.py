"""The single-user turn-end recipe on one draw of training data, with its knobs turned: each L2
penalty of the fit at the threshold ``calibrate --pooled`` would pick, and how it plays.

    python benchmarks/turn_end_recipe.py --train runs/seeds/train_s1.jsonl --val runs/rep/valp_s0.jsonl \\
        --calibrate runs/rep/valbig_s0.jsonl runs/rep/val_s1.jsonl runs/rep/val_s2.jsonl \\
        --heldout runs/rep/val_anechoic.jsonl runs/rep/val_office_noise_echo.jsonl runs/rep/val_car_cabin.jsonl \\
        [--l2 0.3 1 3 10] [--sound-l2-scales 1 10 100] [--without-sound] [--bag 10] [--drop-empty]
        [--first-look [--fit-first-look]] [--resample 8] [--pause-share 0.10]

The recipe (``python -m fdenv.cli.turn_end fit --sound --confidence``, then ``calibrate --pooled``)
fits the words, the silence, the sound of the turn's end and the recogniser's confidence on the
pause and turn-taking scenes' silences, keeps the penalty with the lowest per-frame log-loss on
``--val``, and takes the lowest threshold at which at most ``--max-early`` of each scene set's
not-to-answer silences in the ``--calibrate`` files together are answered early. A training seed
changes the rooms and the humans' timings the training scenes are played in, and with them the
model; this prints, per penalty, the log-loss, that threshold, and on the calibration files and
each ``--heldout`` file: the pause scenes taken and the assistant's turn ends answered early, at a
median silence (how soon the agent answers). ``--sound-l2-scales``: each penalty is tried with each
of these factors on the sound columns' penalty (``fit --sound-l2-scales``; the pick is the pair
with the lowest log-loss). ``--without-sound``: the words, silence and confidence alone. ``--bag
B``: the mean weights of B fits on bootstrap resamples of the training scenes (one linear model, a
variance-reducing average). ``--drop-empty``: training silences whose transcript holds no words are
left out. ``--first-look``: the model decides once per silence, at its first look, its threshold
picked so (``calibrate --answer-within-s 0.3``, as the first-look checkpoints are made from the
recipe's fit). ``--fit-first-look``: with it, the fit's examples are each training silence's first
frame alone, the frame that decision reads, and the penalty's log-loss is the ``--val`` first
frames'. ``--resample B``: each row also fits B bootstrap resamples of the training scenes, each
calibrated alone, and gives per file the mean [least, most] of their pause scenes taken and turn
ends answered early: how much the recipe's decision moves with the draw of training scenes, as it
does between training seeds. ``--pause-share S``: per file, also the turn ends answered early at
the lowest threshold (in steps of 0.01) that takes at most that share of its pause scenes, whatever
the calibrated threshold: the ranking the comparison with the cascade reads, at its pause TOR of
0.10. Files are ``python -m fdenv.cli.turn_end collect --words`` files. Deterministic.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")
FIRST_LOOK_S = 0.3  # a window that holds the first look (0.256 s of silence) alone: calibrate --answer-within-s 0.3


def read(paths: list[Path], option: str) -> list[dict]:
    """The pause and turn-taking silences of ``paths`` as the recipe hears them: with their sound
    (from the microphone) and the recogniser's words."""
    from fdenv.cli.turn_end import silences_as_heard

    return silences_as_heard(paths, list(SETS), option, sound=True, words=True)


def training_sets(rows: list[dict], bag: int) -> list[tuple]:
    """The fit's examples of ``rows``, built once for every penalty; ``bag`` > 0: of that many
    bootstrap resamples of the scenes instead (drawn from a fixed seed)."""
    from fdenv.cli.turn_end import examples

    if not bag:
        return [examples(rows)]
    scenes: dict = {}
    for r in rows:
        scenes.setdefault(r["scene_id"], []).append(r)
    ids = sorted(scenes)
    rng = np.random.default_rng(0)
    return [examples([r for i in rng.choice(len(ids), len(ids)) for r in scenes[ids[i]]]) for _ in range(bag)]


def fitted(sets: list[tuple], l2: float, sound: bool, sound_l2_scale: float = 1.0):
    """The recipe's model at penalty ``l2`` (``sound_l2_scale`` times it on the sound's columns):
    fitted on the one set of examples, or the mean of the fits on each bootstrap set."""
    from fdenv.train.turn_end import fit

    models = [fit(t, n, y, s, l2=l2, sounds=sd if sound else None, words=w, sound_l2_scale=sound_l2_scale)
              for t, n, s, y, sd, w, *_ in sets]
    model = models[0]
    if len(models) > 1:
        model.weights = np.mean([m.weights for m in models], axis=0)
        model.bias = float(np.mean([m.bias for m in models]))
    return model


def scored(model, rows: list[dict]) -> tuple:
    """(pause silences, their probabilities, turn-taking silences, theirs): computed once per
    model and file, read at any threshold."""
    from fdenv.cli.turn_end import silence_probs

    pauses = [r for r in rows if r["set"] == "pause"]
    turns = [r for r in rows if r["set"] == "turn_taking"]
    return pauses, silence_probs(model, pauses), turns, silence_probs(model, turns)


def counts(model, rows: list[dict], threshold: float, scores: tuple | None = None) -> tuple[int, int, int, dict]:
    """(pause scenes taken, pause scenes, turn ends answered early, the turn ends' ``rates``);
    ``scores``: ``scored(model, rows)``, when already computed."""
    from fdenv.cli.turn_end import pause_scenes_taken, rates

    pauses, pause_probs, turns, turn_probs = scores or scored(model, rows)
    taken, scenes = pause_scenes_taken(pauses, pause_probs, threshold)
    ends = rates(model, turns, threshold, turn_probs)
    return len(taken), scenes, round(ends["early_on_positives"] * ends["positives"]), ends


def cell(model, rows: list[dict], threshold: float) -> str:
    """Pause scenes taken, and the assistant's turn ends answered early at a median silence."""
    taken, scenes, answered, ends = counts(model, rows, threshold)
    median = "-" if ends["median_silence_s"] is None else f"{ends['median_silence_s']:.2f} s"
    return f"{taken}/{scenes}; {answered}/{ends['positives']} at {median}"


def at_pause_share(model, rows: list[dict], share: float, scores: tuple | None = None) -> tuple[int, int, float]:
    """(turn ends answered early, turn ends, the threshold) at the lowest threshold, in steps of
    0.01, at which at most ``share`` of the pause scenes of ``rows`` are taken; ``scores``:
    ``scored(model, rows)``, when already computed."""
    from fdenv.cli.turn_end import pause_scenes_taken, rates

    pauses, pause_probs, turns, turn_probs = scores or scored(model, rows)
    for thr in [*np.round(np.arange(0.01, 1.0, 0.01), 2), 1.0]:
        taken, scenes = pause_scenes_taken(pauses, pause_probs, float(thr))
        if len(taken) <= share * scenes + 1e-9:
            ends = rates(model, turns, float(thr), turn_probs)
            return round(ends["early_on_positives"] * ends["positives"]), ends["positives"], float(thr)
    raise AssertionError("unreachable: at 1.0 no silence is answered")


def spread(values: list[int]) -> str:
    return f"{np.mean(values):.1f} [{min(values)}, {max(values)}]"


def resampled_cells(resamples: list[tuple], l2: float, scale: float, args, files: list[list[dict]]) -> list[str]:
    """Per file: the pause scenes taken and turn ends answered early by each fit on a bootstrap
    resample of the training scenes, each at its own calibrated threshold, as mean [least, most];
    with ``args.pause_share``, then the turn ends answered at that share of pause scenes likewise."""
    from fdenv.cli.turn_end import by_set, pick_threshold

    taken, answered, shared = [[] for _ in files], [[] for _ in files], [[] for _ in files]
    for one in resamples:
        model = fitted([one], l2, not args.without_sound, scale)
        model.answer_within_s = FIRST_LOOK_S if args.first_look else None
        threshold = pick_threshold(model, files[0], args.max_early, group=by_set)
        for i, rows in enumerate(files):
            scores = scored(model, rows)
            t, _, a, _ = counts(model, rows, threshold, scores)
            taken[i].append(t)
            answered[i].append(a)
            if args.pause_share is not None:
                shared[i].append(at_pause_share(model, rows, args.pause_share, scores)[0])
    return [f"{spread(t)}; {spread(a)}" + (f"; {spread(h)}" if h else "") for t, a, h in zip(taken, answered, shared)]


def main(argv=None) -> None:
    from fdenv.cli.turn_end import L2S, by_set, log_loss, pick_threshold, silence_probs
    from fdenv.train.turn_end import bare_words

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", required=True, type=Path)
    ap.add_argument("--val", nargs="+", required=True, type=Path, help="picks the penalty (log-loss), as `fit --val`")
    ap.add_argument("--calibrate", nargs="+", required=True, type=Path,
                    help="picks the threshold, pooled, as `calibrate --pooled --val`")
    ap.add_argument("--heldout", nargs="*", default=[], type=Path, help="each reported alone")
    ap.add_argument("--l2", nargs="+", type=float, default=list(L2S), help=f"penalties (default: fit's, {L2S})")
    ap.add_argument("--sound-l2-scales", nargs="+", type=float, default=[1.0], metavar="K",
                    help="factors on the sound columns' penalty, each tried with every --l2 (default: 1)")
    ap.add_argument("--max-early", type=float, default=0.02, help="the threshold's budget, as calibrate's")
    ap.add_argument("--without-sound", action="store_true")
    ap.add_argument("--bag", type=int, default=0, metavar="B")
    ap.add_argument("--drop-empty", action="store_true")
    ap.add_argument("--resample", type=int, default=0, metavar="B",
                    help="also fit B bootstrap resamples of the training scenes, each calibrated alone")
    ap.add_argument("--pause-share", type=float, default=None, metavar="S",
                    help="per file, also the turn ends answered at the lowest threshold taking at most this share of "
                         "its pause scenes (e.g. 0.10)")
    ap.add_argument("--first-look", action="store_true", help="decide once per silence, at the first look")
    ap.add_argument("--fit-first-look", action="store_true",
                    help="with --first-look: fit on each training silence's first frame alone")
    args = ap.parse_args(argv)
    if args.pause_share is not None and not 0.0 <= args.pause_share < 1.0:
        ap.error(f"--pause-share {args.pause_share}: a share of pause scenes in [0, 1), e.g. 0.10")
    if args.resample < 0:
        ap.error(f"--resample {args.resample}: the number of resampled fits, 0 (none) or more")
    if args.bag < 0:
        ap.error(f"--bag {args.bag}: the number of bootstrap fits, 0 (none) or more")
    if any(not 0.0 < k < float("inf") for k in args.sound_l2_scales):
        ap.error(f"--sound-l2-scales {' '.join(map(str, args.sound_l2_scales))}: positive factors, e.g. 1 10 100")
    if args.without_sound and args.sound_l2_scales != [1.0]:
        ap.error("--sound-l2-scales scales the sound's penalty; leave out --without-sound")
    if args.fit_first_look and not args.first_look:
        ap.error("--fit-first-look fits the first look's decision; add --first-look")
    train = read(args.train, "--train")
    if args.drop_empty:
        train = [r for r in train if bare_words(r["text"])]
    val, cal = read(args.val, "--val"), read(args.calibrate, "--calibrate")
    if args.fit_first_look:
        train, val = ([{**r, "labels": r["labels"][:1]} for r in rows] for rows in (train, val))
    held = {path.name: read([path], "--heldout") for path in args.heldout}
    y = np.array([label for r in val for label in r["labels"]], np.float64)
    print(f"{', '.join(p.name for p in args.train)}: {len(train)} training silences"
          + (", without the sound" if args.without_sound else "") + (f", {args.bag} bootstrap fits averaged"
                                                                       if args.bag else "")
          + (", silences without words left out" if args.drop_empty else "")
          + (", fitted on their first frames" if args.fit_first_look else "")
          + (", deciding at the first look" if args.first_look else ""))
    header = ["L2", "validation log-loss", "threshold",
              "calibration: pause scenes taken; turn ends answered early, at", *held]
    if args.resample:
        header += [f"{name}, {args.resample} resamples" for name in ("calibration", *held)]
    if args.pause_share is not None:
        header += [f"{name}: turn ends at {args.pause_share:g} of pause scenes" for name in ("calibration", *held)]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    rows = []
    sets = training_sets(train, args.bag)
    resamples = training_sets(train, args.resample) if args.resample else []
    for l2 in args.l2:
        for scale in args.sound_l2_scales:
            model = fitted(sets, l2, not args.without_sound, scale)
            nll = log_loss(np.concatenate(silence_probs(model, val)), y)
            model.answer_within_s = FIRST_LOOK_S if args.first_look else None
            threshold = pick_threshold(model, cal, args.max_early, group=by_set)
            cells = [f"{nll:.4f}", f"{threshold:.2f}", *(cell(model, rs, threshold) for rs in (cal, *held.values()))]
            if resamples:
                cells += resampled_cells(resamples, l2, scale, args, [cal, *held.values()])
            if args.pause_share is not None:
                cells += ["{}/{} (at {:.2f})".format(*at_pause_share(model, rs, args.pause_share))
                          for rs in (cal, *held.values())]
            name = f"{l2:g}" + (f", sound x{scale:g}" if len(args.sound_l2_scales) > 1 else "")
            rows.append((nll, name, cells))
    picked = min(rows)[1]  # the lowest log-loss, as fit picks
    for _, name, cells in rows:
        print("| " + " | ".join([name + (" (the pick)" if name == picked else ""), *cells]) + " |")


if __name__ == "__main__":
    main()
