"""The ``min_speech_ms`` sensitivity sweep's cost against the run it re-scores.

    python benchmarks/bench_sweep.py [--pairs 30]

Runs the oracle over the first ``--pairs`` MPE test pairs (espeak voices, a fresh clip cache, so
the run pays what a first run pays), then re-scores the saved run at every ``SWEEP_MS`` value with
the bootstrap (``fdenv.score.rescore.sweep_min_speech``). Prints both times and their ratio
against the target: the sweep costs under a tenth of the run (it re-scores the saved records
without simulating the room again). Timed in one process, one after the other: a busy machine
slows both, not always alike, so read the ratio from a quiet one.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("FDENV_CACHE_DIR", tempfile.mkdtemp(prefix="fdenv-bench-"))

TARGET = 0.10


def main(argv=None) -> None:
    from fdenv.run import run
    from fdenv.scene import load_set
    from fdenv.score.rescore import SWEEP_MS, sweep_min_speech
    from fdenv_agents import OracleAgent

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=30, help="MPE test pairs (two scenes each)")
    args = p.parse_args(argv)
    scenes = load_set("mpe", "test")[: 2 * args.pairs]
    out = tempfile.mkdtemp(prefix="fdenv-bench-sweep-")
    t = time.perf_counter()
    folder = run(OracleAgent(), scenes=scenes, out=out, progress=False)
    run_s = time.perf_counter() - t
    sweep_min_speech(folder, values=[250], aggregate=False)  # one-time imports are no part of the sweep's cost
    t = time.perf_counter()
    sweep_min_speech(folder, values=SWEEP_MS, n_resamples=2000)
    sweep_s = time.perf_counter() - t
    ratio = sweep_s / run_s
    print(f"run: {len(scenes)} MPE scenes, {run_s:.1f} s; sweep over {list(SWEEP_MS)} ms: {sweep_s:.2f} s")
    print(f"sweep / run = {ratio:.3f} ({ratio / TARGET:.2f} x the {TARGET:.2f} target; load average "
          f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
