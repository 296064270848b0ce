"""Barge-in in noise and echo: does a user who talks over the cascade's answer stop it, and does
the cascade never stop for its own echo?

    python benchmarks/bench_barge_in.py [--limit 30] [--agent turn_detector] [--out runs/bench_barge_in]
        [--parts interruption echo] [--rooms car office ...]

Two parts, each a run per room on the test split (natural humans, espeak's voices, Whisper
tiny.en; the cascade's echo canceller and double-talk gate, ``agents/cascade/echo.py``):

1. **Interruption scenes** (FDB's user interruption: the user talks over the answer). Per room:
   the scenes in which the agent was speaking when the interruption began, the share of those
   it stopped for (FDB's paper profile: it did not go on talking through the interruption), and
   the stop latency (onset of the interruption to the end of the speech under way), median and
   90th percentile (numpy's linear interpolation, as the project's reports take quantiles).
2. **Turn-taking scenes with loud echo** (echo gain 1, in road and ventilation noise): barge-ins
   in episodes where no person spoke over the agent's speech, i.e. it stopped for its own echo.

Reads nothing but the run folders it writes (reused when they exist: the runner's own keys).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fdenv.score.stats import bootstrap_quantile
from fdenv.train.frontier import CONDITIONS  # the rooms the training docs measure in

INTERRUPTION_ROOMS = {
    "anechoic": CONDITIONS["anechoic"],
    "office + pink 25 dB + echo 0.5": CONDITIONS["office_noise_echo"],
    "car cabin": CONDITIONS["car_cabin"],
    "kitchen": "kitchen",
}
ECHO_ROOMS = {
    "car cabin + echo 1": {"preset": "car_cabin", "echo_gain": 1.0},
    "kitchen + echo 1": {"preset": "kitchen", "echo_gain": 1.0},
    "office + pink 25 dB + echo 0.5": CONDITIONS["office_noise_echo"],
}


def _speech(ep: dict) -> list[tuple[float, float]]:
    """The agent's speech segments (the paper profile's voice-activity segments)."""
    for profiles in (ep.get("segments") or {}).values():
        paper = profiles.get("paper") if isinstance(profiles, dict) else None
        if paper and "segments" in paper:
            return [(float(s), float(e)) for s, e in paper["segments"]]
    return []


def talked_over(ep: dict) -> float:
    """Seconds in which a person spoke while the agent did (turns of the played timeline)."""
    people = [(float(t["start"]), float(t["end"])) for t in ep.get("timeline") or []]
    return sum(max(0.0, min(e, pe) - max(s, ps)) for s, e in _speech(ep) for ps, pe in people)


def interruption_summary(episodes: list[dict]) -> dict:
    met = [ep["fdb"]["paper"] for ep in episodes if (ep.get("fdb") or {}).get("paper", {}).get("spoke_at_interrupt")]
    stopped = [f for f in met if not f.get("did_not_stop")]
    lat = [f["stop_latency_s"] for f in stopped if f.get("stop_latency_s") is not None]
    return {"scenes": len(episodes), "speaking": len(met), "stopped": len(stopped),
            "barge_ins": sum(int((ep.get("agent_stats") or {}).get("barge_ins", 0)) for ep in episodes),
            "stop_median_s": bootstrap_quantile(lat, q=0.5).value,
            "stop_p90_s": bootstrap_quantile(lat, q=0.9).value}


def echo_summary(episodes: list[dict]) -> dict:
    barge = [int((ep.get("agent_stats") or {}).get("barge_ins", 0)) for ep in episodes]
    own = sum(b for b, ep in zip(barge, episodes) if b and talked_over(ep) == 0.0)
    return {"scenes": len(episodes), "answers": sum(int((ep.get("agent_stats") or {}).get("responses", 0))
                                                     for ep in episodes),
            "barge_ins": sum(barge), "with_no_one_talking_over": own}


def _fmt(x, unit="") -> str:
    return "-" if x is None else f"{x:.2f}{unit}"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=30, help="scenes per set and room (default 30)")
    p.add_argument("--agent", default="turn_detector", help="a cascade-based agent (default turn_detector)")
    p.add_argument("--out", default="runs/bench_barge_in", help="run folders (reused when they exist)")
    p.add_argument("--parts", nargs="+", choices=("interruption", "echo"), default=["interruption", "echo"])
    p.add_argument("--rooms", nargs="+", default=None,
                   help="only the rooms whose names contain one of these words (default: all)")
    args = p.parse_args(argv)

    def chosen(rooms: dict) -> dict:
        return {n: r for n, r in rooms.items() if not args.rooms or any(w in n for w in args.rooms)}
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from fdenv.run import run
    from fdenv.runs import read_episodes
    from fdenv_agents import make_agent

    def episodes(scene_set, room):
        folder = run(make_agent(args.agent), scene_set=scene_set, split="test", limit=args.limit, out=args.out,
                     room=room, progress=False)
        return read_episodes(Path(folder))

    if "interruption" in args.parts:
        print(f"interruption test scenes ({args.agent}, first {args.limit}): speaking when interrupted / stopped "
              "for it / stop latency median, p90")
        for name, room in chosen(INTERRUPTION_ROOMS).items():
            s = interruption_summary(episodes("interruption", room))
            print(f"  {name:32s} {s['speaking']:3d} / {s['stopped']:3d} ({s['barge_ins']} barge-ins)   "
                  f"{_fmt(s['stop_median_s'], ' s')}, {_fmt(s['stop_p90_s'], ' s')}", flush=True)
    if "echo" in args.parts:
        print(f"turn-taking test scenes with echo ({args.agent}, first {args.limit}): answers / barge-ins / "
              "barge-ins with no one talking over it")
        for name, room in chosen(ECHO_ROOMS).items():
            s = echo_summary(episodes("turn_taking", room))
            print(f"  {name:32s} {s['answers']:3d} / {s['barge_ins']:3d} / {s['with_no_one_talking_over']:3d}",
                  flush=True)


if __name__ == "__main__":
    main()
