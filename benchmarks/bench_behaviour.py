"""The simulated humans' behaviour on the shipped test splits, under both profiles: overlapping
human speech, backchannels and other unscripted turns, floor-transfer offsets between scripted
turns, N4R delays and reactions. No scoring, so it runs in a minute or two.

    python benchmarks/bench_behaviour.py [--agents silent talker oracle] [--limit N]
"""

from __future__ import annotations

import argparse

import numpy as np

from fdenv.run import run_episode
from fdenv.sim.behaviour import EXTRA_LABELS
from fdenv.sim.env import RoomEnv
from fdenv_agents import make_agent

SETS = ("pause", "backchannel", "turn_taking", "interruption", "mpe")


def measure(profile: str, agents, limit) -> dict:
    frames = overlap = 0
    extras: dict[str, int] = {}
    offsets, n4r, reactions = [], [], {}
    episodes = 0
    for scene_set in SETS:
        env = RoomEnv(scene_set=scene_set, split="test", behaviour=profile)
        for name in agents:
            for i, sc in enumerate(env.scenes[: limit or None]):
                rec = run_episode(env, make_agent(name), seed=0, scene=sc.id).record
                episodes += 1
                F, sr = rec.frame_samples, rec.sample_rate
                count = np.zeros(rec.n_frames, int)
                for sp in {c.speaker for c in rec.clips}:
                    on = np.zeros(rec.n_frames, bool)
                    for c in rec.clips:
                        if c.speaker == sp:
                            on[int(c.start * sr) // F : -(-int(c.end * sr) // F)] = True
                    count += on
                frames += rec.n_frames
                overlap += int((count >= 2).sum())
                scripted = [t for t in rec.turns if t.label not in EXTRA_LABELS]
                for t in rec.turns:
                    if t.label in EXTRA_LABELS:
                        extras[t.label] = extras.get(t.label, 0) + 1
                for a, b in zip(scripted, scripted[1:]):
                    if a.speaker != b.speaker and a.label not in ("T", "final", "N4Q") and b.label != "interrupt":
                        offsets.append(b.start - a.end)
                    if a.label == "N4Q" and b.label == "N4R":
                        n4r.append(b.start - a.end)
                for r in rec.reactions:
                    reactions[r["kind"]] = reactions.get(r["kind"], 0) + 1
    off = np.array(offsets)
    return {"episodes": episodes, "frames": frames, "overlap_frames": overlap, "extras": extras,
            "offsets": off, "n4r": np.array(n4r), "reactions": reactions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", nargs="+", default=["silent", "talker", "oracle"])
    ap.add_argument("--limit", type=int, default=None, help="scenes per set (default: all test scenes)")
    args = ap.parse_args()
    for profile in ("paper", "natural"):
        m = measure(profile, args.agents, args.limit)
        off, n4r = m["offsets"], m["n4r"]
        q = lambda x, p: float(np.quantile(x, p)) if len(x) else float("nan")  # noqa: E731
        print(f"{profile}: {m['episodes']} episodes, {m['frames']} frames; two or more humans audible in "
              f"{m['overlap_frames']} frames ({m['overlap_frames'] / m['frames']:.1%})")
        print(f"  unscripted turns: {m['extras'] or 'none'}; reactions to the assistant: {m['reactions'] or 'none'}")
        print(f"  offsets between speakers (n={len(off)}): overlap share {np.mean(off < 0) if len(off) else float('nan'):.2f}, "
              f"median {q(off, 0.5):+.2f} s, 10-90 % [{q(off, 0.1):+.2f}, {q(off, 0.9):+.2f}] s")
        print(f"  N4R delay (n={len(n4r)}): median {q(n4r, 0.5):.2f} s, range [{q(n4r, 0):.2f}, {q(n4r, 1):.2f}] s")


if __name__ == "__main__":
    main()
