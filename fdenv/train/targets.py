"""The targets a when-to-speak agent is held to on the test split, judged from frontier reports.

A frontier report (``python -m fdenv.cli.compare frontier --report r.md`` writes ``r.json``) holds,
per room condition, the swept agent's points and the cascade's. At the agent's default threshold
it must take at most 10 % of the pauses, answer at least 95 % of the turns, leave at least 95 % of
other people's multi-party turns alone, and answer within a median 0.5 s in the quiet room and
0.7 s in the noisy ones; along its frontier, its median latency at pause TOR 0.10 must be below the
cascade's, the 95 % interval of the difference excluding 0 in at least 95 % of the resamples
(``fdenv.train.frontier.latency_at_tor``).

Each verdict is ``"met"`` when the whole 95 % interval is on the target's side, ``"point"`` when
the estimate is but the interval reaches past the target, ``"not met"`` when the estimate is not,
and ``"-"`` when the report does not measure it (the latency comparison has no ``"point"``: it is
shown or not).

    python -m fdenv.cli.compare targets --frontier runs/f.json --threshold 0.93 --mpe runs/mpe.json
    python -m fdenv.cli.compare targets --frontier runs/f.json runs/f_094.json --threshold 0.94

Several frontier reports of the same agent are merged first (``fdenv.train.frontier.merge``), so
that a default moved to a new threshold is judged against the cascade without a new sweep.
"""

from __future__ import annotations

import math

from .frontier import TARGET_TOR

PAUSE_TOR_MAX = TARGET_TOR
TURN_TAKING_TOR_MIN = 0.95
MPE_SILENCE_MIN = 0.95
LATENCY_MEDIAN_MAX = {"anechoic": 0.5, "office_noise_echo": 0.7, "car_cabin": 0.7}  # quiet room, noisy rooms


def default_point(cond: dict, threshold: float, where: str) -> dict:
    """The swept agent's point at ``threshold`` in one condition of a report."""
    for p in cond["policy"]:
        if math.isclose(p["setting"].get("threshold", math.nan), threshold, abs_tol=1e-9):
            return p
    have = sorted(p["setting"].get("threshold") for p in cond["policy"])
    raise ValueError(f"{where}: no point at threshold {threshold}; the report has {have}. Give one of those, or "
                     f"run the frontier with --thresholds {threshold}")


def verdict(estimate: dict | None, bound: float, side: str) -> str:
    """``side="max"``: the measure must be at most ``bound``; ``"min"``: at least."""
    if not estimate or estimate.get("value") is None:
        return "-"
    ok = (lambda x: x <= bound + 1e-12) if side == "max" else (lambda x: x >= bound - 1e-12)
    if not ok(estimate["value"]):
        return "not met"
    far = estimate.get("hi") if side == "max" else estimate.get("lo")
    return "met" if far is not None and ok(far) else "point"


def judge(report: dict, threshold: float, mpe_report: dict | None = None, mpe_threshold: float | None = None) -> dict:
    """Per condition of ``report``: each target's estimate and verdict at the default ``threshold``.
    ``mpe_report``: a second report whose points measure MPE silence (the slow set, often run
    apart), read at ``mpe_threshold`` (default ``threshold``) in the same condition."""
    mpe_threshold = threshold if mpe_threshold is None else mpe_threshold
    out = {}
    for name, cond in report.items():
        if name not in LATENCY_MEDIAN_MAX:
            raise ValueError(f"condition {name!r}: the targets are set for {list(LATENCY_MEDIAN_MAX)}")
        lat_max = LATENCY_MEDIAN_MAX[name]
        s = default_point(cond, threshold, f"condition {name!r}")["summary"]
        mpe = s.get("mpe_silence")
        if mpe_report is not None and name in mpe_report:
            mpe = default_point(mpe_report[name], mpe_threshold,
                                f"MPE report, condition {name!r}")["summary"].get("mpe_silence")
        at = cond.get("at_tor") or {}
        diff = at.get("diff") or {}
        shown = at.get("policy_faster")
        out[name] = {
            "pause_tor": (s.get("pause_tor"), verdict(s.get("pause_tor"), PAUSE_TOR_MAX, "max")),
            "turn_taking_tor": (s.get("turn_taking_tor"),
                                verdict(s.get("turn_taking_tor"), TURN_TAKING_TOR_MIN, "min")),
            "latency_median": (s.get("latency_median"), verdict(s.get("latency_median"), lat_max, "max")),
            "mpe_silence": (mpe, verdict(mpe, MPE_SILENCE_MIN, "min")),
            # measured whenever the cascade ran; a frontier that never reaches pause TOR 0.10 is not shown faster
            "faster_than_cascade": (diff or None, "-" if not cond.get("cascade") else ("met" if shown else "not met")),
        }
    return out


def all_met(judged: dict, strict: bool = False) -> bool:
    """Whether every target of every condition is met (``strict``: by its whole interval), none
    left unmeasured."""
    good = {"met"} if strict else {"met", "point"}
    return all(v in good for cond in judged.values() for _, v in cond.values())


SECONDS = ("latency_median", "faster_than_cascade")
HEAD = ("pause TOR <= 0.10", "turn-taking TOR >= 0.95", "median latency <= 0.5 / 0.7 s", "MPE silence >= 0.95",
        "latency at pause TOR 0.10 - cascade's < 0")


def markdown(judged: dict, label: str = "") -> str:
    lines = ["| condition | " + " | ".join(HEAD) + " |", "|---|" + "---|" * len(HEAD)]
    for name, cond in judged.items():
        cells = []
        for key, (est, v) in cond.items():
            if not est or est.get("value") is None:
                cells.append("-" if v == "-" else f"not reached: **{v}**")
                continue
            f = ".2f" if key in SECONDS else ".3f"
            span = f" [{est['lo']:{f}}, {est['hi']:{f}}]" if est.get("lo") is not None else ""
            shared = key == "faster_than_cascade" and "defined_share" in est
            defined = f", defined {est['defined_share']:.1%}" if shared else ""
            cells.append(f"{est['value']:{f}}{span}{defined}: {'**' + v + '**' if v == 'not met' else v}")
        lines.append(f"| {label + ', ' if label else ''}{name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
