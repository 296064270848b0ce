"""Operating-point frontiers: latency against pause take-overs and MPE silence, for a learned
policy (a sweep of its speak threshold) and the cascade (a sweep of ``endpoint_silence_ms``).

One point = one agent setting run through ``fdenv.run.run`` (scored run folders, resumable) on the
pause, turn-taking and MPE scenes of a split in one room condition. Per point: pause TOR (paper),
turn-taking TOR, median and 90th-percentile turn-taking latency (paper, episodes with TO = 1) and
MPE silence preservation, each with a 95 % bootstrap interval over scenes (MPE: over pairs).

``latency_at_tor`` reads a frontier at one pause TOR (0.10 by default): the median latency
interpolated linearly between the two points whose pause TORs bracket it. Its interval, and the
interval of the policy-minus-cascade difference, come from resampling scenes (the same resample
for every point of a frontier, and for both agents: they ran the same scenes).

    python -m fdenv.cli.compare frontier --policy best.pt --conditions anechoic car_cabin --limit 8
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..score import stats
from ..sim.behaviour import DEFAULT_PROFILE

# The three conditions of the comparison (SPEC 4 room configs).
CONDITIONS = {
    "anechoic": None,
    "office_noise_echo": {"preset": "office", "noise": "pink", "snr_db": 25.0, "echo_gain": 0.5},
    "car_cabin": "car_cabin",
}
THRESHOLDS = (0.1, 0.3, 0.5, 0.7, 0.9)
ENDPOINTS_MS = (200, 500, 1000, 1500, 2000)
SETS = ("pause", "turn_taking", "mpe")
TARGET_TOR = 0.10


EPISODE_MARK = "@"  # an episode's key, when a point holds several per scene: "<scene id>@<seed>"


def scene_of(key: str) -> str:
    """The scene an episode's key in ``point_data`` belongs to (the key itself with one episode
    per scene): what the bootstrap resamples, so that a scene's episodes move together."""
    return key.split(EPISODE_MARK)[0]


def point_data(lines: list[dict]) -> dict:
    """Per-episode values of one run: ``pause`` {key: TO}, ``latency`` {key: s} (TO = 1), ``tt``
    {key: TO}, ``silence`` {pair: (preserved, windows)}, summed over the pair's episodes. A key is
    the scene id, or with several episodes of a scene (seeds) ``"<scene id>@<seed>"``."""
    out = {"pause": {}, "latency": {}, "tt": {}, "silence": {}}
    fdb_lines = [ln["scene_id"] for ln in lines if ln.get("fdb")]
    several = len(fdb_lines) > len(set(fdb_lines))
    for ln in lines:
        fdb, mpe = ln.get("fdb"), ln.get("mpe")
        if fdb:
            paper = fdb.get("paper") or {}
            sid = f"{ln['scene_id']}{EPISODE_MARK}{ln['seed']}" if several else ln["scene_id"]
            if fdb.get("dimension") == "pause_handling" and paper.get("to") is not None:
                out["pause"][sid] = float(paper["to"])
            elif fdb.get("dimension") == "turn_taking" and paper.get("to") is not None:
                out["tt"][sid] = float(paper["to"])
                if paper["to"] == 1 and paper.get("latency_s") is not None:
                    out["latency"][sid] = float(paper["latency_s"])
        if mpe:
            group = ln.get("pair_id") or ln["scene_id"]
            den = mpe.get("silence_judged") if mpe.get("silence_judged") is not None else mpe.get("silence_windows")
            p, w = out["silence"].get(group, (0, 0))
            out["silence"][group] = (p + int(mpe.get("silence_preserved") or 0), w + int(den or 0))
    return out


def summarise(data: dict) -> dict:
    """A point's measures with 95 % intervals from resampling scenes (each with all its episodes)."""
    def est(e):
        return e.as_dict()

    def scenes(values: dict) -> list[str]:
        return [scene_of(k) for k in values]

    pause, tt, lat = data["pause"], data["tt"], data["latency"]
    sil = data["silence"]
    out = {
        "pause_tor": est(stats.bootstrap_mean(list(pause.values()), scenes(pause))),
        "turn_taking_tor": est(stats.bootstrap_mean(list(tt.values()), scenes(tt))),
        "latency_median": est(stats.bootstrap_quantile(list(lat.values()), scenes(lat), q=0.5)),
        "latency_p90": est(stats.bootstrap_quantile(list(lat.values()), scenes(lat), q=0.9)),
    }
    if sil:
        out["mpe_silence"] = est(stats.bootstrap_ratio([p for p, _ in sil.values()], [w for _, w in sil.values()],
                                                        list(sil)))
    return out


def _interp(tors: np.ndarray, lats: np.ndarray, target: float, values: np.ndarray | None = None) -> float:
    """Median latency (or ``values``, one per point) at pause TOR ``target`` along points (NaN where
    it is off the frontier)."""
    values = lats if values is None else values
    ok = np.isfinite(tors) & np.isfinite(lats)
    t, lat, v = tors[ok], lats[ok], values[ok]
    if len(t) == 0 or target < t.min() - 1e-12 or target > t.max() + 1e-12:
        return float("nan")
    order = np.lexsort((lat, t))  # by TOR, then latency
    t, v = t[order], v[order]
    # at equal TOR keep the lowest latency: the frontier is the best setting at that TOR
    uniq, first = np.unique(t, return_index=True)
    return float(np.interp(target, uniq, v[first]))


def _point_values(data: dict, pause_ids: dict, tt_ids: dict, pause_w: np.ndarray, tt_w: np.ndarray
                  ) -> tuple[float, float, float]:
    """Pause TOR, median latency and turn-taking TOR of a point under scene weights (bootstrap
    counts; ``pause_ids``, ``tt_ids``: each scene's index in them); an episode weighs as its scene."""
    def weighted(values: dict, ids: dict, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        keys = sorted(values)
        return (np.array([values[k] for k in keys], float).reshape(-1),
                np.array([w[ids[scene_of(k)]] for k in keys], float).reshape(-1))

    p, w = weighted(data["pause"], pause_ids, pause_w)
    ok = np.isfinite(p) & (w > 0)
    tor = float(np.sum(p[ok] * w[ok]) / np.sum(w[ok])) if ok.any() else float("nan")
    to, w = weighted(data["tt"], tt_ids, tt_w)
    ok = np.isfinite(to) & (w > 0)
    tt = float(np.sum(to[ok] * w[ok]) / np.sum(w[ok])) if ok.any() else float("nan")
    lat, w = weighted(data["latency"], tt_ids, tt_w)
    ok = np.isfinite(lat) & (w > 0)
    if not ok.any():
        return tor, float("nan"), tt
    vals = np.repeat(lat[ok], w[ok].astype(int))
    return tor, float(np.median(vals)), tt


def latency_at_tor(policy_points: list[dict], cascade_points: list[dict], target: float = TARGET_TOR,
                   n_resamples: int = 2000, seed: int = 0) -> dict:
    """Median latency at pause TOR ``target`` for both frontiers and their difference (policy -
    cascade), each with a 95 % interval from resampling pause and turn-taking scenes; and the
    turn-taking TOR there (``tt_policy``, ``tt_cascade``): a frontier that answers few turns can be
    fast at that pause TOR only on the turns it answers."""
    datas = [p["data"] for p in policy_points + cascade_points]
    pause_ids = {s: i for i, s in enumerate(sorted({scene_of(k) for d in datas for k in d["pause"]}))}
    tt_ids = {s: i for i, s in enumerate(sorted({scene_of(k) for d in datas for k in d["tt"]}))}
    rng = np.random.default_rng(seed)

    def frontier_at(points, pw, tw):
        vals = np.array([_point_values(p["data"], pause_ids, tt_ids, pw, tw) for p in points]).reshape(-1, 3)
        tors, lats, tts = vals.T
        return _interp(tors, lats, target), _interp(tors, lats, target, tts)

    ones_p, ones_t = np.ones(len(pause_ids)), np.ones(len(tt_ids))
    (pol, pol_tt), (cas, cas_tt) = frontier_at(policy_points, ones_p, ones_t), frontier_at(cascade_points, ones_p, ones_t)
    point = {"policy": pol, "cascade": cas, "diff": pol - cas, "tt_policy": pol_tt, "tt_cascade": cas_tt}
    boot = {k: [] for k in point}
    for _ in range(n_resamples):
        pw = rng.multinomial(len(pause_ids), np.full(len(pause_ids), 1 / len(pause_ids))) if pause_ids else ones_p
        tw = rng.multinomial(len(tt_ids), np.full(len(tt_ids), 1 / len(tt_ids))) if tt_ids else ones_t
        (a, a_tt), (b, b_tt) = frontier_at(policy_points, pw, tw), frontier_at(cascade_points, pw, tw)
        for key, value in (("policy", a), ("cascade", b), ("diff", a - b), ("tt_policy", a_tt), ("tt_cascade", b_tt)):
            boot[key].append(value)
    out = {"target_tor": target}
    for key, value in point.items():
        b = np.array(boot[key])
        b = b[np.isfinite(b)]
        defined = len(b) / n_resamples
        lo, hi = (float(np.percentile(b, 2.5)), float(np.percentile(b, 97.5))) if len(b) else (None, None)
        out[key] = {"value": None if not np.isfinite(value) else float(value), "lo": lo, "hi": hi,
                    "defined_share": round(defined, 3)}
    d = out["diff"]
    out["policy_faster"] = bool(d["hi"] is not None and d["hi"] < 0 and out["diff"]["defined_share"] >= 0.95)
    return out


def run_point(agent, condition, sets=SETS, split: str = "test", limit: int | None = None, out="runs",
              scoring: dict | None = None, progress: bool = False, tts: str = "espeak",
              behaviour: str = DEFAULT_PROFILE, seed: int = 0, episodes: int = 1, reuse_alike: bool = False) -> dict:
    """One agent setting on ``sets`` in one room: its run folders' lines, and their measures.
    ``behaviour``: the humans' behaviour profile (``fdenv.sim.behaviour``). ``seed``: the
    episodes' seed (the natural humans' timings, the room's placement); ``episodes``: how many per
    scene, seeds ``seed``, ``seed + 1``, ... (each measure pools them; its interval resamples scenes).
    ``reuse_alike``: ``fdenv.run.run``'s (episodes another setting played as this one would are copied)."""
    from ..run import run
    from ..runs import read_episodes
    from .compare import with_mpe

    if isinstance(episodes, bool) or not isinstance(episodes, (int, np.integer)) or episodes < 1:
        raise ValueError(f"episodes={episodes!r}: expected a positive number of episodes per scene")
    seeds = [seed + k for k in range(episodes)]
    lines = []
    for s in sets:
        folder = run(agent, scene_set=s, split=split, limit=limit, out=out, scoring=scoring, progress=progress,
                     room=condition, tts=tts, behaviour=behaviour, seeds=seeds, reuse_alike=reuse_alike)
        # a folder holds every seed run with this configuration: the point is these seeds' episodes
        lines += with_mpe(folder, [ln for ln in read_episodes(folder) if ln["seed"] in seeds], scoring)
    data = point_data(lines)
    return {"data": data, "summary": summarise(data)}


def frontier(policy_checkpoint, make_agent, conditions=tuple(CONDITIONS), thresholds=THRESHOLDS,
             endpoints_ms=ENDPOINTS_MS, sets=SETS, split: str = "test", limit: int | None = None, out="runs",
             scoring: dict | None = None, log=print, tts: str = "espeak", policy_agent: str = "policy",
             agent_tts: str | None = None, behaviour: str = DEFAULT_PROFILE, policy_kwargs: dict | None = None,
             episodes: int = 1, first_episode: int = 0, reuse_alike: bool = True) -> dict:
    """Both frontiers in each condition, and the latency at pause TOR 0.10. ``make_agent``:
    ``fdenv_agents.make_agent`` (the command line passes it: only it imports the agents).
    ``policy_agent``: the agent whose ``threshold`` is swept (``"policy"``, the GRU of
    ``fdenv-train``, or ``"turn_detector"``, the cascade with a learned end-of-turn model on
    words); ``policy_checkpoint``: its checkpoint (None: the shipped one).
    ``tts``: the back end the humans and both agents speak with (``"kokoro"``: the benchmark's
    voices; the default ``"espeak"`` is what the shipped policies' frontiers were measured with).
    ``agent_tts``: the agents' own voice when it differs (both agents alike). With ``tts="kokoro"``
    and ``agent_tts="espeak"`` the humans keep the benchmark's voices and each new answer is
    synthesised in milliseconds, not the seconds Kokoro takes here; the answers' voice then
    differs in their echo and their length, for both agents the same.
    ``behaviour``: the humans' behaviour profile, ``"natural"`` (the env's default: drawn timings,
    overlaps) or ``"paper"`` (SPEC 3's constants).
    ``scoring``: the runs' scoring settings; default the ``paper`` scoring profile alone (the
    measures here are all ``paper``'s). ``policy_kwargs``: the swept agent's other settings (e.g.
    the turn detector's ``group_checkpoint``), the same at every threshold. ``episodes``: episodes
    per scene at every point (seeds 0, 1, ...: the humans' timings and the placement drawn anew),
    so that a point measures the agent rather than one draw of the episodes. ``first_episode``: the
    first of those seeds (default 0): a later one plays fresh draws of the same scenes, to see
    whether a verdict holds beyond the draws it was read on. ``reuse_alike``: a threshold's
    episodes that the swept agent vouches it plays exactly as at another threshold already played
    (its ``plays_alike``) are copied from that point's run folders, not played again (False:
    play them all)."""
    if isinstance(first_episode, bool) or not isinstance(first_episode, (int, np.integer)) or first_episode < 0:
        raise ValueError(f"first_episode={first_episode!r}: expected the first episode seed, 0 or more")
    scoring = {"profiles": ["paper"]} if scoring is None else scoring
    policy_kwargs = dict(policy_kwargs or {})
    if {"checkpoint", "threshold", "tts"} & set(policy_kwargs):
        raise ValueError(f"policy_kwargs {sorted(policy_kwargs)}: checkpoint, threshold and tts are the frontier's own "
                         "(policy_checkpoint, thresholds, agent_tts); give them there")
    res = {}
    agent_tts = tts if agent_tts is None else agent_tts
    for cond in conditions:
        if cond not in CONDITIONS:
            raise ValueError(f"condition {cond!r}: valid are {list(CONDITIONS)}")
        room = CONDITIONS[cond]
        pts = {"policy": [], "cascade": []}
        for th in thresholds:
            agent = make_agent(policy_agent, checkpoint=None if policy_checkpoint is None else str(policy_checkpoint),
                               threshold=float(th), tts=agent_tts, **policy_kwargs)
            p = run_point(agent, room, sets, split, limit, out, scoring, tts=tts, behaviour=behaviour,
                          seed=first_episode, episodes=episodes, reuse_alike=reuse_alike)
            pts["policy"].append({"setting": {"threshold": float(th)}, **p})
            log(f"[{cond}] {policy_agent} threshold {th}: {_brief(p['summary'])}")
        for ms in endpoints_ms:
            agent = make_agent("cascade", endpoint_silence_ms=int(ms), tts=agent_tts)
            p = run_point(agent, room, sets, split, limit, out, scoring, tts=tts, behaviour=behaviour,
                          seed=first_episode, episodes=episodes)
            pts["cascade"].append({"setting": {"endpoint_silence_ms": int(ms)}, **p})
            log(f"[{cond}] cascade endpoint {ms} ms: {_brief(p['summary'])}")
        res[cond] = {"room": room, "policy_agent": policy_agent,
                     "policy_checkpoint": None if policy_checkpoint is None else str(policy_checkpoint),
                     "tts": tts, "agent_tts": agent_tts,
                     "behaviour": behaviour, **({"policy_kwargs": policy_kwargs} if policy_kwargs else {}),
                     **({"episodes": episodes} if episodes > 1 else {}),
                     **({"first_episode": first_episode} if first_episode else {}), **pts,
                     "at_tor": latency_at_tor(pts["policy"], pts["cascade"])}
    return res


def _brief(s: dict) -> str:
    def v(k):
        e = s.get(k) or {}
        return "-" if e.get("value") is None else f"{e['value']:.2f}"

    return (f"pause TOR {v('pause_tor')}, turn-taking TOR {v('turn_taking_tor')}, latency median "
            f"{v('latency_median')} s / p90 {v('latency_p90')} s, MPE silence {v('mpe_silence')}")


def markdown(res: dict) -> str:
    lines = []
    for cond, r in res.items():
        voices = f"; voices: the humans' {r['tts']}, the agents' {r['agent_tts']}" if "tts" in r else ""
        humans = f"; the humans' behaviour: {r['behaviour']}" if "behaviour" in r else ""
        humans += f"; {r['episodes']} episodes per scene" if r.get("episodes", 1) > 1 else ""
        if r.get("first_episode"):
            first, n = r["first_episode"], r.get("episodes", 1)
            humans += f"; episode seed {first}" if n == 1 else f" (episode seeds {first}-{first + n - 1})"
        knobs = "".join(f", {k}={v}" for k, v in r.get("policy_kwargs", {}).items())
        if r.get("policy_checkpoint"):
            knobs = f", checkpoint={r['policy_checkpoint']}" + knobs
        lines += [f"### {cond}", "", f"policy: the {r.get('policy_agent', 'policy')} agent{knobs}{voices}{humans}", "",
                  "| agent | setting | pause TOR | turn-taking TOR | latency median, s | latency p90, s "
                  "| MPE silence |", "|---|---|---|---|---|---|---|"]
        for who in ("policy", "cascade"):
            for p in r[who]:
                s = p["summary"]
                cells = [_cell(s.get(k)) for k in ("pause_tor", "turn_taking_tor", "latency_median", "latency_p90",
                                                     "mpe_silence")]
                setting = ", ".join(f"{k}={v}" for k, v in p["setting"].items())
                lines.append(f"| {who} | {setting} | " + " | ".join(cells) + " |")
        a = r["at_tor"]
        lines += ["", f"Median latency at pause TOR {a['target_tor']:.2f}: policy {_cell(a['policy'])}, cascade "
                      f"{_cell(a['cascade'])}, difference {_cell(a['diff'])} "
                      f"({'policy faster, interval excludes 0' if a['policy_faster'] else 'not shown faster'}); "
                      f"turn-taking TOR there: policy {_cell(a.get('tt_policy'))}, cascade "
                      f"{_cell(a.get('tt_cascade'))}.", ""]
    return "\n".join(lines)


def _cell(e) -> str:
    if not e or e.get("value") is None:
        return "-"
    if e.get("lo") is None:
        return f"{e['value']:.3f}"
    return f"{e['value']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}]"


def plot(res: dict, folder: str | Path, prefix: str = "frontier") -> list[Path]:
    """One figure per condition: median (solid) and p90 (dotted) latency against pause TOR."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for cond, r in res.items():
        fig, ax = plt.subplots(figsize=(6, 4))
        for who, color, key in (("policy", "C0", "threshold"), ("cascade", "C1", "endpoint_silence_ms")):
            pts = sorted(r[who], key=lambda p: p["setting"][key])
            x = [_v(p["summary"], "pause_tor") for p in pts]
            ax.plot(x, [_v(p["summary"], "latency_median") for p in pts], "o-", color=color, label=f"{who}, median")
            ax.plot(x, [_v(p["summary"], "latency_p90") for p in pts], ":", color=color, label=f"{who}, p90")
            for p, xi in zip(pts, x):
                y = _v(p["summary"], "latency_median")
                if np.isfinite(xi) and np.isfinite(y):
                    sil = _v(p["summary"], "mpe_silence")
                    ax.annotate(f"{p['setting'][key]}" + (f"\nsil {sil:.2f}" if np.isfinite(sil) else ""), (xi, y),
                                fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.axvline(TARGET_TOR, color="0.6", ls="--", lw=1)
        ax.set_xlabel("pause TOR (paper; lower is better)")
        ax.set_ylabel("turn-taking latency, s (TO = 1)")
        ax.set_title(f"{cond}: latency against pause take-overs")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = Path(folder) / f"{prefix}_{cond}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def _v(s: dict, k: str) -> float:
    e = s.get(k) or {}
    return float("nan") if e.get("value") is None else float(e["value"])


# What makes two reports' points comparable: the same agent and knobs, voices, humans, room and episodes.
IDENTITY = ("room", "policy_agent", "policy_checkpoint", "tts", "agent_tts", "behaviour", "policy_kwargs", "episodes",
            "first_episode")


def merge(reports: list[dict]) -> dict:
    """Frontier reports of the same agent as one (say, a sweep and a later point at a new default
    threshold): per condition, every report's points, each setting once, and the latency at pause
    TOR 0.10 along the merged frontiers. Reports that differ in a field of ``IDENTITY``, or a
    setting measured twice with different results, are refused, naming them."""
    out: dict = {}
    for i, rep in enumerate(reports, 1):
        for name, cond in rep.items():
            m = out.setdefault(name, {**{k: cond.get(k) for k in IDENTITY}, "policy": [], "cascade": []})
            for k in IDENTITY:
                if cond.get(k) != m[k]:
                    raise ValueError(f"report {i}, condition {name!r}: {k} {cond.get(k)!r}, an earlier report's "
                                     f"{m[k]!r}; merge reports of the same agent, voices, humans and room")
            for who in ("policy", "cascade"):
                for p in cond.get(who) or []:
                    same = [q for q in m[who] if q["setting"] == p["setting"]]
                    if not same:
                        m[who].append(p)
                    elif same[0]["data"] != p["data"]:
                        raise ValueError(f"report {i}, condition {name!r}: the {who} point {p['setting']} is in an "
                                         "earlier report with other results (other code or scenes?); keep one of them")
    for m in out.values():
        m["policy"].sort(key=lambda p: p["setting"].get("threshold", 0.0))
        m["cascade"].sort(key=lambda p: p["setting"].get("endpoint_silence_ms", 0))
        m["at_tor"] = latency_at_tor(m["policy"], m["cascade"])
    return out


def save(res: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(res, indent=1))
