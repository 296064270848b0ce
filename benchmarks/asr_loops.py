"""How often the cascade's recogniser loops, and what it costs the turn detector.

    python benchmarks/asr_loops.py --files runs/before/val_car_cabin.jsonl runs/after/val_car_cabin.jsonl \\
        [--checkpoint single_user --threshold 0.93]

Greedy decoding at temperature 0 sometimes loops in road noise ("Good morning. Good morning. Good
morning. ..."); a loop reads as a finished sentence, so the turn detector answers a pause at once.
The files are ``python -m fdenv.cli.turn_end collect --words``'s (say, the same scenes collected
before and after the recogniser decodes a loop again). Per file: its judged silences, how many of
their transcripts loop, by the two tests after which the recogniser decodes again (Whisper's own
test of a failed decode, gzip compression ratio above ``LOOP_COMPRESSION_RATIO``, and a phrase of
a few words said three times in a row, ``fdenv_agents.cascade.asr.loops``), and in which scenes;
with ``--checkpoint``, the turn detector's rule at ``--threshold`` per scene set (the share of
not-to-answer silences answered early / of the assistant's answered early, at a median silence).
Deterministic; plays nothing.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def loops(text: str) -> bool:
    """Whether a transcript repeats itself as the recogniser's second decode is for: too well
    compressed by Whisper's test, or a short phrase said three times in a row."""
    from faster_whisper.transcribe import get_compression_ratio

    from fdenv_agents.cascade.asr import decode_loops

    return bool(text) and decode_loops(text, [get_compression_ratio(text)])  # the text as one segment


def report(path: Path, model=None, threshold: float | None = None) -> str:
    from fdenv.cli.turn_end import read_lines, rule_cell

    rows = read_lines(path, sound=model is not None and model.uses_sound,
                      words=model is not None and model.uses_confidence)
    looping = [r for r in rows if loops(r["text"])]
    scenes = sorted({r["scene_id"] for r in looping})
    line = f"{path.name}: {len(rows)} silences, {len(looping)} transcripts loop ({', '.join(scenes) or 'none'})"
    if model is not None:
        line += f"; {threshold:.2f}: {rule_cell(model, rows, threshold)}"
    return line


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", nargs="+", required=True, type=Path, help="`collect` files")
    ap.add_argument("--checkpoint", default=None, help="a turn-end model (a shipped name or a file) to play them with")
    ap.add_argument("--threshold", type=float, default=None, help="its threshold (default: its own)")
    args = ap.parse_args(argv)
    model = None
    if args.checkpoint is not None:
        from fdenv.train.turn_end import checkpoint_path, load

        model = load(checkpoint_path(args.checkpoint))
    threshold = args.threshold if args.threshold is not None or model is None else model.threshold
    for path in args.files:
        print(report(path, model, threshold), flush=True)


if __name__ == "__main__":
    main()
