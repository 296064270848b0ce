"""The runner: the only code that feeds agents, and the writer and reader of run folders (SPEC 9).

A run folder is ``<out>/<key>/`` where ``key`` hashes the configuration that affects results
(agent and its knobs, env config, scene selection, scoring config, fdenv version). It holds
``config.json``, ``episodes.jsonl`` (one line per finished episode, flushed as it ends) and
``episodes/<scene>.s<seed>.{json,flac}`` (the EpisodeRecord). A rerun of the same configuration
skips the episodes already in ``episodes.jsonl``: an interrupted run resumes and loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

import numpy as np

from . import __version__
from .errors import AgentError
from .record import EpisodeRecord

EPISODES = "episodes.jsonl"
FAILURES = "failures.jsonl"  # episodes a live model failed (not in EPISODES: a rerun retries them)


@dataclass
class EpisodeResult:
    record: EpisodeRecord
    info: dict  # the final step's info (scores under "fdb" / "mpe" when scoring wrappers ran)


def run_episode(env, agent, seed: int | None = None, scene=None) -> EpisodeResult:
    """One episode of ``agent`` in ``env``. Privileged agents get the scene and the labels."""
    options = {} if scene is None else {"scene": scene}
    obs, info = env.reset(seed=seed, options=options)
    privileged = bool(getattr(agent, "privileged", False))
    agent.reset(info["duty"], info["sample_rate"], info["frame_samples"],
                scene=env.unwrapped.scene if privileged else None)
    labels = info["labels"]
    while True:
        action = agent.act(obs, labels if privileged else None)
        obs, _, terminated, truncated, info = env.step(action)
        labels = info["labels"]
        if terminated or truncated:
            break
    if "record" not in info:  # truncated from outside: the scene did not finish
        raise RuntimeError(f"the episode was truncated after {info['labels']['frame']} frames, before the env ended "
                           "it (a max_episode_steps / TimeLimit?): fdenv episodes end by themselves after every "
                           "scoring window; run them without a time limit")
    record = info["record"]
    record.privileged = privileged
    return EpisodeResult(record, info)


def make_env(scene_set: str | None = None, scenes: Iterable | None = None, split: str = "all",
             score: bool = True, scoring: dict | None = None, **env_kwargs):
    """The env a run uses: the room env, wrapped with the scoring wrappers that apply.
    ``scoring``: profiles, asr, judge, min_speech_ms (conf/scoring, conf/judge)."""
    from .sim.env import RoomEnv

    env = RoomEnv(scene=list(scenes) if scenes is not None else None, scene_set=scene_set, split=split, **env_kwargs)
    if score:
        from .wrappers import scoring_wrappers

        for wrap in scoring_wrappers(env.scenes, **(scoring or {})):
            env = wrap(env)
    return env


def run(agent, *, scene_set: str | None = None, scenes: Iterable | None = None, split: str = "all",
        seeds: Iterable[int] = (0,), out: str | os.PathLike = "runs", limit: int | None = None,
        score: bool = True, scoring: dict | None = None, progress: bool = True, **env_kwargs) -> Path:
    """Run ``agent`` over scenes x seeds into a run folder; returns its path. Resumable."""
    env = make_env(scene_set=scene_set, scenes=scenes, split=split, score=score, scoring=scoring, **env_kwargs)
    base = env.unwrapped
    scene_ids = [s.id for s in base.scenes][: limit if limit else None]
    seeds = list(seeds)
    config = {
        "agent": {"name": getattr(agent, "name", type(agent).__name__), **_jsonable(agent.config())},
        "env": base.result_config(),
        "scenes": {"set": scene_set, "split": split, "ids": None if scene_set and not limit else scene_ids},
        "scoring": _scoring_config(env),
        "fdenv": __version__,
        "versions": library_versions(),
    }
    folder = Path(out) / config_key(config)
    (folder / "episodes").mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True))
    done = {(line["scene_id"], line["seed"]) for line in read_episodes(folder, repair=True)}
    todo = [(sid, seed) for sid in scene_ids for seed in seeds if (sid, seed) not in done]
    bar = _progress(len(scene_ids) * len(seeds), len(done), f"{config['agent']['name']} {folder.name}", progress)
    with open(folder / EPISODES, "a", encoding="utf-8") as log:
        for sid, seed in todo:
            try:
                result = run_episode(env, agent, seed=seed, scene=sid)
            except Exception as e:  # a live model that dropped the connection: note it, go on
                if not _is_remote_failure(e):
                    raise
                with open(folder / FAILURES, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"scene_id": sid, "seed": seed, "error": f"{type(e).__name__}: {e}"}) + "\n")
                bar.update(1)
                continue
            stem = f"episodes/{_safe(sid)}.s{seed}"
            result.record.save(folder / stem)
            line = episode_line(result, stem, seed)
            if callable(getattr(agent, "stats", None)):
                line["agent_stats"] = _jsonable(agent.stats())  # pacing, late frames, turns...
            log.write(json.dumps(line) + "\n")
            log.flush()
            bar.update(1)
    bar.close()
    env.close()
    return folder


def episode_line(result: EpisodeResult, stem: str, seed: int) -> dict:
    r = result.record
    line = {
        "scene_id": r.scene.id,
        "kind": r.scene.kind,
        "pair_id": r.scene.pair_id,
        "condition": r.scene.condition,
        "seed": seed,
        "privileged": r.privileged,
        "record": stem,
        "duration_s": r.duration,
        "timeline": [asdict(t) for t in r.turns],
    }
    if "mic_clipped_samples" in result.info:  # levels are calibrated never to clip: the proof, per episode
        line["mic_clipped_samples"] = result.info["mic_clipped_samples"]
    for key in ("fdb", "mpe", "segments"):
        if key in result.info:
            line[key] = _jsonable(result.info[key])
    return line


def run_scoring(folder: str | os.PathLike) -> dict:
    """The recogniser and judge a run folder was scored with, as specs that re-scoring accepts:
    ``{"asr": "tiny.en" | None, "judge": "offline" | "anthropic:<model>" | None}`` (``None``:
    not recorded, or a local model folder whose path the run does not keep)."""
    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"asr": None, "judge": None}
    from .score.asr import _NAMED

    asr = judge = None
    for entry in (config.get("scoring") or {}).values():
        if not isinstance(entry, dict):
            continue
        name = str((entry.get("asr") or {}).get("model") or "").rsplit(":", 1)[0]
        asr = asr or (name if name in _NAMED else None)
        judge = judge or (entry.get("judge") or {}).get("name")
    return {"asr": asr, "judge": judge}


def read_episodes(folder: str | os.PathLike, repair: bool = False) -> list[dict]:
    """The finished episodes of a run folder. A torn last line (a run killed mid-write, or one
    being written right now) is ignored. ``repair`` (the runner, before it appends): also cut that
    tail from the file so that appending goes on cleanly. Readers never change the file: a report
    taken while a run is writing must not cut the line it is in the middle of."""
    path = Path(folder) / EPISODES
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    raws = text.splitlines(keepends=True)
    lines, good = [], 0
    for i, raw in enumerate(raws):
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            if i < len(raws) - 1:
                raise ValueError(f"{path}: line {i + 1} is not JSON; fix or remove it (the other lines are intact)") from None
            break
        good += len(raw.encode("utf-8"))
    if repair and (good != len(text.encode("utf-8")) or (text and not text.endswith("\n"))):
        with open(path, "r+b") as f:  # drop the torn tail, keep every complete line
            f.truncate(good)
            if good and not text.encode("utf-8")[:good].endswith(b"\n"):
                f.seek(good)
                f.write(b"\n")
    return lines


def load_records(folder: str | os.PathLike) -> list[EpisodeRecord]:
    folder = Path(folder)
    return [EpisodeRecord.load(folder / line["record"]) for line in read_episodes(folder)]


# What the numbers depend on besides fdenv itself (SPEC 5.3: every result names its versions).
LIBRARIES = ("silero-vad", "faster-whisper", "ctranslate2", "torch", "numpy", "scipy", "pyroomacoustics",
             "espeakng-loader", "kokoro-onnx", "gymnasium", "anthropic")


def library_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in LIBRARIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def config_key(config: dict) -> str:
    blob = json.dumps(_jsonable(config), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _scoring_config(env) -> dict:
    out = {}
    e = env
    while hasattr(e, "env"):
        spec = getattr(e, "scoring_config", None)
        if callable(spec):
            out[type(e).__name__] = _jsonable(spec())
        e = e.env
    return out


def _is_remote_failure(e: Exception) -> bool:
    return isinstance(e, AgentError)  # agents raise it for a failure of theirs (a dropped connection)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, float) and x != x:
        return None
    return x


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(total: int, initial: int, desc: str, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="ep", leave=False)
