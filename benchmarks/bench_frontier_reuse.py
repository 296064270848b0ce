"""A threshold sweep that copies the episodes a threshold does not change, against playing them all.

    python benchmarks/bench_frontier_reuse.py [--checkpoint single_user_first_look] \
        [--thresholds 0.3 0.88 0.95] [--limit 4] [--episodes 1] [--condition anechoic] [--out DIR]

Plays the turn detector's frontier (no cascade points) on the first ``--limit`` pause and
turn-taking test scenes twice into two fresh folders: once as ``compare frontier`` does by
default (``reuse_alike``: an episode that the agent vouches it plays exactly as at a threshold
already played is copied from that run folder) and once with every episode played
(``--play-all``). Prints the episodes each played and the time each took, and checks that the two
give the same thing: every line (the agent's wall-clock costs aside) and every record file, byte
for byte. Kokoro's voices for the humans and espeak's for the agent, as the comparison plays them.
The reusing sweep runs first, so it pays for the colder caches (voices, models): its time is the
upper end; the episodes each played are the measure that does not depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

WALL_CLOCK = ("compute_s", "asr_s")  # the agent's own timings: not part of what it played


def comparable(line: dict) -> dict:
    from fdenv.runs import ADOPTED_FROM

    stats = {k: v for k, v in (line.get("agent_stats") or {}).items() if k not in WALL_CLOCK}
    return {**{k: v for k, v in line.items() if k != ADOPTED_FROM}, "agent_stats": stats}


def differences(a: Path, b: Path) -> list[str]:
    """What differs between two run folders of one configuration: lines and record files."""
    from fdenv.runs import read_episodes

    lines_a = {(ln["scene_id"], ln["seed"]): ln for ln in read_episodes(a)}
    lines_b = {(ln["scene_id"], ln["seed"]): ln for ln in read_episodes(b)}
    out = [f"{a.name}: episodes {sorted(lines_a.keys() ^ lines_b.keys())} in one folder only"] \
        if lines_a.keys() != lines_b.keys() else []
    for key in sorted(lines_a.keys() & lines_b.keys()):
        if json.dumps(comparable(lines_a[key]), sort_keys=True) != json.dumps(comparable(lines_b[key]), sort_keys=True):
            out.append(f"{a.name} {key}: the lines differ")
        stem = lines_a[key]["record"]
        for path in sorted((a / stem).parent.glob(Path(stem).name + ".*")):
            other = b / Path(stem).parent / path.name
            if not other.is_file() or other.read_bytes() != path.read_bytes():
                out.append(f"{a.name} {key}: {path.name} differs")
    return out


def report_identity(problems: list[str]) -> None:
    """Say whether two plays came out the same; exit 1 when they did not."""
    print("identical: every line and record file" if not problems else "DIFFERENT:\n  " + "\n  ".join(problems))
    if problems:
        raise SystemExit(1)


def main(argv=None) -> None:
    from fdenv.runs import ADOPTED_FROM, read_config, read_episodes
    from fdenv.train import frontier as fr
    from fdenv_agents import make_agent

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoint", default="single_user_first_look", help="a turn-end checkpoint that decides "
                                                                          "once per silence")
    p.add_argument("--thresholds", nargs="+", type=float, default=[0.3, 0.88, 0.95])
    p.add_argument("--limit", type=int, default=4, help="pause and turn-taking test scenes, each")
    p.add_argument("--episodes", type=int, default=1, help="episodes per scene")
    p.add_argument("--condition", default="anechoic", choices=list(fr.CONDITIONS))
    p.add_argument("--out", default=None, help="a folder for the two runs (default: a fresh temporary one)")
    args = p.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="fdenv-bench-reuse-"))
    times = {}
    for name, reuse in (("reuse", True), ("play_all", False)):
        t = time.perf_counter()
        fr.frontier(args.checkpoint, make_agent, [args.condition], args.thresholds, [], sets=["pause", "turn_taking"],
                    limit=args.limit, out=out / name, tts="kokoro", agent_tts="espeak", policy_agent="turn_detector",
                    policy_kwargs={"group_checkpoint": "words"}, episodes=args.episodes, reuse_alike=reuse,
                    log=lambda line: print(f"  {name}: {line}", flush=True))
        times[name] = time.perf_counter() - t
    played = copied = 0
    problems = []
    for folder in sorted(p for p in (out / "reuse").iterdir() if p.is_dir()):
        lines = read_episodes(folder)
        n = sum(ADOPTED_FROM in ln for ln in lines)
        copied, played = copied + n, played + len(lines) - n
        twin = out / "play_all" / folder.name
        problems += differences(folder, twin) if read_config(twin) else [f"{folder.name}: no twin folder"]
    total = played + copied
    print(f"{len(args.thresholds)} thresholds x {total // len(args.thresholds)} episodes ({args.condition}): "
          f"reuse played {played} and copied {copied} of {total}; play-all played {total}")
    print(f"time: reuse {times['reuse']:.0f} s, play-all {times['play_all']:.0f} s, ratio "
          f"{times['reuse'] / times['play_all']:.2f} (load average {os.getloadavg()[0]:.1f})")
    report_identity(problems)


if __name__ == "__main__":
    main()
