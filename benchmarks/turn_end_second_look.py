"""Would a second look at a silence answer the turn ends a first-look model leaves to its endpoint?

    python benchmarks/turn_end_second_look.py --checkpoint single_user_first_look \\
        --val runs/fl/valbig_s0.jsonl runs/fl/val_s1.jsonl runs/fl/val_s2.jsonl [--at 1.136 1.216 1.296 1.376] \\
        [--pick-on FILE ...] [--extra-early 0]

A first-look checkpoint (``calibrate --answer-within-s 0.3``) decides once per silence, at its
threshold: answer now, or wait for the agent's 2 s endpoint, so a turn end it does not answer at
once is answered after 2 s (the p90 latency of the first-look seeds is 2.1-2.2 s). A second look
``--at`` seconds into the silence would answer such a turn end sooner, with its own threshold: the
lowest, in steps of 0.01, at which, on the ``--pick-on`` files (default: the ``--val`` files), the
first and second looks together answer early (on a not-to-answer frame) at most ``--extra-early``
more silences in each scene set than the first look alone. Each row is reported on the ``--val``
files pooled: that threshold, the pause scenes taken, and of the turn-taking scenes' turn ends,
the share answered at the first look and by the second, and the 90th percentile of the silence
before the answer (a turn end answered at neither look at the endpoint). Offline, on ``collect``
files (``--words`` where the model reads the recogniser's confidence): the agent has no second look.
Deterministic.
"""

from __future__ import annotations

import argparse
import copy
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")
ENDPOINT_S = 2.0  # the turn detector's endpoint_silence_ms: a turn end neither look answers waits this long
FIRST_LOOK_S = 0.256  # the silence at the first look (collect's first labelled frame)


def answers(probs: list[np.ndarray], first: float, look: int | None, second: float) -> list[int | None]:
    """Each silence's answering frame: 0 when P reaches ``first`` at the first look, else ``look``
    when the silence lasts to that frame and P reaches ``second`` there, else None."""
    out = []
    for p in probs:
        if p[0] >= first:
            out.append(0)
        elif look is not None and look < len(p) and p[look] >= second:
            out.append(look)
        else:
            out.append(None)
    return out


def early(rows: list[dict], at: list[int | None]) -> int:
    """The silences with a not-to-answer frame answered on one."""
    return sum(a is not None and r["labels"][a] == 0 for r, a in zip(rows, at))


def pick_second(groups: list[tuple[list[dict], list[np.ndarray]]], first: float, look: int, extra: int) -> float:
    """The lowest second-look threshold within ``extra`` early answers of the first look alone in
    each group (1.0: never answer at the second look)."""
    alone = [early(rows, answers(probs, first, None, 1.0)) for rows, probs in groups]
    for thr in np.round(np.arange(0.01, 1.0, 0.01), 2):
        if all(early(rows, answers(probs, first, look, float(thr))) <= n + extra
               for (rows, probs), n in zip(groups, alone)):
            return float(thr)
    return 1.0


def row(rows: list[dict], probs: list[np.ndarray], first: float, look: int | None, second: float) -> str:
    """The table cells of ``rows`` answered at the first look at ``first`` and at frame ``look`` at ``second``."""
    from fdenv.cli.turn_end import FRAME_S

    at = answers(probs, first, look, second)
    taken = {(r["file"], r["scene_id"]) for r, a in zip(rows, at) if r["set"] == "pause" and a is not None
             and r["labels"][a] == 0}
    scenes = len({(r["file"], r["scene_id"]) for r in rows if r["set"] == "pause"})
    ends = [(r, a) for r, a in zip(rows, at) if r["set"] == "turn_taking" and r["labels"][0] == 1]
    if not ends:
        return f"{len(taken)}/{scenes} | - | - | - (0)"
    waited = np.array([float(r["silence_s"]) + a * FRAME_S if a is not None else ENDPOINT_S for r, a in ends])
    return (f"{len(taken)}/{scenes} | {np.mean([a == 0 for _, a in ends]):.2f} | "
            f"{np.mean([a is not None for _, a in ends]):.2f} | {np.percentile(waited, 90):.2f} s ({len(ends)})")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds of silence (e.g. 1.296)") from None
    if not FIRST_LOOK_S < value < ENDPOINT_S:
        raise argparse.ArgumentTypeError(f"--at={value}; a second look falls after the first ({FIRST_LOOK_S} s) and "
                                         f"before the endpoint ({ENDPOINT_S:g} s)")
    return value


def main(argv=None) -> None:
    from fdenv.cli.turn_end import FRAME_S, by_set, lines_as_heard, silence_probs
    from fdenv.train.turn_end import checkpoint_path, load

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True, help="a shipped first-look checkpoint's name, or a file")
    ap.add_argument("--val", nargs="+", required=True, type=Path, help="reported pooled")
    ap.add_argument("--at", nargs="+", type=_seconds, default=[1.136, 1.216, 1.296, 1.376],
                    help="seconds of silence at the second look (default: 1.136 1.216 1.296 1.376)")
    ap.add_argument("--pick-on", nargs="*", default=None, type=Path,
                    help="pick each second threshold on these files together (default: the --val files)")
    ap.add_argument("--extra-early", type=int, default=0,
                    help="early answers per scene set the second look may add to the first look's (default 0)")
    args = ap.parse_args(argv)
    if args.extra_early < 0:
        ap.error(f"--extra-early={args.extra_early}; a count of silences, 0 or more")
    model = load(checkpoint_path(args.checkpoint))
    if model.answer_within_s is None or model.answer_within_s >= FIRST_LOOK_S + FRAME_S - 1e-9:
        within = "at any time" if model.answer_within_s is None else f"within {model.answer_within_s:g} s"
        ap.error(f"--checkpoint {args.checkpoint} answers {within} in a silence, past its first look; give a "
                 "first-look one (calibrate --answer-within-s 0.3)")
    first = model.threshold
    model = copy.copy(model)
    model.answer_within_s = None  # P at every frame: the second look reads it where the agent would
    val = lines_as_heard(model, args.val, list(SETS), "--val")
    picked = lines_as_heard(model, args.pick_on, list(SETS), "--pick-on") if args.pick_on else val
    val_probs = silence_probs(model, val)
    groups = [(rows, silence_probs(model, rows)) for rows in by_set(picked).values()]
    start = float(val[0]["silence_s"]) if val else FIRST_LOOK_S
    print(f"{args.checkpoint}: first look at {first:.2f}; each second look at the lowest threshold adding at most "
          f"{args.extra_early} early answers per set on {', '.join(p.name for p in (args.pick_on or args.val))}")
    print("| second look | its threshold | pause scenes taken | turn ends answered at the first look | "
          "by the second | p90 silence before the answer (turn ends) |\n|---|---|---|---|---|---|")
    print(f"| none | - | {row(val, val_probs, first, None, 1.0)} |")
    for seconds in args.at:
        look = int(round((seconds - start) / FRAME_S))
        second = pick_second(groups, first, look, args.extra_early)
        print(f"| {start + look * FRAME_S:.3f} s | {second:.2f} | {row(val, val_probs, first, look, second)} |",
              flush=True)


if __name__ == "__main__":
    main()
