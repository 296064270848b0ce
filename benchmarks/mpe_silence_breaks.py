"""Why an agent broke MPE silence windows: per run folder, the broken windows (the assistant spoke
where another person's turn was not for it) by when its speech began and what started it.

    python benchmarks/mpe_silence_breaks.py runs/<run folder of an MPE run> [more folders]

For each broken window, the first intrusion (the agent's speech inside the window) is classed by
two questions: did that speech begin before the window opened (an answer to an earlier turn still
playing) or inside it; and was it an early answer of the ``turn_detector``'s model (its
``stats()["judged"]`` holds an answer within 0.3 s of the intrusion's start) or not (the cascade's
endpoint or the detector's fallback, a backchannel, anything else). Reads the run's
``episodes.jsonl``; runs nothing.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

MATCH_S = 0.3  # an early answer and the speech it started are this close


def early_answer_times(agent_stats: dict) -> list[float]:
    """When the turn detector's model answered early (episode seconds), from its judged silences."""
    out = []
    for d in agent_stats.get("judged") or []:
        if d.get("answered_after_s") is not None:
            out.append(float(d["t_s"]) - float(d["silence_s"]) + float(d["answered_after_s"]))
    return out


def classify(episode: dict) -> collections.Counter:
    """The episode's broken MPE silence windows by (began, cause)."""
    out: collections.Counter = collections.Counter()
    windows = ((episode.get("mpe") or {}).get("details") or {}).get("silence") or []
    early = early_answer_times(episode.get("agent_stats") or {})
    for w in windows:
        if w.get("preserved") is not False:
            continue
        if not w.get("intrusions"):
            out[("no intrusion recorded", "-")] += 1
            continue
        start = float(w["intrusions"][0][0])
        began = "before the window opened" if start < float(w["window"][0]) else "inside the window"
        cause = "early answer" if any(abs(t - start) <= MATCH_S for t in early) else "endpoint, fallback or other"
        out[(began, cause)] += 1
    return out


def summarise(folder: Path) -> tuple[int, int, collections.Counter]:
    """(judged windows, broken windows, broken by class) of one run folder."""
    from fdenv.runs import EPISODES, read_episodes  # the runner's own reader (a torn last line is skipped)
    from fdenv.train.frontier import point_data  # the frontier's count of judged windows, per pair

    if not (folder / EPISODES).is_file():
        raise SystemExit(f"{folder}: no {EPISODES}; give a run folder of an MPE run")
    episodes = read_episodes(folder)
    judged = sum(w for _, w in point_data(episodes)["silence"].values())
    counts: collections.Counter = collections.Counter()
    for ep in episodes:
        counts.update(classify(ep))
    return judged, sum(counts.values()), counts


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", type=Path, help="run folders of MPE runs")
    args = p.parse_args(argv)
    for folder in args.folders:
        judged, broken, counts = summarise(folder)
        print(f"{folder}: {broken} of {judged} judged silence windows broken")
        for (began, cause), n in sorted(counts.items(), key=lambda kv: -kv[1]):
            print(f"  {n:4d}  began {began}, {cause}")


if __name__ == "__main__":
    main()
