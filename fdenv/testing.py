"""Checks that people adding a scene set, a room or an agent can call from their own tests
(as ``pettingzoo.test`` does). fdenv's own tests use them too.

    from fdenv.testing import api_check, determinism_check, agent_check, scene_set_check, metric_check
    api_check("fdenv/TurnTaking-v0", room="office")
    determinism_check("fdenv/TurnTaking-v0", steps=50)
    agent_check(MyAgent(), "fdenv/TurnTaking-v0")
    scene_set_check("my_set")
    metric_check(scenes_per_set=2)  # after changing scoring code, or with sets=("my_set",)
"""

from __future__ import annotations

import pickle
import time
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable

import gymnasium as gym
import numpy as np

import fdenv  # noqa: F401  (registers the ids)


def api_check(env_id: str, **kwargs) -> None:
    """Gymnasium's ``check_env`` with warnings as errors, plus pickling mid-episode."""
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    env.reset(seed=1)
    zeros = np.zeros(env.action_space.shape, np.float32)
    for _ in range(5):
        env.step(zeros)
    clone = pickle.loads(pickle.dumps(env))
    a = np.full(env.action_space.shape, 0.1, np.float32)
    if env.step(a)[0].tobytes() != clone.step(a)[0].tobytes():
        raise AssertionError(f"{env_id}: a pickled copy does not continue identically")
    env.close()


def rollout(env_id: str, steps: int = 50, seed: int = 0, **kwargs) -> tuple[np.ndarray, list[dict]]:
    """Observations and labels of ``steps`` steps with seeded random actions."""
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames, labels = [obs], [info["labels"]]
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(rng.uniform(-0.3, 0.3, env.action_space.shape).astype(np.float32))
        frames.append(obs)
        labels.append(info["labels"])
        if terminated or truncated:
            break
    env.close()
    return np.stack(frames), labels


def determinism_check(env_id: str, steps: int = 50, seed: int = 0, **kwargs) -> None:
    """Two envs, same seed and actions: bit-identical observations and identical labels."""
    a, la = rollout(env_id, steps, seed, **kwargs)
    b, lb = rollout(env_id, steps, seed, **kwargs)
    if a.dtype != np.float32 or a.tobytes() != b.tobytes():
        raise AssertionError(f"{env_id}: observations differ between two runs with seed {seed}")
    if la != lb:
        raise AssertionError(f"{env_id}: labels differ between two runs with seed {seed}")


def agent_check(agent, env_id: str = "fdenv/TurnTaking-v0", seed: int = 0, **kwargs):
    """One full episode through the runner: every action is one valid frame. Returns the record."""
    from .run import run_episode

    env = gym.make(env_id, **kwargs)
    original_step = env.step
    frame_samples = env.action_space.shape

    def checked_step(action):
        a = np.asarray(action)
        if a.shape != frame_samples or a.dtype.kind != "f" or not np.isfinite(a).all():
            raise AssertionError(f"{type(agent).__name__}.act returned {a.dtype} {a.shape}; expected finite float {frame_samples}")
        return original_step(action)

    env.step = checked_step
    record = run_episode(env, agent, seed=seed).record
    env.close()
    return record


def scene_set_check(name: str) -> None:
    """Every scene of a set loads and plays one frame; the manifest's splits cover the set."""
    from .scene import load_set, scene_ids

    all_ids = scene_ids(name, "all")
    split_ids = [i for split in ("train", "val", "test") for i in scene_ids(name, split)]
    if sorted(all_ids) != sorted(split_ids) or len(set(split_ids)) != len(split_ids):
        raise AssertionError(f"{name}: train/val/test do not partition the set")
    from .sim.env import RoomEnv

    env = RoomEnv(scene=load_set(name, "all"))
    for i in range(len(env.scenes)):
        obs, info = env.reset(seed=0, options={"scene": i})
        if obs.shape != env.observation_space.shape:
            raise AssertionError(f"{name}: scene {info['scene_id']} gives an observation of shape {obs.shape}")


# ============================================================================ metric sanity

SANITY_SETS = ("pause", "backchannel", "turn_taking", "interruption", "mpe")
SANITY_AGENTS = ("silent", "talker", "oracle")


@dataclass(frozen=True)
class Expect:
    """One expected value: ``test(value)`` holds; ``text`` says what was expected. With ``when =
    (key, v)`` it applies only to results whose ``key`` is ``v``."""

    text: str
    test: Callable[[object], bool]
    when: tuple[str, object] | None = None

    def given(self, key: str, value) -> "Expect":
        return Expect(self.text, self.test, (key, value))

    def applies(self, scores: dict) -> bool:
        return self.when is None or scores.get(self.when[0]) == self.when[1]

    def __str__(self) -> str:
        return self.text if self.when is None else f"{self.text} (as {self.when[0]} is {self.when[1]!r})"


def _is(v) -> Expect:
    """Equal to ``v`` (``None`` only for ``None``: a missing TO is not a TO of 0)."""
    if v is None:
        return Expect("None", lambda x: x is None)
    return Expect(repr(v), lambda x, v=v: x is not None and x == v)


def _within(lo: float, hi: float) -> Expect:
    return Expect(f"in [{lo}, {hi}]", lambda x: isinstance(x, (int, float)) and lo <= x <= hi)


def _below(hi: float) -> Expect:
    return Expect(f"< {hi}", lambda x: isinstance(x, (int, float)) and x < hi)


def _at_least(lo: float) -> Expect:
    return Expect(f">= {lo}", lambda x: isinstance(x, (int, float)) and x >= lo)


_BOTH = ("paper", "fdb_code")

# FDB extremes: agent -> dimension -> profile -> {key: Expect}. Each held on every scene of the
# shipped sets' test splits (15 per set; seeds 0 and 1) and, for the oracle and the talker, on all
# 100 scenes of each set (seed 0). Nothing here rests on what the recogniser makes of the words
# beyond "long speech has words": no relevance, no answer text.
#
# silent: no speech, so nothing is taken over, no backchannel, nothing under way at an interrupt.
# talker: one unbroken segment from the first frame: it takes over every pause and monologue,
#   "answers" the final turn before it ends (paper latency < 0), and never stops when interrupted.
# oracle: silent in pauses, one-word backchannels at TRPs only, answers 0.5 s after a turn ends
#   and stops at the next frame after an interrupt starts (when it was still speaking then: in
#   2 of the 100 interruption scenes its answer had ended). Not asserted: its ``fdb_code``
#   turn-taking TO, 0 where the recogniser hears a short gold answer ("That's August.") as at
#   most 3 words within 1 s, FDB's rule for not taking the turn (turn_taking-0089).
FDB_EXTREMES: dict[str, dict[str, dict[str, dict[str, Expect]]]] = {
    "silent": {
        "pause_handling": {p: {"to": _is(0)} for p in _BOTH},
        "backchannel": {p: {"to": _is(0), "n_backchannels": _is(0), "freq_hz": _is(0.0)} for p in _BOTH},
        "turn_taking": {p: {"to": _is(0), "latency_s": _is(None)} for p in _BOTH},
        "interruption": {"paper": {"to": _is(0), "spoke_at_interrupt": _is(False)}, "fdb_code": {"to": _is(0)}},
    },
    "talker": {
        "pause_handling": {p: {"to": _is(1)} for p in _BOTH},
        "backchannel": {p: {"to": _is(1)} for p in _BOTH},
        "turn_taking": {"paper": {"to": _is(1), "latency_s": _below(0.0), "overlapping": _is(True)},
                        "fdb_code": {"to": _is(1)}},
        "interruption": {"paper": {"spoke_at_interrupt": _is(True), "did_not_stop": _is(True)}},
    },
    "oracle": {
        "pause_handling": {p: {"to": _is(0)} for p in _BOTH},
        "backchannel": {p: {"to": _is(0), "n_backchannels": _at_least(1)} for p in _BOTH},
        "turn_taking": {"paper": {"to": _is(1), "latency_s": _within(0.3, 1.0), "overlapping": _is(False)}},
        "interruption": {"paper": {"to": _is(1), "latency_s": _within(0.3, 1.0),
                                   "did_not_stop": _is(False),
                                   "stop_latency_s": _within(0.0, 0.3).given("spoke_at_interrupt", True)},
                         "fdb_code": {"to": _is(1)}},
    },
}

# MPE extremes, per episode, as rates num / den (skipped when den is 0; see
# fdenv.score.mpe_aggregate.CAPABILITIES). Each held for all three agents on all 400 scenes of the mpe set
# (seed 0; 360 oracle N4 events) and on its 60 test scenes with seed 1.
# silent: never present, every silence window kept. talker: already speaking when every request
#   ends (present, never a fresh onset), no silence window kept, never eligible to yield.
# oracle: a fresh answer to every request, every window kept, yields at every N4 event.
MPE_RATES = {  # name: (numerator, denominator)
    "presence": ("presence", "requests"),
    "fresh_onset": ("fresh_onset", "requests"),
    "silence_preservation": ("silence_preserved", "silence_judged"),
    "yield_eligibility": ("yield_eligible", "n4_events"),
    "yield": ("yielded", "yield_judged"),
}
MPE_EXTREMES: dict[str, dict[str, Expect]] = {
    "silent": {"presence": _is(0.0), "fresh_onset": _is(0.0), "silence_preservation": _is(1.0),
               "yield_eligibility": _is(0.0)},
    "talker": {"presence": _is(1.0), "fresh_onset": _is(0.0), "silence_preservation": _is(0.0),
               "yield_eligibility": _is(0.0)},
    "oracle": {"presence": _is(1.0), "fresh_onset": _is(1.0), "silence_preservation": _is(1.0),
               "yield_eligibility": _is(1.0), "yield": _is(1.0)},
}


def metric_check(scoring: dict | None = None, scenes_per_set: int = 1, sets: Iterable[str] = SANITY_SETS,
                 agents: Iterable[str] = SANITY_AGENTS, split: str = "test", seed: int = 0,
                 root=None, **env_kwargs) -> dict:
    """The baseline agents' known extremes, through the real env and the real scoring wrappers.

    Runs ``silent``, ``talker`` and ``oracle`` (``fdenv_agents``) with ``fdenv.run.run_episode`` in
    ``fdenv.run.make_env`` (so ``FDBScore`` / ``MPEScore`` score each episode, VAD and ASR
    included) on the first ``scenes_per_set`` scenes of ``split`` of each set, then asserts:

    * the scoring wrappers scored what the scene asks for: ``info["fdb"]`` with the scene's FDB
      dimension (``fdenv.score.fdb.dimension_of``) and every requested profile, ``info["mpe"]``
      for a multi-party scene, and the MPE counts match the played turns (one request per ``T``,
      one silence window per ``N1``-``N3``, one event per answered ``N4Q``), every window and
      eligible event judged;
    * ``FDB_EXTREMES``: e.g. silent TO 0 everywhere; talker TO 1 on pause, backchannel and turn
      taking, with negative turn-taking latency, and never stopping when interrupted; oracle
      pause and backchannel TO 0, turn-taking and interruption TO 1 with latency in [0.3, 1.0] s,
      stopping within 0.3 s of an interrupt;
    * ``MPE_EXTREMES``: silent presence 0 and silence preservation 1; talker presence 1, fresh
      onset 0, silence preservation 0; oracle presence, fresh onset, silence preservation and
      yield 1.

    These hold by construction of the agents, so a failure means the scoring (or a new set's
    labels) is broken. Values that depend on what the recogniser makes of the words (relevance,
    answer accuracy) are not asserted. Scenes are checked by their kind, not the set's name: a
    new set of kind ``turn_taking`` gets the turn-taking checks; a set that no wrapper scores
    fails.

    ``scoring``: as for ``make_env`` (``profiles``, ``asr``, ``judge``, ``min_speech_ms``); only the
    requested profiles are checked. ``agents``: a subset of ``SANITY_AGENTS``. ``root``: the scene
    folder (``fdenv.scene.load_set``). ``env_kwargs`` go to the env (a room, say); the extremes are
    established for the default env.

    Raises ``AssertionError`` listing every failed check (agent, scene, dimension, profile, key,
    value, expected). Returns a summary: ``episodes``, ``checks`` (values compared), ``scenes``
    per set, ``agents``, ``profiles``, ``seconds`` and ``values`` (agent -> scene id -> the checked
    values, ``"<profile>.<key>"`` for FDB, the MPE rate names as ``"num/den"``).
    """
    from fdenv_agents import make_agent

    from .run import make_env, run_episode
    from .scene import load_set
    from .score.fdb import PROFILES, dimension_of
    from .score.mpe import is_mpe_scene

    t0 = time.perf_counter()
    sets = (sets,) if isinstance(sets, str) else tuple(sets)
    names = [agents] if isinstance(agents, str) else list(agents)
    unknown = [a for a in names if a not in SANITY_AGENTS]
    if unknown:
        raise ValueError(f"metric_check knows the extremes of {list(SANITY_AGENTS)}, not {unknown}")
    if scenes_per_set < 1:
        raise ValueError(f"scenes_per_set must be at least 1, got {scenes_per_set}")
    scoring = dict(scoring or {})
    profiles = scoring.get("profiles", PROFILES)
    profiles = (profiles,) if isinstance(profiles, str) else tuple(profiles)

    chosen = {}
    for name in sets:
        scenes = load_set(name, split, root)[:scenes_per_set]
        if not scenes:
            raise ValueError(f"scene set {name!r} has no scenes in split {split!r}")
        chosen[name] = scenes
    scenes = [s for group in chosen.values() for s in group]
    env = make_env(scenes=scenes, scoring=scoring, **env_kwargs)

    failures: list[str] = []
    checks = 0
    values: dict[str, dict[str, dict]] = {}

    def check(agent, where, key, value, expect: Expect, shown=None):
        nonlocal checks
        checks += 1
        if not expect.test(value):
            failures.append(f"{agent} on {where}: {key} = {repr(value) if shown is None else shown}, expected {expect}")

    def fail(message):  # a check that cannot even be made (a result missing)
        nonlocal checks
        checks += 1
        failures.append(message)

    try:
        for agent_name in names:
            agent = make_agent(agent_name)
            values[agent_name] = {}
            for scene in scenes:
                info = run_episode(env, agent, seed=seed, scene=scene.id).info
                record = info["record"]
                seen = values[agent_name][scene.id] = {}
                dim = dimension_of(scene)
                mpe = is_mpe_scene(scene)
                if dim is None and not mpe:
                    fail(f"{agent_name} on {scene.id}: kind {scene.kind!r} has no FDB dimension and no MPE turns; "
                         "no scoring wrapper applies, so nothing can be checked")
                    continue
                if dim is not None:
                    _check_fdb(agent_name, scene.id, dim, info.get("fdb"), profiles, check, fail, seen)
                if mpe:
                    _check_mpe(agent_name, scene.id, record, info.get("mpe"), check, fail, seen)
    finally:
        env.close()
    summary = {"episodes": len(names) * len(scenes), "checks": checks,
               "scenes": {name: [s.id for s in group] for name, group in chosen.items()},
               "agents": names, "profiles": list(profiles), "seconds": round(time.perf_counter() - t0, 2),
               "values": values}
    if failures:
        raise AssertionError(f"metric_check: {len(failures)} of {checks} checks failed "
                             f"(seed {seed}, split {split!r}):\n  " + "\n  ".join(failures))
    return summary


def _check_fdb(agent, scene_id, dim, fdb, profiles, check, fail, seen) -> None:
    """``info["fdb"]`` is there, names the scene's dimension, has every requested profile, and
    meets ``FDB_EXTREMES``."""
    if not isinstance(fdb, dict):
        fail(f"{agent} on {scene_id} ({dim}): info['fdb'] = {fdb!r}, expected the FDBScore result")
        return
    check(agent, f"{scene_id} ({dim})", "dimension", fdb.get("dimension"), _is(dim))
    rules = FDB_EXTREMES.get(agent, {}).get(dim, {})
    for profile in profiles:
        scores = fdb.get(profile)
        if not isinstance(scores, dict):
            fail(f"{agent} on {scene_id} ({dim}, {profile}): no {profile!r} scores ({scores!r})")
            continue
        for key, expect in rules.get(profile, {}).items():
            if not expect.applies(scores):
                continue
            seen[f"{profile}.{key}"] = scores.get(key)
            check(agent, f"{scene_id} ({dim}, {profile})", key, scores.get(key), expect)


def _check_mpe(agent, scene_id, record, mpe, check, fail, seen) -> None:
    """``info["mpe"]`` is there, counts every event of the played turns, and meets ``MPE_EXTREMES``."""
    where = f"{scene_id} (multi-party)"
    if not isinstance(mpe, dict):
        fail(f"{agent} on {where}: info['mpe'] = {mpe!r}, expected the MPEScore result")
        return
    turns = list(record.turns)
    n4q = [t for t in turns if t.label == "N4Q"]
    events = {
        "requests": sum(t.label == "T" for t in turns),
        "silence_windows": sum(t.label in ("N1", "N2", "N3") for t in turns),
        "n4_events": sum(any(u.label == "N4R" and u.resolves == q.id for u in turns) for q in n4q),
    }
    for key, n in events.items():
        check(agent, where, key, mpe.get(key), _is(n))
    # Every verdict is made: the baselines leave no short, ambiguous segment in a window, so no
    # judge may abstain (a rate with a shrunken denominator would hide a broken count).
    check(agent, where, "silence_judged", mpe.get("silence_judged"), _is(events["silence_windows"]))
    check(agent, where, "yield_judged", mpe.get("yield_judged"), _is(mpe.get("yield_eligible")))
    for name, expect in MPE_EXTREMES.get(agent, {}).items():
        num_key, den_key = MPE_RATES[name]
        num, den = mpe.get(num_key), mpe.get(den_key)
        if not isinstance(den, int) or not isinstance(num, int):
            fail(f"{agent} on {where}: {num_key} / {den_key} = {num!r} / {den!r}, expected counts")
            continue
        if den == 0:
            continue  # not applicable in this scene (no N4 event, or nothing eligible)
        seen[name] = f"{num}/{den}"
        check(agent, where, name, num / den, expect, shown=f"{num}/{den}")
