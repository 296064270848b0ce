"""The runner: the only code that feeds agents (SPEC 9's run folders are written through
``fdenv.runs``).

A rerun of the same configuration skips the episodes already in the folder's ``episodes.jsonl``:
an interrupted run resumes and loses nothing. An agent that fails for a reason outside the episode
raises ``fdenv.errors.AgentError``: the episode is noted in ``failures.jsonl`` and the run goes on.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from . import __version__
from .errors import AgentError, RunFolderError
from .record import EpisodeRecord
from .runs import (EPISODES, FAILURES, adopt_episode, append_line, config_key, drop_lines, jsonable, load_records, locked,
                   note_failure, open_run, read_config, read_episodes, record_exists, record_stem, sibling_runs)

__all__ = ["EpisodeResult", "config_key", "load_records", "make_env", "read_episodes", "run", "run_episode"]

log = logging.getLogger(__name__)


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
        score: bool = True, scoring: dict | None = None, progress: bool = True, wait: bool = True,
        fresh: bool = False, reuse_alike: bool = False, **env_kwargs) -> Path:
    """Run ``agent`` over scenes x seeds into a run folder; returns its path. Resumable: finished
    episodes of the same configuration, source and scenes are reused (``fresh``: start over). One
    runner writes a folder at a time: another one holding it is waited for (``wait=False``:
    RunLockedError). ``reuse_alike``: an episode that a sibling run folder (the same run but for
    the agent's knobs, e.g. another threshold) has finished is copied from it, not played, when
    the agent's ``plays_alike(their_agent_config, line)`` vouches that it would play it exactly so
    (its line names that folder under ``adopted_from``)."""
    from .digest import run_digests
    env = make_env(scene_set=scene_set, scenes=scenes, split=split, score=score, scoring=scoring, **env_kwargs)
    base = env.unwrapped
    scene_ids = [s.id for s in base.scenes][: limit if limit else None]
    seeds = list(seeds)
    agent_config = jsonable(agent.config())
    config = {
        "agent": {"name": getattr(agent, "name", type(agent).__name__), **agent_config},
        "env": base.result_config(),
        "scenes": {"set": scene_set, "split": split, "ids": None if scene_set and not limit else scene_ids},
        "scoring": _scoring_config(env),
        "fdenv": __version__,
        "versions": library_versions(),
        "digest": run_digests(agent, agent_config, [s for s in base.scenes if s.id in set(scene_ids)]),
    }
    folder = open_run(out, config)
    with locked(folder, wait=wait, notice=_notice) as writable:
        if fresh and writable:
            _start_over(folder)
        lines = read_episodes(folder, repair=writable)
        kept = [line for line in lines if record_exists(folder, line)]
        if len(kept) < len(lines) and writable:  # a lost record file: its episode is done again
            _notice(f"{folder}: {len(lines) - len(kept)} episode(s) have no record file; doing them again")
            drop_lines(folder, kept)
        done = {(line["scene_id"], line["seed"]) for line in kept}
        todo = [(sid, seed) for sid in scene_ids for seed in seeds if (sid, seed) not in done]
        if done:
            log.info("reused %d finished episodes from %s (fresh=true starts over)", len(done), folder)
        if todo and not writable:
            raise RunFolderError(f"{folder}: cannot be written (read-only?) and {len(todo)} episode(s) are not done; "
                                 "make it writable or choose another out=")
        if todo and reuse_alike and callable(getattr(agent, "plays_alike", None)):
            todo = _adopt_alike(agent, folder, read_config(folder) or {}, todo)  # as siblings' are read: JSON
        bar = _progress(len(scene_ids) * len(seeds), len(scene_ids) * len(seeds) - len(todo),
                        f"{config['agent']['name']} {folder.name}", progress)
        with open(folder / EPISODES, "a", encoding="utf-8") if todo else nullcontext() as episodes:
            for sid, seed in todo:
                try:
                    result = run_episode(env, agent, seed=seed, scene=sid)
                except AgentError as e:  # a live model that dropped the connection: note it, go on
                    note_failure(folder, sid, seed, e)
                    bar.update(1)
                    continue
                stem = record_stem(sid, seed)
                result.record.save(folder / stem)
                line = episode_line(result, stem, seed)
                if callable(getattr(agent, "stats", None)):
                    line["agent_stats"] = jsonable(agent.stats())  # pacing, late frames, turns...
                append_line(episodes, line)
                bar.update(1)
        bar.close()
    env.close()
    return folder


def _adopt_alike(agent, folder: Path, config: dict, todo: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Copy into ``folder`` the episodes of ``todo`` that a sibling run folder has finished and
    ``agent`` would play exactly as it did (``run``'s ``reuse_alike``); the episodes left to play."""
    wanted, adopted = set(todo), 0
    with open(folder / EPISODES, "a", encoding="utf-8") as episodes:
        for other, their_agent in sibling_runs(folder, config):
            try:
                lines = read_episodes(other)
            except RunFolderError as e:  # a damaged sibling is no source; this run plays its episodes
                _notice(f"not reusing episodes from {other}: {e}")
                continue
            for line in lines:
                key = (line["scene_id"], line["seed"])
                if key in wanted and record_exists(other, line) and agent.plays_alike(their_agent, line):
                    adopt_episode(other, line, folder, episodes)
                    wanted.discard(key)
                    adopted += 1
            if not wanted:
                break
    if adopted:
        log.info("adopted %d episodes that sibling run folders played as this agent would", adopted)
    return [key for key in todo if key in wanted]


def _notice(msg: str) -> None:
    print(f"fdenv: {msg}", file=sys.stderr, flush=True)


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
    for key in ("fdb", "mpe", "overlap", "segments"):
        if key in result.info:
            line[key] = jsonable(result.info[key])
    return line


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


def _scoring_config(env) -> dict:
    out = {}
    e = env
    while hasattr(e, "env"):
        spec = getattr(e, "scoring_config", None)
        if callable(spec):
            out[type(e).__name__] = jsonable(spec())
        e = e.env
    return out


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(total: int, initial: int, desc: str, enabled: bool):
    """A bar on a terminal; elsewhere (a log file, a pipe) log lines without carriage returns."""
    if not enabled:
        return _NoBar()
    if not sys.stderr.isatty():
        return _LogProgress(total, initial, desc)
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="ep", leave=False)


class _LogProgress:
    """Progress as log lines: the first episode, then at most one line each 30 s, and the last."""

    every_s = 30.0

    def __init__(self, total: int, initial: int, desc: str):
        self.total, self.n, self.first, self.desc = total, initial, initial, desc
        self.t0, self.last = time.monotonic(), None

    def update(self, k: int) -> None:
        self.n += k
        now = time.monotonic()
        if self.last is not None and now - self.last < self.every_s and self.n < self.total:
            return
        self.last = now
        rate = (now - self.t0) / max(1, self.n - self.first)
        left = f", about {_duration(rate * (self.total - self.n))} left" if self.n < self.total else ""
        log.info("%s: %d/%d episodes%s", self.desc, self.n, self.total, left)

    def close(self) -> None:
        pass


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _start_over(folder: Path) -> None:
    """``fresh=true``: the finished episodes of this key go, the folder (and its lock) stays."""
    import shutil

    n = len(read_episodes(folder))
    for name in (EPISODES, FAILURES):
        (folder / name).unlink(missing_ok=True)
    shutil.rmtree(folder / "episodes", ignore_errors=True)
    (folder / "episodes").mkdir()
    log.info("fresh=true: removed %d finished episodes from %s", n, folder)
