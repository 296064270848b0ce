"""Throughput over the whole test split: a silent agent's episodes, and scoring a speaking agent's.

    python benchmarks/bench_split.py [--rooms none,office] [--skip-scoring] [--score-every K]

Prints, measured in one run (wall time and the process's CPU time; real time = the episodes'
audio):
- every scene of every shipped set's test split with the silent agent, run as ``fdenv-run`` runs
  it (scored, records saved to a run folder), anechoic and in ``office``: a cold pass (clips
  rendered into an empty cache, rooms computed) and a warm pass, as multiples of real time;
- the oracle agent (it speaks every answer) over the FDB sets' and MPE's test splits, simulated
  unscored, then each record scored (Silero VAD, Whisper tiny.en, the offline judge; both FDB
  profiles or MPE) with empty VAD / ASR caches: scoring time as a percentage of real time
  (``--score-every K``: every K-th scene of each split, for a shorter run).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("FDENV_CACHE_DIR", tempfile.mkdtemp(prefix="fdenv-bench-"))


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def silent_split(rooms) -> None:
    """Each pass runs every set's test split as ``fdenv-run agent=silent`` does (``fdenv.run.run``:
    the scoring wrappers, a fresh run folder with every record saved)."""
    import json

    from fdenv.run import run
    from fdenv.scene import list_sets
    from fdenv_agents import SilentAgent

    for room in rooms:
        for label in ("cold", "warm"):
            audio, n = 0.0, 0
            w0, c0 = _clock()
            with tempfile.TemporaryDirectory() as out:
                for name in list_sets():
                    run(SilentAgent(), scene_set=name, split="test", out=out, progress=False, room=room)
                w1, c1 = _clock()
                for path in Path(out).glob("*/episodes.jsonl"):
                    for line in path.read_text().splitlines():
                        audio += json.loads(line)["duration_s"]
                        n += 1
            print(f"silent agent, test split, room {room or 'anechoic':8} {label}: {n} episodes, {audio:5.0f} s of "
                  f"audio in {w1 - w0:6.2f} s wall ({audio / (w1 - w0):5.0f}x real time), {c1 - c0:5.2f} s CPU "
                  f"({audio / (c1 - c0):5.0f}x)")


def speaking_scoring(every: int = 1) -> None:
    import shutil

    from fdenv.paths import cache_dir
    from fdenv.run import make_env, run_episode
    from fdenv.scene import list_sets
    from fdenv.score.fdb import FDBScorer, dimension_of
    from fdenv.score.mpe import MPEScorer
    from fdenv_agents import OracleAgent

    records = []
    for name in list_sets():
        env = make_env(name, split="test", score=False)
        for sc in env.unwrapped.scenes[::every]:
            records.append(run_episode(env, OracleAgent(), seed=0, scene=sc.id).record)
    fdb, mpe = FDBScorer(), MPEScorer()
    fdb.score(records[0])  # loads Silero and Whisper: a process does that once
    for sub in ("asr", "vad"):
        shutil.rmtree(cache_dir() / sub, ignore_errors=True)
    audio = sum(r.n_frames * r.frame_samples / r.sample_rate for r in records)
    w0, c0 = _clock()
    for r in records:
        if dimension_of(r.scene) is not None:
            fdb.score(r)
        if r.scene.kind == "mpe":
            mpe.score(r)
    w1, c1 = _clock()
    print(f"scoring the oracle's test episodes (VAD + ASR + judge, empty caches): {len(records)} episodes, "
          f"{audio:.0f} s of audio in {w1 - w0:.1f} s wall = {100 * (w1 - w0) / audio:.1f} % of real time "
          f"({100 * (c1 - c0) / audio:.1f} % in CPU time)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rooms", default="none,office", help="comma-separated: none (anechoic) and/or room presets")
    ap.add_argument("--skip-scoring", action="store_true", help="only the silent agent's split")
    ap.add_argument("--score-every", type=int, default=1, metavar="K",
                    help="score the oracle on every K-th scene of each test split (default 1: all)")
    args = ap.parse_args(argv)
    rooms = [None if r.strip() in ("none", "anechoic") else r.strip() for r in args.rooms.split(",") if r.strip()]
    silent_split(rooms)
    if args.score_every < 1:
        ap.error(f"--score-every must be at least 1, got {args.score_every}")
    if not args.skip_scoring:
        speaking_scoring(args.score_every)


if __name__ == "__main__":
    main()
