"""``fdenv-score RUN_DIR``: re-score a run folder's saved records without simulating again.

    fdenv-score runs/3f2a9c1d0b7e --min-speech-ms 500 --profiles paper

Prints the per-dimension table (and the multi-party and overlap tables for those scenes) and writes ``rescored/<key>.jsonl`` in the run folder (one line
per episode, as ``episodes.jsonl`` but with the new scores); the original lines are kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def rescore(folder: Path, profiles, asr: str, judge: str, min_speech_ms: int) -> tuple[Path, list[dict]]:
    from ..record import EpisodeRecord
    from ..runs import config_key, read_episodes, record_exists
    from ..score.fdb import FDBScorer
    from ..score.mpe import MPEScorer, is_mpe_scene
    from ..score.overlap import OverlapScorer, is_overlap_scene

    lines = read_episodes(folder)
    if not lines:
        raise SystemExit(f"fdenv-score: {folder} has no finished episodes (episodes.jsonl is empty or missing)")
    scorer = FDBScorer(profiles=tuple(profiles), asr=asr, judge=judge, min_speech_ms=min_speech_ms)
    mpe = MPEScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms)
    overlap = OverlapScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms)
    out = []
    for line in lines:
        if not record_exists(folder, line):  # scored without it; the runner redoes it on a rerun
            print(f"fdenv-score: {folder / line['record']}: record missing, episode skipped (scene "
                  f"{line['scene_id'][:80]!r}, seed {line['seed']}); rerun fdenv-run to do it again", file=sys.stderr)
            continue
        record = EpisodeRecord.load(folder / line["record"])
        new = {k: line[k] for k in ("scene_id", "kind", "pair_id", "condition", "seed", "privileged", "record") if k in line}
        new["fdb"], details = scorer.score_details(record)
        new["segments"] = [list(x) for x in details.get("paper", {}).get("segments", [])]
        if is_mpe_scene(record.scene):
            new["mpe"] = mpe.score(record)
        if is_overlap_scene(record):
            new["overlap"] = overlap.score(record)
        out.append(new)
    key = config_key({"fdb": scorer.config(), "overlap": overlap.config(), "min_speech_ms": min_speech_ms, "asr": asr, "judge": judge})
    path = folder / "rescored" / f"{key}.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in out))
    return path, out


def main(argv=None) -> int:
    from ..score import aggregate, aggregate_mpe, format_mpe, format_table

    ap = argparse.ArgumentParser(prog="fdenv-score", description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--profiles", nargs="+", default=["paper", "fdb_code"], choices=["paper", "fdb_code"])
    ap.add_argument("--min-speech-ms", type=int, default=250)
    ap.add_argument("--asr", default=None, help="a local CTranslate2 Whisper folder or an offline model name "
                                                "(default: the run's own)")
    ap.add_argument("--judge", default=None, help="offline | anthropic | anthropic:<model> (default: the run's own)")
    args = ap.parse_args(argv)
    if not (args.run_dir / "episodes.jsonl").is_file():
        print(f"fdenv-score: {args.run_dir}: not a run folder (no episodes.jsonl)", file=sys.stderr)
        return 2
    from ..score.rescore import run_scoring

    # Re-score with what the run used unless told otherwise: mixing recognisers or judges with the
    # live numbers would change more than the option asked for.
    used = run_scoring(args.run_dir)
    args.asr = args.asr or used["asr"] or "tiny.en"
    args.judge = args.judge or used["judge"] or "offline"
    print(f"re-scoring with asr={args.asr} judge={args.judge}", file=sys.stderr)
    from ..errors import RunFolderError

    try:
        path, lines = rescore(args.run_dir, args.profiles, args.asr, args.judge, args.min_speech_ms)
    except RunFolderError as e:
        print(f"fdenv-score: {e}", file=sys.stderr)
        return 2
    fdb = [ln for ln in lines if ln.get("fdb")]
    if fdb:
        print(format_table(aggregate(fdb, profiles=args.profiles)))
    mpe = [ln["mpe"] for ln in lines if ln.get("mpe")]
    if mpe:
        print(format_mpe(aggregate_mpe(mpe)))
    if any(ln.get("overlap") for ln in lines):
        from ..report import format_overlap
        from ..score.overlap_aggregate import aggregate_overlap

        print(format_overlap(aggregate_overlap(lines)))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
