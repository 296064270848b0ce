"""Human behaviour profiles: when the simulated humans start, wait, interrupt and resume.

``paper`` keeps SPEC 3's constants and the scripts' gaps exactly (results comparable with the two
papers). ``natural`` draws every human timing from a distribution (docs/behaviour.md cites the
study behind each one, or states the assumption where no study gives a number).

Each draw is keyed by (episode seed, scene id, event name, turn index): one uniform number per
key from a ``numpy.random.SeedSequence`` built from a hash of the key, turned into a value by the
distribution's inverse CDF. A draw never depends on the order in which draws are made or on what
the assistant did, so two agents run with the same seed meet the same humans wherever their own
behaviour does not change what the humans do (paired comparisons stay paired).

The scheduler's knobs stay meaningful under ``natural``: each one is the centre of its
distribution (``n4r_delay_s`` the mean, ``interrupt_after_s`` and ``response_idle_s`` the
median, ``response_wait_s`` the least patience, ``interrupt_timeout_s`` the median patience).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

PROFILES = ("paper", "natural")
DEFAULT_PROFILE = "natural"
# Turns whose end another human may talk over (unscored); every other turn ends before the next
# speaker starts, so scored turns are heard whole.
OVERLAPPABLE = ("ctx", "N1", "N2", "N3")


def check_profile(name) -> str:
    if not isinstance(name, str) or name not in PROFILES:
        from ..errors import ConfigError

        raise ConfigError(f"behaviour={name!r} is not valid; choose one of {list(PROFILES)} "
                         "('paper': SPEC 3's exact constants, 'natural': drawn human timings)")
    return name


# ---- distributions (inverse CDFs, so that one uniform number gives one value) --------------
def _norm_ppf(u: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(min(max(u, 1e-12), 1 - 1e-12))


def _norm_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@dataclass(frozen=True)
class SplitNormal:
    """Two half normals joined at the mode (different spreads left and right): a unimodal,
    possibly skewed distribution with a closed-form CDF."""

    mode: float
    left: float
    right: float
    lo: float = -math.inf  # values are clipped to [lo, hi]
    hi: float = math.inf

    def cdf(self, x: float) -> float:
        w = self.left / (self.left + self.right)  # mass left of the mode
        if x < self.mode:
            return 2 * w * _norm_cdf((x - self.mode) / self.left)
        return w + 2 * (1 - w) * (_norm_cdf((x - self.mode) / self.right) - 0.5)

    def ppf(self, u: float) -> float:
        w = self.left / (self.left + self.right)
        if u < w:
            x = self.mode + self.left * _norm_ppf(u / (2 * w))
        else:
            x = self.mode + self.right * _norm_ppf(0.5 + (u - w) / (2 * (1 - w)))
        return min(max(x, self.lo), self.hi)


@dataclass(frozen=True)
class LogNormal:
    median: float
    sigma: float  # of the log
    lo: float = 0.0
    hi: float = math.inf
    shift: float = 0.0  # added after drawing (a floor: shift + lognormal)

    def cdf(self, x: float) -> float:
        x = x - self.shift
        return 0.0 if x <= 0 else _norm_cdf(math.log(x / self.median) / self.sigma)

    def ppf(self, u: float) -> float:
        x = self.shift + self.median * math.exp(self.sigma * _norm_ppf(u))
        return min(max(x, self.lo), self.hi)


@dataclass(frozen=True)
class Normal:
    mean: float
    sd: float
    lo: float = -math.inf
    hi: float = math.inf

    def cdf(self, x: float) -> float:
        return _norm_cdf((x - self.mean) / self.sd)

    def ppf(self, u: float) -> float:
        return min(max(self.mean + self.sd * _norm_ppf(u), self.lo), self.hi)


# Floor-transfer offset between two humans (next start minus current end; negative = overlap).
# Mode +0.2 s (Levinson & Torreira 2015; Stivers et al. 2009), about 40 % overlaps (Heldner &
# Edlund 2010). The two spreads are our fit to those two numbers, not published values.
FTO = SplitNormal(mode=0.2, left=0.62, right=0.55, lo=-1.5, hi=2.5)
# The same speaker goes on with a new scripted turn: a within-speaker pause (assumption: median
# 0.5 s, the shipped scripts' median gap; Heldner & Edlund 2010 find pauses longer than gaps).
PAUSE = LogNormal(median=0.5, sigma=0.45, lo=0.15, hi=2.0)
# An overlapping next speaker never starts before this share of the current turn is heard.
MIN_HEARD = 0.5

# ---- unscripted human events (natural only): backchannels and competing starts ----------------
BC_LABEL = "bc"  # a human's backchannel (its own turn label; never scored)
FALSE_START_LABEL = "false_start"  # a competing start that drops out
REPAIR_LABEL = "repair"  # a human's short repair when the assistant intrudes
REASK_LABEL = "reask"  # the asker calls the assistant again ("Aria?") after an unanswered request
EXTRA_LABELS = (BC_LABEL, FALSE_START_LABEL, REPAIR_LABEL, REASK_LABEL)
REPAIR_YIELD = "sorry, go ahead"  # the assistant cut into the talk
REPAIR_UNADDRESSED = "I wasn't talking to you"  # nobody had addressed it
REACTIONS = ("pause", "talk_over", "repair")
REACTION_CHANCES = (0.4, 0.3, 0.3)  # assumption: no study gives these shares for a machine
REASK_CHANCE = 0.6  # assumption: the share of askers who call the assistant again
BC_PHRASES = ("mm-hmm", "yeah", "right", "uh-huh", "ha ha")  # the last: a short laugh
FALSE_STARTS = ("so I", "oh, and", "wait, I", "I think")
# Turns during which listeners backchannel (long enough ones): not inside pauses of `pause` turns
# (what FDB's pause set measures), not over requests to the assistant or the duty preamble.
BC_DURING = ("ctx", "monologue", "final", "N1", "N2", "N3", "N4R")
BC_MIN_TURN_S = 3.0  # listeners backchannel only in turns at least this long
BC_SLOT_S = 4.0  # at most one listener backchannel per this much of a turn (assumption)
BC_CHANCE = 0.5  # chance of a backchannel in each slot, or at each TRP (assumption)
COMPETE_CHANCE = 0.15  # chance that a third human also starts at a speaker change (assumption)


# Overlap events (the `overlap` set) come this much assistant speech into its answer: uniform,
# keyed per (seed, scene, event) under both profiles (the set's own design, Full-Duplex-Bench v1.5).
EVENT_AFTER_S = (1.0, 4.0)


class Behaviour:
    """``paper``: every timing is SPEC 3's knob or the script's gap (and the overlap set's drawn
    event point, which is part of that set's design)."""

    name = "paper"

    def __init__(self, config, seed: int = 0, scene_id: str = ""):
        self.cfg = config
        self.seed, self.scene_id = int(seed), str(scene_id)

    def event_after_s(self, i: int) -> float:
        """Seconds of assistant speech into its answer at which overlap event turn ``i`` starts."""
        lo, hi = EVENT_AFTER_S
        return lo + (hi - lo) * keyed_uniform(self.seed, self.scene_id, "overlap_event", i)

    def gap_s(self, i: int, scene, prev_label: str) -> float:
        """Start of turn ``i`` relative to the end of turn ``i - 1`` (no wait in between)."""
        return scene.turns[i].gap_s

    def earliest_start(self, prev_start: int, prev_end: int) -> int:
        """A next turn never starts before this sample."""
        return prev_start

    def n4r_delay_s(self, i: int) -> float:
        return self.cfg.n4r_delay_s

    def interrupt_after_s(self, i: int) -> float:
        return self.cfg.interrupt_after_s

    def interrupt_timeout_s(self, i: int) -> float:
        return self.cfg.interrupt_timeout_s

    def response_wait_s(self, i: int) -> float:
        return self.cfg.response_wait_s

    def response_idle_s(self, i: int) -> float:
        return self.cfg.response_idle_s

    def turn_backchannels(self, i: int, speech_s: float, places_s: list[float], listeners: list[str]):
        """Listener backchannels during turn ``i``: ``[(time after the turn start, speaker, text)]``."""
        return []

    def answer_backchannel(self, response: int, k: int):
        """The k-th listener backchannel in the assistant's ``response``-th answer: ``(seconds of
        the answer before it, text)``, or ``None``."""
        return None

    def competing_start(self, i: int, others: list[str]):
        """A third human who starts with turn ``i`` and drops out: ``(delay after the turn's start
        s, drop-out after s, speaker, text)`` or ``None``."""
        return None

    def intrusion_reaction(self, i: int):
        """Turn ``i`` is due while the assistant speaks unasked: ``(reaction, hold s)`` with the
        reaction one of REACTIONS (``hold``: the longest the speaker waits for it to finish), or
        ``None`` (the scripted start, as SPEC 3)."""
        return None

    def reask(self, i: int) -> float | None:
        """The asker of request ``i`` calls the assistant again at the end of their patience:
        the seconds they then wait for an answer onset, or ``None`` (no re-ask)."""
        return None

    def describe(self) -> dict:
        return {"profile": self.name}


def listeners(scene) -> list[str]:
    """The humans who take part in the talk (not a voice that only reads the duty preamble, nor a
    TV or radio that only plays background speech)."""
    return [sp.name for sp in scene.speakers
            if any(t.speaker == sp.name and t.label not in ("duty", "background") for t in scene.turns)]


def extra_phrases(scene) -> tuple[str, ...]:
    """Every unscripted phrase a natural human of ``scene`` may say."""
    return BC_PHRASES + FALSE_STARTS + (REPAIR_YIELD, REPAIR_UNADDRESSED, f"{scene.assistant_name}?")


def unscripted_clips(scene, voices: dict[str, str]) -> list[tuple[str, str, str]]:
    """``(speaker, text, voice)`` of every clip natural humans may add to ``scene`` (``voices``
    from ``render.voice_map``): the env renders them at reset, ``fdenv-scenes render`` ahead."""
    return [(sp, text, voices[sp]) for sp in listeners(scene) for text in extra_phrases(scene)]


class NaturalBehaviour(Behaviour):
    """``natural``: human timings drawn per (seed, scene, event), centred on the knobs."""

    name = "natural"

    def __init__(self, config, seed: int, scene_id: str):
        super().__init__(config, seed, scene_id)

    def uniform(self, event: str, i: int) -> float:
        """The one uniform number of (seed, scene, event, i), in (0, 1)."""
        return keyed_uniform(self.seed, self.scene_id, event, i)

    def gap_s(self, i: int, scene, prev_label: str) -> float:
        turn, prev = scene.turns[i], scene.turns[i - 1]
        u = self.uniform("gap", i)
        if turn.speaker == prev.speaker:
            return PAUSE.ppf(u)
        if prev_label not in OVERLAPPABLE:  # the gap part only: a scored turn is heard to its end
            u = FTO.cdf(0.0) + u * (1.0 - FTO.cdf(0.0))
            return max(FTO.ppf(u), 0.0)
        return FTO.ppf(u)

    def earliest_start(self, prev_start: int, prev_end: int) -> int:
        return prev_start + int(math.ceil(MIN_HEARD * (prev_end - prev_start)))

    def n4r_delay_s(self, i: int) -> float:
        # Assumption (no study): the resolver waits about as long as the paper's 3 s.
        c = self.cfg.n4r_delay_s
        return Normal(c, 0.5, lo=c - 1.0, hi=c + 1.5).ppf(self.uniform("n4r_delay", i))

    def interrupt_after_s(self, i: int) -> float:
        # Assumption: the barge-in point, centred on the paper's 1.5 s of assistant speech.
        c = self.cfg.interrupt_after_s
        return LogNormal(c, 0.35, lo=0.4 * c, hi=2.7 * c).ppf(self.uniform("barge_in", i))

    def interrupt_timeout_s(self, i: int) -> float:
        return self._patience(self.cfg.interrupt_timeout_s, "interrupt_patience", i)

    def response_wait_s(self, i: int) -> float:
        return self._patience(self.cfg.interrupt_timeout_s, "patience", i)

    def _patience(self, median: float, event: str, i: int) -> float:
        # Assumption (no study): never before response_wait_s (SPEC 7's 5 s response window),
        # median at the paper's 6 s interrupt timeout, a long right tail, at most 12 s.
        floor = self.cfg.response_wait_s
        extra = max(median - floor, 0.1)
        return LogNormal(extra, 0.6, lo=floor, hi=floor + 7.0, shift=floor).ppf(self.uniform(event, i))

    def response_idle_s(self, i: int) -> float:
        # Assumption: the silence before a human goes on after the assistant's answer, centred on
        # the paper's 1.0 s (after the detector's 240 ms hold).
        c = self.cfg.response_idle_s
        return LogNormal(c, 0.35, lo=0.25 * c, hi=3.0 * c).ppf(self.uniform("resume", i))

    def _pick(self, options, event: str, i: int):
        return options[min(int(self.uniform(event, i) * len(options)), len(options) - 1)]

    def turn_backchannels(self, i, speech_s, places_s, listeners):
        if not listeners or speech_s < BC_MIN_TURN_S:
            return []
        if places_s:  # TRPs: the listener's onset about 0.2 s after the place (FDB's target)
            cands = [(k, t + 0.1 + 0.2 * self.uniform("bc_at", 100 * i + k)) for k, t in enumerate(places_s)]
        else:  # one candidate per slot, at least 1 s into the turn and 1 s before its end
            slots = int((speech_s - 2.0) // BC_SLOT_S) + 1
            width = min(BC_SLOT_S, speech_s - 2.0)
            cands = [(k, 1.0 + k * BC_SLOT_S + width * self.uniform("bc_at", 100 * i + k)) for k in range(slots)]
        out = []
        for k, t in cands:
            if t <= speech_s - 0.6 and self.uniform("bc", 100 * i + k) < BC_CHANCE:
                out.append((t, self._pick(listeners, "bc_who", 100 * i + k), self._pick(BC_PHRASES, "bc_text", 100 * i + k)))
        return out

    def answer_backchannel(self, response, k):
        # Assumption: a listener nods about every 4 s of a long answer (the first after 3-6 s).
        if k >= 4:
            return None
        after = 3.0 + 3.0 * self.uniform("answer_bc_first", response) + sum(
            3.0 + 2.0 * self.uniform("answer_bc_next", 10 * response + m) for m in range(k))
        return after, self._pick(BC_PHRASES, "answer_bc_text", 10 * response + k)

    def competing_start(self, i, others):
        if not others or self.uniform("compete", i) >= COMPETE_CHANCE:
            return None
        return (0.15 * self.uniform("compete_delay", i), 0.25 + 0.35 * self.uniform("compete_drop", i),
                self._pick(others, "compete_who", i), self._pick(FALSE_STARTS, "compete_text", i))

    def intrusion_reaction(self, i):
        u, acc = self.uniform("intrusion", i), 0.0
        kind = REACTIONS[-1]
        for name, p in zip(REACTIONS, REACTION_CHANCES):
            acc += p
            if u < acc:
                kind = name
                break
        # assumption: a speaker waits about 2 s for an intruding assistant, then talks anyway
        return kind, LogNormal(2.0, 0.5, lo=0.5, hi=6.0).ppf(self.uniform("intrusion_hold", i))

    def reask(self, i):
        if self.uniform("reask", i) >= REASK_CHANCE:
            return None
        # assumption: after calling again, the asker waits 2-6 s for an answer before going on
        return 2.0 + 4.0 * self.uniform("reask_wait", i)

    def describe(self) -> dict:
        return {"profile": self.name}


def keyed_uniform(seed: int, scene_id: str, event: str, i: int) -> float:
    digest = hashlib.sha256(f"{scene_id}\x1f{event}\x1f{i}".encode()).digest()
    words = np.frombuffer(digest[:16], dtype="<u4").tolist()
    rng = np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, *words]))
    return float(rng.random()) or 0.5 ** 53  # (0, 1): the inverse CDFs need an open interval


def keyed_seed(seed: int, scene_id: str, what: str) -> int:
    """A 31-bit seed for ``what`` (the room's geometry, say) of one (seed, scene)."""
    return int(keyed_uniform(seed, scene_id, what, 0) * (2**31 - 1))


def make_behaviour(profile: str, config, seed: int, scene_id: str) -> Behaviour:
    check_profile(profile)
    return Behaviour(config, seed, scene_id) if profile == "paper" else NaturalBehaviour(config, seed, scene_id)
