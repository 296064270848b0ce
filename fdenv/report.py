"""Run folders side by side: one compact table, one row per (run, dimension), each run labelled by
what differs between the runs (agent, its knobs, room, behaviour, tts, scoring).

Reads only run folders (``config.json`` + ``episodes.jsonl``); numbers come from
``fdenv.score.aggregate`` (bootstrap 95% intervals over scenes). ``result_rows`` gives the same
numbers as one row per (run, dimension, metric) for JSON and CSV.
"""

from __future__ import annotations

import json
from pathlib import Path

from .score import stats
from .score.summary import HEADLINE, MPE_HEADLINE

RUN_FOLDERS_FILE = "run_folders.json"  # what each fdenv-run job writes into its Hydra output folder


def find_run_folders(paths) -> list[Path]:
    """Run folders from what a user points at: a run folder (``config.json``), a Hydra output or
    multirun folder (the ``run_folders.json`` its jobs wrote), or a folder of run folders
    (``runs/``). Raises ``ValueError`` naming each path that holds none."""
    out: list[Path] = []
    bad = []
    for p in map(Path, paths):
        found = _run_folders_in(p)
        if not found:
            bad.append(str(p))
        out.extend(f for f in found if f not in out)
    if bad:
        raise ValueError(f"no run folders in {', '.join(bad)}: give run folders (with config.json), a folder of "
                         f"them (runs/), or an fdenv-run output or multirun folder (with {RUN_FOLDERS_FILE})")
    return out


def _run_folders_in(p: Path) -> list[Path]:
    if (p / "config.json").is_file() and (p / "episodes.jsonl").exists():
        return [p]
    if not p.is_dir():
        return []
    lists = sorted(p.glob(RUN_FOLDERS_FILE)) + sorted(p.glob(f"*/{RUN_FOLDERS_FILE}"), key=_job_number)
    if lists:
        out = []
        for f in lists:
            for name in json.loads(f.read_text(encoding="utf-8")):
                q = Path(name)
                if q not in out and (q / "config.json").is_file():
                    out.append(q)
        return out
    return sorted(q.parent for q in p.glob("*/config.json") if (q.parent / "episodes.jsonl").exists())


def _job_number(path: Path) -> int:
    return int(path.parent.name) if path.parent.name.isdigit() else 0


def run_summary(folder: str | Path, n_resamples: int = stats.N_RESAMPLES) -> dict:
    """Agent, scene set, configuration, warnings and the aggregate table of one run folder."""
    from .runs import read_episodes
    from .score import aggregate

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    lines = read_episodes(folder)
    fdb_lines = [ln for ln in lines if ln.get("fdb")]
    table = aggregate(fdb_lines, n_resamples=n_resamples) if fdb_lines else {"dimensions": {}}
    mpe = None
    if any(ln.get("mpe") for ln in lines):
        from .score.mpe_aggregate import aggregate_mpe

        mpe = aggregate_mpe([ln for ln in lines if ln.get("mpe")], n_resamples=n_resamples)
    overlap = None
    if any(ln.get("overlap") for ln in lines):
        from .score.overlap_aggregate import aggregate_overlap

        overlap = aggregate_overlap([ln for ln in lines if ln.get("overlap")], n_resamples=n_resamples)
    warned = [ln["scene_id"] for ln in lines if episode_warnings(ln)]
    return {"folder": str(folder), "key": folder.name, "agent": config["agent"]["name"],
            "set": config["scenes"].get("set"), "config": config, "label": config["agent"]["name"],
            "privileged": any(ln.get("privileged") for ln in lines), "episodes": len(lines),
            "warned": warned, "fdb": table, "mpe": mpe, "overlap": overlap}


def episode_warnings(line: dict) -> list[str]:
    """The scorers' warnings about one run-folder line (sound on the track but no speech found...)."""
    out = []
    for key in ("fdb", "mpe", "overlap"):
        for w in (line.get(key) or {}).get("warnings") or ():
            if w not in out:
                out.append(w)
    return out


# ---- labels: what differs between runs ---------------------------------------------------------

def _flat(d, prefix: str, out: dict) -> None:
    if isinstance(d, dict):
        for k, v in d.items():
            _flat(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = d


def facets(config: dict) -> dict[str, object]:
    """A run configuration as flat ``{facet: value}`` pairs that a label can name. Heads (``agent``,
    ``room``, ``behaviour``) come first; the keys below them (``agent.<knob>``, ``room.<field>``,
    ``behaviour.<knob>``) are shown only where the head does not already explain them."""
    out: dict[str, object] = {}
    agent = dict(config.get("agent") or {})
    out["agent"] = agent.pop("name", None)
    _flat(agent, "agent", out)
    env = config.get("env") or {}
    room = env.get("room") or {"preset": "anechoic"}
    out["room"] = room.get("preset", "custom") if isinstance(room, dict) else room
    _flat({k: v for k, v in room.items() if k != "preset"} if isinstance(room, dict) else {}, "room", out)
    sched = dict(env.get("scheduler") or {})
    out["behaviour"] = env.get("behaviour", sched.pop("profile", sched.pop("behaviour", None)))  # paper, natural
    _flat(sched, "behaviour", out)
    out["tts"] = env.get("tts")
    out["sample_rate"] = env.get("sample_rate")
    out["split"] = (config.get("scenes") or {}).get("split")
    scoring: dict = {}
    for wrapper in (config.get("scoring") or {}).values():  # FDBScore, MPEScore: one namespace
        flat: dict = {}
        _flat(wrapper, "scoring", flat)
        for k, v in flat.items():
            scoring.setdefault(k, v)
    out.update(scoring)
    return out


HEADS = ("agent", "room", "behaviour")


def run_labels(configs: list[dict]) -> list[str]:
    """One label per run: the agent's name and every facet whose value differs between the runs
    (``cascade endpoint_silence_ms=300 room=office``). Runs of one scene set that differ in nothing
    a label can name (fdenv's source, say) get their run key appended, so no two rows look alike."""
    fs = [facets(c) for c in configs]
    keys: list[str] = []
    for f in fs:
        keys.extend(k for k in f if k not in keys)

    def differs(k, runs):
        values = {json.dumps(f[k], sort_keys=True, default=str) for f in runs if k in f}
        return len(values) > 1

    shown = []
    for k in keys:
        head = k.split(".", 1)[0] if "." in k else None
        if head in HEADS:  # a knob: shown when it differs between runs that share the head's value
            groups: dict[str, list] = {}
            for f in fs:
                groups.setdefault(json.dumps(f.get(head), default=str), []).append(f)
            if any(differs(k, g) for g in groups.values()):
                shown.append(k)
        elif k != "agent" and differs(k, fs):
            shown.append(k)
    short = _short_names(shown)
    labels = []
    for f in fs:
        parts = [str(f.get("agent"))]
        parts += [f"{short[k]}={_value(f[k])}" for k in shown if k in f]
        labels.append(" ".join(parts))
    # Rows of runs over different scene sets differ by their dimension; within one set, a label
    # that two runs share gets the run key.
    sets = [json.dumps((c.get("scenes") or {}).get("set")) for c in configs]
    pairs = list(zip(labels, sets))
    return [f"{lab} [{c['_key']}]" if pairs.count((lab, st)) > 1 and c.get("_key") else lab
            for lab, st, c in zip(labels, sets, configs)]


def _short_names(keys: list[str]) -> dict[str, str]:
    """The last part of each dotted key (``endpoint_silence_ms``), longer where that is ambiguous."""
    out = {}
    for k in keys:
        parts = k.split(".")
        if parts[0] == "agent" and len(parts) > 1:
            parts = parts[1:]  # an agent's knob goes by its own name
        for n in range(1, len(parts) + 1):
            name = ".".join(parts[-n:])
            if sum(1 for o in keys if o.endswith(name)) == 1 or n == len(parts):
                out[k] = name
                break
    return out


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def label_runs(summaries: list[dict]) -> list[dict]:
    """Sets each summary's ``label`` (see ``run_labels``); returns the summaries."""
    configs = [{**s["config"], "_key": s["key"]} for s in summaries]
    for s, label in zip(summaries, run_labels(configs)):
        s["label"] = label + (" *" if s["privileged"] else "")
    return summaries


# ---- the table ---------------------------------------------------------------------------------

def _cell(e: dict | None) -> str:
    if e and e.get("reported") is False:  # MPE's yield: a rate only from 30 eligible events on
        return f"- ({e.get('eligible', 0)} eligible < 30)"
    if not e or e.get("value") is None:
        return "-"
    v, lo, hi = e["value"], e.get("lo"), e.get("hi")
    if lo is None or hi is None or lo == hi:
        return f"{v:.2f}"
    return f"{v:.2f} [{lo:.2f},{hi:.2f}]"


WARNING_NOTE = ("! episodes whose assistant track holds sound where the VAD found no speech (a tone, noise or "
                "clipped audio?): scored as silence there")


def format_runs(summaries: list[dict]) -> str:
    """One row per (run, dimension); the paper profile, with 95% bootstrap intervals."""
    label_runs(summaries)
    rows = [("run", "dimension", "n", "metrics (paper profile, 95% CI over scenes)")]
    for s in summaries:
        name = s["label"]
        flag = f"   ! {len(s['warned'])} with sound but no speech" if s.get("warned") else ""
        for dim, entry in s["fdb"].get("dimensions", {}).items():
            metrics = entry.get("paper", {})
            cells = [f"{label} {_cell(metrics.get(key))}" for key, label in HEADLINE.get(dim, [])]
            cov = metrics.get("relevance_coverage")
            if cov and cov.get("eligible"):
                cells.append(_coverage(cov["answered"], cov["eligible"], cov.get("missing")))
            rows.append((name, dim, str(entry["n"]), "   ".join(cells) + flag))
        if s.get("mpe"):
            both = s["mpe"]["conditions"].get("all", {})
            cells = [f"{label} {_cell(both.get(key))}" for key, label in MPE_HEADLINE]
            cov = s["mpe"].get("coverage", {}).get("all") or next(iter(s["mpe"].get("coverage", {}).values()), None)
            if cov and cov["accuracy"]["of"]:
                cells.append(_coverage(cov["accuracy"]["judged"], cov["accuracy"]["of"], cov.get("missing")))
            rows.append((name, "multi-party", str(s["mpe"]["n_episodes"]), "   ".join(cells) + flag))
        rows += _overlap_rows(name, s.get("overlap"), flag)
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    out = []
    for i, r in enumerate(rows):
        out.append("  ".join(r[c].ljust(widths[c]) for c in range(3)) + "  " + r[3])
        if i == 0:
            out.append("-" * (sum(widths) + 6 + max(len(x[3]) for x in rows)))
    if any(s["privileged"] for s in summaries):
        out.append("* privileged agent (saw the scene and the labels): an upper bound, not a model")
    if any(s.get("warned") for s in summaries):
        out.append(WARNING_NOTE)
    return "\n".join(out)


def format_overlap(table: dict) -> str:
    """An overlap table (``aggregate_overlap``) as text: one row for all events, one per kind."""
    rows = [("dimension", "n", "metrics (paper profile, 95% CI over scenes)")]
    rows += [r[1:] for r in _overlap_rows("", table, "")]
    width = [max(len(r[i]) for r in rows) for i in range(2)]
    return "\n".join(f"{r[0].ljust(width[0])}  {r[1].ljust(width[1])}  {r[2]}" for r in rows)


def _overlap_rows(name: str, table: dict | None, flag: str) -> list[tuple]:
    """``overlap`` (all four events) and one row per event kind."""
    from .score.overlap_aggregate import HEADLINE as OVERLAP_HEADLINE

    rows = []
    for kind, e in ((table or {}).get("events") or {}).items():
        # latencies only for interruptions (after a hold event "stop s" is the rest of the answer); held not for them
        keys = {"all": ("met_speaking", "right", "held"), "interruption": ("met_speaking", "right", "stop_latency_s",
                                                                          "response_latency_s")}
        keep = keys.get(kind, ("met_speaking", "right", "held"))
        cells = [f"{label} {_cell(e.get(key))}" for key, label in OVERLAP_HEADLINE if key in keep]
        cov = e.get("coverage") or {}
        if cov.get("of"):
            cells.append(_coverage(cov["judged"], cov["of"], cov.get("missing")))
        rows.append((name, "overlap" if kind == "all" else f"overlap:{kind}", str(e["n"]), "   ".join(cells) + flag))
    return rows


def _coverage(judged: int, of: int, missing: dict | None) -> str:
    """How many verdicts the judge gave, and why the others are missing (SPEC 8)."""
    why = "; ".join(f"{n} x {reason}" for reason, n in sorted((missing or {}).items()))
    return f"judged {judged}/{of}" + (f" (missing: {why})" if why else "")


def print_runs(folders: list[str | Path]) -> None:
    print(format_runs([run_summary(f) for f in folders]))


# ---- one row per (run, dimension, metric): JSON and CSV ----------------------------------------

ROW_FIELDS = ("run", "label", "agent", "privileged", "set", "dimension", "profile", "condition", "metric",
              "value", "lo", "hi", "n", "n_scenes", "warned_episodes")


def result_rows(summaries: list[dict]) -> list[dict]:
    """Every estimate of every run as a flat row (``ROW_FIELDS``): FDB rows name their profile,
    multi-party rows their condition (``all``, ``explicit``, ``implicit``)."""
    label_runs(summaries)
    rows = []
    for s in summaries:
        base = {"run": s["key"], "label": s["label"].removesuffix(" *"), "agent": s["agent"],
                "privileged": s["privileged"], "set": s["set"], "warned_episodes": len(s.get("warned") or ())}
        for dim, entry in s["fdb"].get("dimensions", {}).items():
            for prof in ("paper", "fdb_code"):
                for metric, e in (entry.get(prof) or {}).items():
                    if isinstance(e, dict) and "value" in e:
                        rows.append(_row(base, dim, prof, "", metric, e, e.get("n_groups")))
        for cond, rates in ((s.get("mpe") or {}).get("conditions") or {}).items():
            for metric, e in rates.items():
                if isinstance(e, dict) and "value" in e:
                    rows.append(_row(base, "multi-party", "", cond, metric, e, e.get("n_groups")))
        for kind, entry in ((s.get("overlap") or {}).get("events") or {}).items():
            flat = {**{k: v for k, v in entry.items() if k != "categories"}, **(entry.get("categories") or {})}
            for metric, e in flat.items():
                if isinstance(e, dict) and "value" in e:
                    rows.append(_row(base, "overlap", "paper", kind, metric, e, e.get("n_groups")))
    return rows


def _row(base, dim, prof, cond, metric, e, n_scenes) -> dict:
    return {**base, "dimension": dim, "profile": prof, "condition": cond, "metric": metric, "value": e.get("value"),
            "lo": e.get("lo"), "hi": e.get("hi"), "n": e.get("n"), "n_scenes": n_scenes}


def write_json(summaries: list[dict], path: str | Path) -> Path:
    path = Path(path)
    path.write_text(json.dumps(result_rows(summaries), indent=1) + "\n", encoding="utf-8")
    return path


def write_csv(summaries: list[dict], path: str | Path) -> Path:
    import csv

    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=ROW_FIELDS)
        w.writeheader()
        w.writerows(result_rows(summaries))
    return path
