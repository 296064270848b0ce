"""A learned policy against a baseline agent on the scored test split (the comparison docs/training.md reports).

Both agents run through ``fdenv.run.run`` (scored run folders, resumable), and the table compares
the episode-end measures, paired by scene (FDB) or by pair id (MPE), with
``fdenv.score.stats.bootstrap_diff`` (10,000 resamples, 95% percentile interval of policy minus
baseline):

- pause handling TOR (``paper`` profile; lower is better),
- turn-taking TOR (``paper``; higher is better: the assistant takes the turn),
- MPE silence preservation (windows preserved / windows; higher is better),
- MPE fresh-onset rate (fresh onsets / requests; higher is better),

and, for context, pause / turn-taking TOR under ``fdb_code`` and turn-taking latency.

    python -m fdenv.cli.compare --policy outputs/train/.../best.pt --report docs/compare.md

``python -m fdenv.cli.compare frontier ...`` sweeps operating points instead
(``fdenv.train.frontier``): the policy's speak threshold and the cascade's endpointing silence,
latency against pause TOR and MPE silence, in three room conditions, with a plot per condition.
"""

from __future__ import annotations

from pathlib import Path

from ..score import stats
from ..sim.behaviour import DEFAULT_PROFILE

# (key, label, source, better, criterion): "beat" = the interval of the difference excludes 0 in
# the better direction; "margin" = the point difference is no worse than 0.05 the wrong way.
CRITERIA = (
    ("pause_tor", "Pause handling TOR (paper)", "lower", "beat"),
    ("mpe_silence", "MPE silence preservation", "higher", "beat"),
    ("turn_taking_tor", "Turn-taking TOR (paper)", "higher", "margin"),
    ("mpe_fresh_onset", "MPE fresh-onset rate", "higher", "margin"),
)
CONTEXT = (
    ("pause_tor_fdb_code", "Pause handling TOR (fdb_code)", "lower"),
    ("turn_taking_tor_fdb_code", "Turn-taking TOR (fdb_code)", "higher"),
    ("turn_taking_latency", "Turn-taking latency, s (paper, TO = 1)", "lower"),
    ("mpe_presence", "MPE response presence", "higher"),
)
MARGIN = 0.05


def observations(lines: list[dict]) -> dict[str, tuple[list, list]]:
    """Per metric: (values, groups) from run-folder lines. FDB values per episode, grouped by
    scene; MPE values per window / request (0 or 1), grouped by pair id."""
    out: dict[str, tuple[list, list]] = {}

    def add(key, value, group):
        v, g = out.setdefault(key, ([], []))
        v.append(value)
        g.append(group)

    for line in lines:
        fdb = line.get("fdb")
        if fdb:
            dim, sid = fdb.get("dimension"), line["scene_id"]
            paper, code = fdb.get("paper") or {}, fdb.get("fdb_code") or {}
            if dim == "pause_handling":
                add("pause_tor", paper.get("to"), sid)
                add("pause_tor_fdb_code", code.get("to"), sid)
            elif dim == "turn_taking":
                add("turn_taking_tor", paper.get("to"), sid)
                add("turn_taking_tor_fdb_code", code.get("to"), sid)
                if paper.get("to") == 1:
                    add("turn_taking_latency", paper.get("latency_s"), sid)
        mpe = line.get("mpe")
        if mpe:
            group = line.get("pair_id") or line["scene_id"]
            # silence: windows with a verdict (``silence_judged``; the offline judge judges all)
            silence_den = "silence_judged" if mpe.get("silence_judged") is not None else "silence_windows"
            for key, num, den in (("mpe_silence", "silence_preserved", silence_den),
                                  ("mpe_fresh_onset", "fresh_onset", "requests"),
                                  ("mpe_presence", "presence", "requests")):
                n, d = int(mpe.get(num) or 0), int(mpe.get(den) or 0)
                for i in range(d):
                    add(key, 1.0 if i < n else 0.0, group)
    return out


def compare_lines(policy_lines: list[dict], baseline_lines: list[dict]) -> dict:
    """Per metric: the baseline's and the policy's means (with intervals), the paired difference
    policy - baseline, and whether the criterion holds."""
    a, b = observations(baseline_lines), observations(policy_lines)
    table = {}
    rows = [(k, label, better, crit) for k, label, better, crit in CRITERIA]
    rows += [(k, label, better, None) for k, label, better in CONTEXT]
    for key, label, better, crit in rows:
        if key not in a or key not in b:
            table[key] = {"label": label, "missing": True, "criterion": crit}
            continue
        base = stats.bootstrap_mean(*a[key]).as_dict()
        pol = stats.bootstrap_mean(*b[key]).as_dict()
        diff = stats.bootstrap_diff(a[key][0], a[key][1], b[key][0], b[key][1]).as_dict()
        sign = 1.0 if better == "higher" else -1.0
        ok = None
        if crit == "beat" and diff["lo"] is not None:
            ok = bool(diff["lo"] > 0) if sign > 0 else bool(diff["hi"] < 0)
        elif crit == "margin" and diff["value"] is not None:
            ok = bool(sign * diff["value"] >= -MARGIN - 1e-12)
        table[key] = {"label": label, "better": better, "criterion": crit, "baseline": base, "policy": pol,
                      "diff": diff, "ok": ok}
    return table


def markdown(table: dict, policy_name: str = "policy", baseline_name: str = "cascade (defaults)") -> str:
    def est(e):
        if e is None or e.get("value") is None:
            return "-"
        return f"{e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}]"

    crit_text = {"beat": "beat (95% CI of the difference excludes 0)", "margin": f"no worse than {MARGIN} below",
                 None: "context"}
    lines = [f"| measure | better | {baseline_name} | {policy_name} | difference (policy - baseline) | criterion | met |",
             "|---|---|---|---|---|---|---|"]
    for key, row in table.items():
        if row.get("missing"):
            lines.append(f"| {row['label']} | | not scored | not scored | - | {crit_text[row['criterion']]} | - |")
            continue
        met = "-" if row["ok"] is None else ("yes" if row["ok"] else "**no**")
        n = f" (n={row['diff']['n_groups']} groups)" if row["diff"].get("n_groups") else ""
        lines.append(f"| {row['label']} | {row['better']} | {est(row['baseline'])} | {est(row['policy'])} | "
                     f"{est(row['diff'])}{n} | {crit_text[row['criterion']]} | {met} |")
    return "\n".join(lines)


def with_mpe(folder, lines: list[dict], scoring: dict | None = None) -> list[dict]:
    """Run lines with ``mpe`` counts: MPE episodes that the run did not score (no ``MPEScore``
    wrapper in the runner) are scored from their saved records with ``fdenv.score.mpe``."""
    todo = [ln for ln in lines if ln.get("kind") == "mpe" and not ln.get("mpe")]
    if not todo:
        return lines
    from ..record import EpisodeRecord
    from ..score.mpe import MPEScorer

    sc = dict(scoring or {})
    scorer = MPEScorer(asr=sc.get("asr", "tiny.en"), judge=sc.get("judge", "offline"),
                       min_speech_ms=sc.get("min_speech_ms", 250))
    out = []
    for ln in lines:
        if ln in todo:
            ln = dict(ln, mpe=scorer.score(EpisodeRecord.load(Path(folder) / ln["record"])))
        out.append(ln)
    return out


def run_agent(agent, sets, split: str, seeds, out, scoring: dict | None = None, progress: bool = True,
              **env_kwargs) -> list[Path]:
    from ..run import run

    return [run(agent, scene_set=s, split=split, seeds=list(seeds), out=out, scoring=scoring, progress=progress,
                **env_kwargs) for s in sets]


def compare(policy_checkpoint: str | Path, baseline: str = "cascade", baseline_kwargs: dict | None = None,
            sets=("pause", "turn_taking", "mpe"), split: str = "test", seeds=(0,), out: str | Path = "runs",
            scoring: dict | None = None, policy_kwargs: dict | None = None, progress: bool = True, *,
            make_agent, room=None, policy_agent: str = "policy", behaviour: str = DEFAULT_PROFILE) -> dict:
    """Run both agents (or reuse their run folders) and compare them. Returns ``{"table",
    "markdown", "folders"}``. ``make_agent(name, **kwargs)`` builds an agent
    (``fdenv_agents.make_agent``; the command line passes it: only it imports the agents).
    ``policy_agent``: the learned agent, ``"policy"`` (the GRU of ``fdenv-train``) or
    ``"turn_detector"``; ``policy_checkpoint``: its checkpoint (None: its shipped one).
    ``room``: the runs' room (SPEC 4; default none). ``behaviour``: the humans' behaviour profile.
    A baseline ``policy`` with its own ``checkpoint`` in ``baseline_kwargs`` compares two
    checkpoints (e.g. cloning against PPO)."""
    from ..runs import read_episodes

    pol = make_agent(policy_agent, checkpoint=None if policy_checkpoint is None else str(policy_checkpoint),
                     **dict(policy_kwargs or {}))
    base = make_agent(baseline, **dict(baseline_kwargs or {}))
    folders = {}
    for name, agent in (("baseline", base), ("policy", pol)):
        folders[name] = run_agent(agent, sets, split, seeds, out, scoring=scoring, progress=progress, room=room,
                                  behaviour=behaviour)
    lines = {k: [ln for f in v for ln in with_mpe(f, read_episodes(f), scoring)] for k, v in folders.items()}
    table = compare_lines(lines["policy"], lines["baseline"])
    return {"table": table, "markdown": markdown(table, baseline_name=f"{baseline} (defaults)"
                                                 if not baseline_kwargs else baseline),
            "folders": {k: [str(f) for f in v] for k, v in folders.items()}}
