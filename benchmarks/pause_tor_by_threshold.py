"""Estimate, from one played pause run folder of a first-look turn detector, the pause TOR it would
have at other thresholds, to choose a frontier's points before playing them.

A first-look checkpoint decides each judged silence from one probability, kept in the episode's
``agent_stats["judged"]``; a pause episode is taken at threshold T when a probability judged before
the pause turn ends reaches T. An estimate, not a measure: once the agent has spoken, its later
silences can differ. The last column is the share of scene resamples (2,000, a scene's episodes
moving together, as the comparison resamples) in which the pause TOR lies above 0.10.

    python benchmarks/pause_tor_by_threshold.py RUN_FOLDER [--thresholds 0.1 0.5 0.9 0.98]
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

from fdenv.runs import read_config, read_episodes
from fdenv.score.stats import resample_counts


def first_look_before_pause_end(line: dict) -> float:
    """The highest probability judged before the episode's pause turn ends (0 when none was)."""
    end = max(t["end"] for t in line["timeline"] if t["label"] == "pause")
    return max((j["p"] for j in line["agent_stats"].get("judged", []) if j["t_s"] < end), default=0.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="a run folder of the pause set, played by a first-look turn detector")
    p.add_argument("--thresholds", type=float, nargs="+", default=[0.05, 0.1, 0.3, 0.5, 0.9, 0.95, 0.98])
    args = p.parse_args()
    lines = read_episodes(args.folder)
    if not lines or any(line.get("kind") != "pause" for line in lines):
        raise SystemExit(f"{args.folder}: expected a run folder of pause episodes")
    by_scene = defaultdict(list)
    for line in lines:
        by_scene[line["scene_id"]].append(first_look_before_pause_end(line))
    scenes = list(by_scene)
    played = read_config(args.folder)["agent"].get("threshold")
    taken = sum(bool(line["fdb"]["paper"]["to"]) for line in lines)
    estimated = sum(first_look_before_pause_end(line) >= played for line in lines)
    print(f"{args.folder}: {len(lines)} episodes, {len(scenes)} scenes, played at {played}: "
          f"{taken} taken, {estimated} estimated")
    draws = np.concatenate(list(resample_counts(len(scenes), 2000)))  # how often each scene is drawn
    print("threshold  pause TOR (estimated)  resamples above 0.10")
    for t in args.thresholds:
        per_scene = np.array([[p >= t for p in by_scene[s]] for s in scenes], dtype=float)
        counts, sizes = per_scene.sum(1), np.array([len(by_scene[s]) for s in scenes])
        tor = (draws @ counts) / (draws @ sizes)
        print(f"{t:9.3f}  {counts.sum() / sizes.sum():21.3f}  {np.mean(tor > 0.10):20.3f}")


if __name__ == "__main__":
    main()
