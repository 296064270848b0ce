"""How much does one draw of the test episodes decide a target's verdict?

    python benchmarks/episode_draws.py --checkpoint single_user --threshold 0.93 --seeds 0 1 2 \\
        [--conditions office_noise_echo car_cabin anechoic] [--limit 30] [--tts kokoro] [--agent-tts espeak]

The targets are read on one episode per test scene (seed 0): the natural humans' timings (their
gaps, the length of each pause) and the talker's placement are drawn once. This plays the same
``turn_detector`` (``--checkpoint`` at ``--threshold``, with the ``words`` model for rooms of
several people, as the targets' runs) on the same pause and turn-taking test scenes in the same
rooms, once per episode seed, exactly as ``python -m fdenv.cli.compare frontier`` measures a point
(seed 0 gives its numbers). Per room and seed: the pause TOR with the pause scenes taken, the
turn-taking TOR and the median latency; then per room the range over the seeds, and which pause
scenes are taken in every draw (the model's) and which in some (the draw's). Run folders are
reused from ``--out``.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def taken(data: dict) -> list[str]:
    """The pause scenes whose pause the agent took over, by id."""
    return sorted(sid for sid, to in data["pause"].items() if to > 0)


def draws(checkpoint: str, threshold: float, seeds, conditions, limit: int | None = 30, tts: str = "kokoro",
          agent_tts: str = "espeak", out: str = "runs") -> dict:
    """{room: {seed: (point data, summary)}}, each point as the frontier measures one."""
    from fdenv_agents import make_agent

    from fdenv.train.frontier import CONDITIONS, run_point

    res: dict = {}
    for cond in conditions:
        for seed in seeds:
            agent = make_agent("turn_detector", checkpoint=checkpoint, threshold=threshold, tts=agent_tts,
                               group_checkpoint="words")
            p = run_point(agent, CONDITIONS[cond], ("pause", "turn_taking"), "test", limit, out,
                          {"profiles": ["paper"]}, tts=tts, seed=seed)
            res.setdefault(cond, {})[seed] = (p["data"], p["summary"])
    return res


def report(res: dict) -> list[str]:
    lines = ["| room | episode seed | pause TOR (scenes taken) | turn-taking TOR | median latency |",
             "|---|---|---|---|---|"]
    for cond, by_seed in res.items():
        for seed, (data, m) in by_seed.items():
            lines.append(f"| {cond} | {seed} | {m['pause_tor']['value']:.3f} ({', '.join(taken(data)) or 'none'}) | "
                         f"{m['turn_taking_tor']['value']:.3f} | {m['latency_median']['value']:.2f} s |")
    lines.append("")
    for cond, by_seed in res.items():
        tors = [m["pause_tor"]["value"] for _, m in by_seed.values()]
        lats = [m["latency_median"]["value"] for _, m in by_seed.values()]
        sets = [set(taken(d)) for d, _ in by_seed.values()]
        every, some = set.intersection(*sets), set.union(*sets)
        lines.append(f"{cond}: pause TOR {min(tors):.3f}-{max(tors):.3f}, median latency {min(lats):.2f}-"
                     f"{max(lats):.2f} s over {len(tors)} draws; pause scenes taken in every draw: "
                     f"{', '.join(sorted(every)) or 'none'}; in some: {', '.join(sorted(some - every)) or 'none'}")
    return lines


def main(argv=None) -> None:
    from fdenv.train.frontier import CONDITIONS

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", default="single_user", help="the turn detector's model (a shipped name or a file)")
    p.add_argument("--threshold", type=float, required=True, help="its threshold (its default, to judge the targets)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="episode seeds (0: the targets' runs)")
    p.add_argument("--conditions", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    p.add_argument("--limit", type=int, default=30, help="scenes per set (30: all of the test split's)")
    p.add_argument("--tts", default="kokoro", choices=["espeak", "kokoro"], help="the humans' voices")
    p.add_argument("--agent-tts", default="espeak", choices=["espeak", "kokoro"], help="the agent's voice")
    p.add_argument("--out", default="runs", help="run folders (reused when they exist)")
    args = p.parse_args(argv)
    res = draws(args.checkpoint, args.threshold, args.seeds, args.conditions, args.limit, args.tts, args.agent_tts,
                args.out)
    print("\n".join(report(res)))


if __name__ == "__main__":
    main()
