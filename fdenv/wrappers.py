"""Episode wrappers that score what the assistant did.

``FDBScore`` puts SPEC 9's ``info["fdb"]`` on the step that ends the episode, from the
``EpisodeRecord`` that the env puts in ``info["record"]`` when it ends the episode itself (after
every scoring window, SPEC 3). An episode cut short from outside (a ``TimeLimit``) has no record
and incomplete windows: its score is ``None``, with a warning. The wrappers use the env
only through the Gymnasium API, and record their constructor arguments like Gymnasium's own
wrappers (``RecordConstructorArgs``), so ``gym.make`` specs and pickling keep them.

Scoring wrappers share ``_ScoreOnFinalStep``; each brings its scorer and ``info_key``.

The training wrappers (reward wrappers such as ``TurnTakingReward`` and the discrete
``TurnActions``) live in ``fdenv.train`` and are reachable here too, imported on first use so that
scoring never pulls in torch.
"""

from __future__ import annotations

import warnings

import gymnasium as gym

from .score.fdb import PROFILES, FDBScorer
from .score.mpe import DEFAULT_MIN_SPEECH_MS, MPEScorer, is_mpe_scene


class _ScoreOnFinalStep(gym.Wrapper):
    """Scores the record once per episode, at the step that ends it (``self.scorer``), and stores
    the result in ``info[info_key]``."""

    info_key = ""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            record = info.get("record")
            if record is None and terminated:
                raise RuntimeError(
                    f"{type(self).__name__}: the final step's info has no 'record'; wrap an fdenv env "
                    "(it puts the EpisodeRecord there when it ends an episode)"
                )
            info = dict(info)
            if record is None:  # truncated from outside: the windows are incomplete
                warnings.warn(
                    f"{type(self).__name__}: the episode was truncated from outside (a time limit?) before the "
                    f"env ended it, so its scoring windows are incomplete: info[{self.info_key!r}] is None. fdenv "
                    "episodes end by themselves; drop max_episode_steps to score them.", stacklevel=2)
                info[self.info_key] = None
            else:
                info[self.info_key], details = self.scorer.score_details(record)
                info["segments"] = {**info.get("segments", {}), self.info_key: _segments(details)}
        return obs, reward, terminated, truncated, info

    def scoring_config(self) -> dict:
        """What the scores depend on (VAD parameters, ASR model, judge): for the run record."""
        return self.scorer.config()


def _segments(details: dict) -> dict:
    """The segments (and words) a score used, per profile, as plain data for the run log."""
    out = {}
    for profile, d in details.items():
        out[profile] = {
            "segments": [[round(a, 4), round(b, 4)] for a, b in d.get("segments", [])],
            "words": [[w.text, w.start, w.end] for w in d.get("words", [])],
        }
    return out


class FDBScore(_ScoreOnFinalStep, gym.utils.RecordConstructorArgs):
    """Full-Duplex-Bench scores of each episode (SPEC 6, 9).

    Description:
        At the final step, ``info["fdb"] = {"dimension": name, "scene_id": id, "paper": {...},
        "fdb_code": {...}}`` with ``to``, ``latency_s``, ``stop_latency_s``, ``relevance``, ``freq_hz``, ``jsd`` per profile
        (``None`` where not applicable). ``info["fdb"]`` is ``None`` for scenes without an FDB
        dimension (MPE scenes). Nothing changes at other steps; rewards are untouched.

    Arguments:
        env: an fdenv environment (or a wrapper of one).
        profiles: ``"paper"``, ``"fdb_code"`` or both (default both).
        asr: a local CTranslate2 Whisper directory or an offline model name (default ``"tiny.en"``).
        judge: ``"offline"`` (default), ``"anthropic"``, ``"anthropic:<model>"``, a dict, or a judge.
        min_speech_ms: Silero's minimum speech duration for the ``paper`` profile (default 250).

    Example:
        >>> import gymnasium as gym, numpy as np, fdenv
        >>> env = FDBScore(gym.make("fdenv/TurnTaking-v0", split="test"), profiles="paper")
        >>> obs, info = env.reset(seed=0)
        >>> terminated = False
        >>> while not terminated:  # a silent assistant never takes the turn
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> info["fdb"]["dimension"], info["fdb"]["paper"]["to"], info["fdb"]["paper"]["latency_s"]
        ('turn_taking', 0, None)
    """

    info_key = "fdb"

    def __init__(self, env: gym.Env, profiles=PROFILES, asr="tiny.en", judge="offline", min_speech_ms: int = 250):
        gym.utils.RecordConstructorArgs.__init__(self, profiles=profiles, asr=asr, judge=judge, min_speech_ms=min_speech_ms)
        _ScoreOnFinalStep.__init__(self, env)
        self.scorer = FDBScorer(profiles=profiles, asr=asr, judge=judge, min_speech_ms=min_speech_ms)


class MPEScore(_ScoreOnFinalStep, gym.utils.RecordConstructorArgs):
    """Duplex-MPE scores of each episode (SPEC 7, 9).

    Description:
        At the final step, ``info["mpe"]`` holds the episode's counts: ``requests``, ``presence``,
        ``fresh_onset``, ``answered`` (judged), ``correct``, ``silence_windows``,
        ``silence_judged``, ``silence_preserved``, ``n4_events``, ``window_response``,
        ``yield_eligible``, ``yield_judged``, ``yielded``, ``fail_still_speaking``,
        ``fail_spoke_again``, with ``condition``, ``pair_id``, ``scene_id``, ``t_position`` and
        per-event ``details``; rates come from ``fdenv.score.aggregate_mpe``. ``None`` for
        scenes without MPE turns. Nothing changes at other steps; rewards are untouched.

    Arguments:
        env: an fdenv environment (or a wrapper of one).
        asr: a local CTranslate2 Whisper directory or an offline model name (default ``"tiny.en"``).
        judge: ``"offline"`` (default), ``"anthropic"``, ``"anthropic:<model>"``, a dict, or a judge.
        min_speech_ms: Silero's minimum speech duration (``paper`` profile, default 250).

    Example:
        >>> import gymnasium as gym, numpy as np, fdenv
        >>> env = MPEScore(gym.make("fdenv/MultiParty-v0", split="test"))
        >>> obs, info = env.reset(seed=0)
        >>> terminated = False
        >>> while not terminated:  # a silent assistant: no answer, every silence kept
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> mpe = info["mpe"]
        >>> mpe["requests"], mpe["presence"], mpe["silence_preserved"] == mpe["silence_windows"] > 0
        (1, 0, True)
    """

    info_key = "mpe"

    def __init__(self, env: gym.Env, asr="tiny.en", judge="offline", min_speech_ms: int = DEFAULT_MIN_SPEECH_MS):
        gym.utils.RecordConstructorArgs.__init__(self, asr=asr, judge=judge, min_speech_ms=min_speech_ms)
        _ScoreOnFinalStep.__init__(self, env)
        self.scorer = MPEScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms)


class OverlapScore(_ScoreOnFinalStep, gym.utils.RecordConstructorArgs):
    """What the assistant did when someone spoke over its answer (the overlap set, after
    Full-Duplex-Bench v1.5).

    Description:
        At the final step, ``info["overlap"] = {"event", "scene_id", "onset_s", "end_s", "paper":
        {...}, "fdb15_code": {...}}``; ``paper`` with ``met_speaking``, ``stop_latency_s``,
        ``did_not_stop``, ``held``, ``response_latency_s``, ``category`` (v1.5's ``C_RESPOND``,
        ``C_RESUME``, ``C_UNCERTAIN_HANDLING``, ``C_UNKNOWN``), ``addresses_event`` (interruptions)
        or ``continues_answer`` (the others); ``fdb15_code`` with v1.5's ``stop_latency_s`` and
        ``response_latency_s``; ``fdenv.score.overlap`` defines each. ``None`` for scenes of other
        sets. Nothing changes at other steps; rewards are untouched.

    Arguments:
        env: an fdenv environment (or a wrapper of one).
        asr: a local CTranslate2 Whisper directory or an offline model name (default ``"tiny.en"``).
        judge: ``"offline"`` (default), ``"anthropic"``, ``"anthropic:<model>"``, a dict, or a judge.
        min_speech_ms: Silero's minimum speech duration (default 250).

    Example:
        >>> import gymnasium as gym, numpy as np, fdenv
        >>> env = OverlapScore(gym.make("fdenv/Overlap-v0", split="test"))
        >>> obs, info = env.reset(seed=0, options={"scene": 2})
        >>> terminated = False
        >>> while not terminated:  # a silent assistant: nothing under way when the event comes
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> info["overlap"]["event"], info["overlap"]["paper"]["met_speaking"], info["overlap"]["paper"]["category"]
        ('backchannel', False, 'C_UNKNOWN')
    """

    info_key = "overlap"

    def __init__(self, env: gym.Env, asr="tiny.en", judge="offline", min_speech_ms: int = 250):
        from .score.overlap import OverlapScorer

        gym.utils.RecordConstructorArgs.__init__(self, asr=asr, judge=judge, min_speech_ms=min_speech_ms)
        _ScoreOnFinalStep.__init__(self, env)
        self.scorer = OverlapScorer(asr=asr, judge=judge, min_speech_ms=min_speech_ms)


def scoring_wrappers(scenes, profiles=PROFILES, asr="tiny.en", judge="offline", min_speech_ms: int = 250):
    """The scoring wrappers that apply to these scenes, as ``wrap(env) -> env`` callables:
    ``FDBScore`` when a scene has an FDB dimension, ``MPEScore`` when one has MPE turns,
    ``OverlapScore`` for overlap scenes."""
    from functools import partial

    from .score.fdb import dimension_of

    wrappers = []
    if any(dimension_of(s) is not None for s in scenes):
        wrappers.append(partial(FDBScore, profiles=tuple(profiles), asr=asr, judge=judge, min_speech_ms=min_speech_ms))
    if any(is_mpe_scene(s) for s in scenes):
        wrappers.append(partial(MPEScore, asr=asr, judge=judge, min_speech_ms=min_speech_ms))
    if any(s.kind == "overlap" for s in scenes):
        wrappers.append(partial(OverlapScore, asr=asr, judge=judge, min_speech_ms=min_speech_ms))
    return wrappers


_TRAINING_WRAPPERS = {
    "TurnActions": "actions", "PauseReward": "rewards", "BackchannelReward": "rewards", "ResponseReward": "rewards",
    "YieldReward": "rewards", "SilenceReward": "rewards", "HoldReward": "rewards", "TalkCost": "rewards",
    "TurnTakingReward": "rewards",
}


def __getattr__(name: str):
    if name in _TRAINING_WRAPPERS:
        import importlib

        return getattr(importlib.import_module(f"fdenv.train.{_TRAINING_WRAPPERS[name]}"), name)
    raise AttributeError(f"module 'fdenv.wrappers' has no attribute {name!r}")
