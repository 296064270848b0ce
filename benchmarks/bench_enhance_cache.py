"""Plays of the same episodes by another checkpoint, with and without the enhancement cache.

    python benchmarks/bench_enhance_cache.py [--first single_user_first_look 0.88] \
        [--second single_user_first_look_seed1 0.82] [--limit 3] [--episodes 1] [--condition anechoic] [--out DIR]

The enhanced first-look agents spend most of a play in the speech enhancer, which hears the turn
so far at every silence it judges. Another checkpoint, or another threshold, playing the same
episode hears the same turns until it first decides otherwise, so the enhancer's cache
(``fdenv_agents.cascade.enhance``) serves it those turns. This plays the first ``--limit`` pause
and turn-taking test scenes with ``--first`` (at its threshold) into a fresh enhancement cache,
then with ``--second`` twice: into another empty cache (every turn enhanced), then into the
first's (the turns it heard alike read back). Prints the enhancer's calls and runs and the time of
each play of ``--second``, and checks that its two plays give the same lines (the agent's
wall-clock costs aside) and record files, byte for byte. Kokoro's voices for the humans and
espeak's for the agent, as the comparison plays them; the first play warms the voices and models
for both plays of the second.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_frontier_reuse import differences, report_identity  # noqa: E402  (one definition of "the same play")


def main(argv=None) -> None:
    from fdenv.render.cache import ClipCache
    from fdenv.train import frontier as fr
    from fdenv_agents import make_agent
    from fdenv_agents.cascade import enhance

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--first", nargs=2, metavar=("CHECKPOINT", "THRESHOLD"), default=["single_user_first_look", "0.88"])
    p.add_argument("--second", nargs=2, metavar=("CHECKPOINT", "THRESHOLD"),
                   default=["single_user_first_look_seed1", "0.82"])
    p.add_argument("--limit", type=int, default=3, help="pause and turn-taking test scenes, each")
    p.add_argument("--episodes", type=int, default=1, help="episodes per scene")
    p.add_argument("--condition", default="anechoic", choices=list(fr.CONDITIONS))
    p.add_argument("--out", default=None, help="a folder for the runs and caches (default: a fresh temporary one)")
    args = p.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="fdenv-bench-enhance-cache-"))

    counts = {"calls": 0, "runs": 0}
    call, run = enhance.SpeechEnhancer.__call__, enhance.SpeechEnhancer._enhance

    def counted_call(self, x):
        counts["calls"] += 1
        return call(self, x)

    def counted_run(self, x):
        counts["runs"] += 1
        return run(self, x)

    enhance.SpeechEnhancer.__call__, enhance.SpeechEnhancer._enhance = counted_call, counted_run

    def play(name, checkpoint, threshold, cache):
        enhance.CACHE_DIR = out / cache
        ClipCache.clear_memory()  # each play starts from its cache folder alone
        counts.update(calls=0, runs=0)
        t = time.perf_counter()
        fr.frontier(checkpoint, make_agent, [args.condition], [float(threshold)], [], sets=["pause", "turn_taking"],
                    limit=args.limit, out=out / name, tts="kokoro", agent_tts="espeak", policy_agent="turn_detector",
                    policy_kwargs={"group_checkpoint": "words"}, episodes=args.episodes, reuse_alike=False,
                    log=lambda line: print(f"  {name}: {line}", flush=True))
        seconds = time.perf_counter() - t
        print(f"{name}: {checkpoint} at {threshold}, cache {cache}: {counts['calls']} enhancer calls, "
              f"{counts['runs']} runs of the model, {seconds:.0f} s", flush=True)
        return seconds

    play("first", *args.first, cache="cache_shared")
    cold = play("second_cold", *args.second, cache="cache_empty")
    warm = play("second_warm", *args.second, cache="cache_shared")
    problems = []
    for folder in sorted(f for f in (out / "second_cold").iterdir() if f.is_dir()):
        twin = out / "second_warm" / folder.name
        problems += differences(folder, twin) if twin.is_dir() else [f"{folder.name}: no twin folder"]
    print(f"time of the second checkpoint's play: empty cache {cold:.0f} s, the first's cache {warm:.0f} s, "
          f"ratio {warm / cold:.2f} (load average {os.getloadavg()[0]:.1f})")
    report_identity(problems)


if __name__ == "__main__":
    main()
