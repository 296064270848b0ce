"""Dense, causal turn-taking rewards, one wrapper per behaviour and a weighted sum.

Each reward is computed at every step from the labels of the returned frame (``info["labels"]``,
SPEC 2) and the assistant's activity, and follows the sign of the episode-end measure it stands
for (SPEC 6, 7). The wrappers sit directly on the audio env (``RoomEnv`` or a scoring wrapper of
it), under ``TurnActions``: they read the action frame to know when the assistant is *loud*.

Activity, as the terms see it: a frame is *loud* when its RMS is above -45 dBFS (SPEC 3's
detector without the hold); a *run* starts at an onset of the detector (``assistant_active``,
hold included) and lasts until the detector goes inactive; its *span* runs from the onset to the
end of its last loud frame. A run whose span reaches ``takeover_s`` (0.72 s) is a take-over (a
non-backchannel segment, SPEC 5.2); a shorter run is a backchannel.

| behaviour (wrapper) | where | reward |
|---|---|---|
| ``pause`` (``PauseReward``) | a ``pause`` turn (SPEC 6.1) | ``-frame_cost`` per loud frame; ``-takeover_penalty`` once per pause turn that a take-over overlaps (TO = 1) |
| ``backchannel`` (``BackchannelReward``) | a ``monologue`` turn (6.2) | ``+bonus`` for a backchannel whose onset is within ``window_s`` after a TRP (once per TRP), ``-misplaced`` for one elsewhere in the turn, ``-takeover_penalty`` once per monologue a take-over overlaps |
| ``response`` (``ResponseReward``) | ``expect == "respond"`` after ``T`` / ``final`` / ``interrupt`` (6.3, 6.4, 7) | when a run that started in the window becomes a take-over: ``+exp(-latency / tau_s)`` (latency from the window's first frame), then ``+hold_bonus`` per loud frame of that answer up to ``hold_max_s``; ``-miss_penalty`` when the window closes with no such run; nothing when the assistant was already speaking at the turn's end (no fresh onset) |
| ``yield`` (``YieldReward``) | ``expect == "yield"``: an ``interrupt``, the ``N4R`` window (6.4, 7) | ``-frame_cost`` per loud frame |
| ``silence`` (``SilenceReward``) | ``expect == "silent"``: ``N1``-``N3`` windows, ``duty``, ``T``, ``N4Q`` (7) | ``-frame_cost`` per loud frame; ``-takeover_penalty`` once per silent stretch a take-over overlaps (an intrusion, not an acknowledgement) |
| ``hold`` (``HoldReward``) | ``expect == "hold"``: a user backchannel, a side conversation, background speech over the assistant's answer (overlap set) | when the assistant was speaking as the event began: ``-frame_cost`` per quiet frame once a quiet stretch is longer than ``pause_s`` (a brief pause is fine; stopping is not) |
| ``talk`` (``TalkCost``) | everywhere | ``-frame_cost`` per loud frame (a small price on speaking at all) |

``TurnTakingReward(env, weights)`` adds ``sum(weights[name] * term)``; every wrapper adds its
terms to the env's reward and reports them, unweighted, in ``info["reward_terms"]``.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from ..sim.detector import frame_is_loud

FRAME_S = 0.08
# A run this long is a take-over, not a backchannel. SPEC 5.2's backchannel is a segment under 1 s
# with fewer than 2 words; at TTS speaking rates 2 words take about 0.7 s, and the backchannel
# words of TurnActions last 0.5-0.6 s, so 9 frames (0.72 s) separates the two.
TAKEOVER_S = 0.72
# The onset bonus exp(-latency / TAU_S): 0.61 at 0.3 s, 0.15 at 1.1 s. With 2.5 s it paid 0.64
# at 1.1 s and 0.89 at 0.3 s while one take-over in a pause costs 1: waiting was nearly free.
TAU_S = 0.6
DEFAULT_WEIGHTS = {"pause": 1.0, "backchannel": 0.5, "response": 1.0, "yield": 1.0, "silence": 1.0, "hold": 1.0,
                   "talk": 1.0}


class Activity:
    """The assistant's activity frame by frame: ``update(labels, action)`` once per step."""

    def __init__(self, takeover_s: float = TAKEOVER_S, frame_s: float = FRAME_S):
        self.takeover_s, self.frame_s = takeover_s, frame_s
        self.reset()

    def reset(self) -> None:
        self.active = False  # detector state (hold included) of the current frame
        self.loud = False  # this frame's RMS above -45 dBFS
        self.onset = False  # the detector turned active in this frame
        self.run_start: float | None = None  # onset time of the current (or last) run
        self.span = 0.0  # onset to the end of the run's last loud frame
        self.takeover = False  # the current run is (already) a take-over
        self.became_takeover = False  # ... and became one in this frame
        self.ended = False  # the last run ended in this frame (detector went inactive)
        self.ended_span = 0.0  # span of the run that ended
        self.ended_start: float | None = None

    def update(self, labels: dict, action: Any) -> None:
        t = float(labels["t"])
        active = bool(labels["assistant_active"])
        if isinstance(action, np.ndarray) and action.ndim == 1 and action.dtype.kind == "f":
            loud = frame_is_loud(np.clip(action.astype(np.float32, copy=False), -1.0, 1.0))
        else:
            loud = active  # no audio to look at: the detector is all we know
        self.onset = active and not self.active
        self.ended = self.active and not active
        if self.ended:
            self.ended_span, self.ended_start = self.span, self.run_start
        if self.onset:
            self.run_start, self.span, self.takeover = t, 0.0, False
        self.became_takeover = False
        if active and loud and self.run_start is not None:
            self.span = t + self.frame_s - self.run_start
            if not self.takeover and self.span >= self.takeover_s - 1e-9:
                self.takeover = self.became_takeover = True
        self.active, self.loud = active, loud


class Term:
    """One behaviour's reward: ``reset()`` per episode, ``__call__(labels, activity)`` per step."""

    name = ""

    def reset(self) -> None:
        pass

    def __call__(self, labels: dict, act: Activity) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

class _OverlapPenalty:
    """Charges a penalty once per window that a take-over run overlaps (a run overlaps a window
    when it is active in one of the window's frames)."""

    def __init__(self):
        self.touched: set = set()
        self.charged: set = set()

    def __call__(self, window, act: Activity) -> int:
        if act.onset:
            self.touched = set()
        if window is not None and act.active:
            self.touched.add(window)
        if act.active and act.takeover:
            new = self.touched - self.charged
            self.charged |= new
            return len(new)
        return 0


class PauseTerm(Term):
    name = "pause"

    def __init__(self, frame_cost: float = 0.05, takeover_penalty: float = 1.0):
        self.frame_cost, self.takeover_penalty = frame_cost, takeover_penalty
        self.reset()

    def reset(self):
        self._over = _OverlapPenalty()

    def __call__(self, labels, act):
        turn = labels["turn"]
        window = turn["id"] if turn["label"] == "pause" else None
        r = -self.frame_cost if (window is not None and act.loud) else 0.0
        return r - self.takeover_penalty * self._over(window, act)


class BackchannelTerm(Term):
    name = "backchannel"

    def __init__(self, bonus: float = 0.3, misplaced: float = 0.1, window_s: float = 1.0, takeover_penalty: float = 1.0):
        self.bonus, self.misplaced, self.window_s, self.takeover_penalty = bonus, misplaced, window_s, takeover_penalty
        self.reset()

    def reset(self):
        self._over = _OverlapPenalty()
        self._trps: list[float] = []  # TRP frames seen in monologue turns
        self._used: set = set()
        self._onset_in_monologue = False

    def __call__(self, labels, act):
        turn = labels["turn"]
        monologue = turn["label"] == "monologue"
        t = float(labels["t"])
        if monologue and labels["trp"]:
            self._trps.append(t)
        if act.onset:
            self._onset_in_monologue = monologue
        r = -self.takeover_penalty * self._over(turn["id"] if monologue else None, act)
        if act.ended and self._onset_in_monologue and act.ended_span < act.takeover_s:
            start = act.ended_start
            near = [x for x in self._trps if x <= start + 1e-9 and start - x <= self.window_s and x not in self._used]
            if near:
                self._used.add(near[-1])
                r += self.bonus
            else:
                r -= self.misplaced
        return r


class ResponseTerm(Term):
    name = "response"

    def __init__(self, tau_s: float = TAU_S, miss_penalty: float = 1.0, hold_bonus: float = 0.02, hold_max_s: float = 4.0,
                 wait_cost: float = 0.0):
        self.tau_s, self.miss_penalty = tau_s, miss_penalty
        self.hold_bonus, self.hold_max_s = hold_bonus, hold_max_s
        self.wait_cost = wait_cost  # per silent frame while an answer is due, times the seconds waited so far
        self.reset()

    def reset(self):
        self._open = False
        self._start = 0.0
        self._credited = False
        self._rewarded = False  # a fresh onset in this window was rewarded
        self._held = 0  # loud frames of the answer rewarded so far
        self._run_in_window: float | None = None  # onset of a run that started in the window

    @staticmethod
    def bonus(latency_s: float, tau_s: float = TAU_S) -> float:
        return math.exp(-max(0.0, latency_s) / tau_s)

    def __call__(self, labels, act):
        respond = labels["expect"] == "respond"
        t = float(labels["t"])
        r = 0.0
        if respond and not self._open:  # a window opens (the frame after the turn's end)
            self._open, self._start, self._credited, self._rewarded, self._held = True, t, False, False, 0
            self._run_in_window = None
            if act.active and not act.onset:
                self._credited = True  # already speaking at the end: no fresh onset to reward
        elif not respond and self._open:  # the window closes
            if not self._credited:
                r -= self.miss_penalty
            self._open = False
        if self._open and not self._credited:
            if self.wait_cost and not act.active:  # silence where an answer is due costs more the longer it lasts
                r -= self.wait_cost * (t - self._start)
            if act.onset:
                self._run_in_window = act.run_start
            if act.became_takeover and self._run_in_window is not None:
                r += self.bonus(self._run_in_window - self._start, self.tau_s)
                self._credited = self._rewarded = True
        elif self._open and self._rewarded and act.loud and self._held * FRAME_S < self.hold_max_s - 1e-9:
            r += self.hold_bonus  # the answer goes on (an answer cut short is no answer)
            self._held += 1
        return r


class YieldTerm(Term):
    name = "yield"

    def __init__(self, frame_cost: float = 0.1):
        self.frame_cost = frame_cost

    def __call__(self, labels, act):
        return -self.frame_cost if (labels["expect"] == "yield" and act.loud) else 0.0


class SilenceTerm(Term):
    name = "silence"

    def __init__(self, frame_cost: float = 0.05, takeover_penalty: float = 1.0):
        self.frame_cost, self.takeover_penalty = frame_cost, takeover_penalty
        self.reset()

    def reset(self):
        self._over = _OverlapPenalty()
        self._stretch = 0
        self._in = False

    def __call__(self, labels, act):
        silent = labels["expect"] == "silent"
        if silent and not self._in:
            self._stretch += 1
        self._in = silent
        r = -self.frame_cost if (silent and act.loud) else 0.0
        return r - self.takeover_penalty * self._over(self._stretch if silent else None, act)


class HoldTerm(Term):
    """Keep the floor through an overlap event that is not for the assistant (``hold``)."""

    name = "hold"

    def __init__(self, frame_cost: float = 0.1, pause_s: float = 0.48):
        self.frame_cost, self.pause_s = frame_cost, pause_s
        self.reset()

    def reset(self):
        self._in = False
        self._holding = False  # it was speaking when the hold stretch began
        self._quiet = 0

    def __call__(self, labels, act):
        hold = labels["expect"] == "hold"
        if hold and not self._in:
            self._holding, self._quiet = act.active, 0
        self._in = hold
        if not (hold and self._holding):
            return 0.0
        self._quiet = 0 if act.loud else self._quiet + 1
        return -self.frame_cost if self._quiet * FRAME_S > self.pause_s + 1e-9 else 0.0


class TalkTerm(Term):
    name = "talk"

    def __init__(self, frame_cost: float = 0.005):
        self.frame_cost = frame_cost

    def __call__(self, labels, act):
        return -self.frame_cost if act.loud else 0.0


TERMS = {c.name: c for c in (PauseTerm, BackchannelTerm, ResponseTerm, YieldTerm, SilenceTerm, HoldTerm, TalkTerm)}


class _RewardWrapper(gym.Wrapper):
    """Adds weighted terms to the reward; ``info["reward_terms"]`` holds each term, unweighted."""

    def __init__(self, env: gym.Env, terms: dict[str, tuple[float, Term]], takeover_s: float = TAKEOVER_S):
        super().__init__(env)
        self.terms = terms
        self.activity = Activity(takeover_s)

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.activity.reset()
        for _, term in self.terms.values():
            term.reset()
        self.activity.update(info["labels"], None)
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        labels = info.get("labels")
        if labels is None:
            raise RuntimeError(f"{type(self).__name__}: the step's info has no 'labels'; wrap the fdenv audio env "
                               "(RoomEnv), under TurnActions")
        self.activity.update(labels, action)
        values = {name: float(term(labels, self.activity)) for name, (_, term) in self.terms.items()}
        reward = float(reward) + sum(self.terms[n][0] * v for n, v in values.items())
        info = dict(info)
        info["reward_terms"] = {**info.get("reward_terms", {}), **values}
        return obs, reward, terminated, truncated, info


def _single(term_cls):
    class _Wrapper(_RewardWrapper, gym.utils.RecordConstructorArgs):
        def __init__(self, env: gym.Env, weight: float = 1.0, takeover_s: float = TAKEOVER_S, **params):
            gym.utils.RecordConstructorArgs.__init__(self, weight=weight, takeover_s=takeover_s, **params)
            _RewardWrapper.__init__(self, env, {term_cls.name: (float(weight), term_cls(**params))}, takeover_s)

    return _Wrapper


class PauseReward(_single(PauseTerm)):
    """Holding the floor through a user's mid-turn pauses (FDB pause handling, SPEC 6.1)."""


class BackchannelReward(_single(BackchannelTerm)):
    """Backchannels near TRPs, no take-over during a monologue (FDB backchannel, SPEC 6.2)."""


class ResponseReward(_single(ResponseTerm)):
    """A prompt, fresh onset after ``T`` / ``final`` / ``interrupt`` (SPEC 6.3, 6.4, 7)."""


class YieldReward(_single(YieldTerm)):
    """Stopping during an ``interrupt`` and in the ``N4R`` window (SPEC 6.4, 7)."""


class SilenceReward(_single(SilenceTerm)):
    """Silence through ``N1``/``N2``/``N3`` windows and while listening (SPEC 7)."""


class HoldReward(_single(HoldTerm)):
    """Going on with the answer through a backchannel, a side conversation or background speech
    (the overlap set's ``hold``)."""


class TalkCost(_single(TalkTerm)):
    """A small cost per loud frame."""


class TurnTakingReward(_RewardWrapper, gym.utils.RecordConstructorArgs):
    """The weighted sum of the behaviour terms.

    ``weights``: ``{name: weight}`` over ``pause``, ``backchannel``, ``response``, ``yield``,
    ``silence``, ``hold``, ``talk`` (missing names take ``DEFAULT_WEIGHTS``; weight 0 drops the term).
    ``params``: ``{name: {parameter: value}}`` for the terms' constructors (costs, penalties,
    ``tau_s``, ...). ``takeover_s``: the span from which a run is a take-over (0.72 s).
    """

    def __init__(self, env: gym.Env, weights: dict | None = None, params: dict | None = None,
                 takeover_s: float = TAKEOVER_S):
        gym.utils.RecordConstructorArgs.__init__(self, weights=weights, params=params, takeover_s=takeover_s)
        weights = {**DEFAULT_WEIGHTS, **dict(weights or {})}
        params = dict(params or {})
        unknown = sorted(set(weights) - set(TERMS)) + sorted(set(params) - set(TERMS))
        if unknown:
            raise ValueError(f"TurnTakingReward: unknown reward terms {unknown}; valid: {sorted(TERMS)}")
        terms = {name: (float(w), TERMS[name](**dict(params.get(name) or {}))) for name, w in weights.items() if w}
        super().__init__(env, terms, takeover_s)
