"""The reactive scheduler (SPEC 3): when each human clip starts, decided causally from the script
and from the assistant's activity.

Everything here is in samples on the source axis. The env calls ``advance(j, loud, active)`` once
per frame j, in order, as soon as the assistant's audio for frame j is known (for frame j >= 1
that is the action of step j-1); any clip that starts inside frame j is decided by then, so the
observation of frame j can contain it. What was decided is the played timeline, which the record
keeps and scoring uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..scene.schema import HOLD_LABELS, Scene
from ..windows import KNOBS, close_of, is_overlap_event
from .behaviour import (BC_DURING, BC_LABEL, FALSE_START_LABEL, REASK_LABEL, REPAIR_LABEL, REPAIR_UNADDRESSED,
                        REPAIR_YIELD, Behaviour, listeners)

RESPONSE_LABELS = ("T", "final")


@dataclass(frozen=True)
class SchedulerConfig:
    """SPEC 3's knobs (``fdenv.windows.KNOBS`` says what each one moves)."""

    response_idle_s: float = KNOBS["response_idle_s"]
    response_wait_s: float = KNOBS["response_wait_s"]
    max_response_s: float = KNOBS["max_response_s"]
    n4r_delay_s: float = KNOBS["n4r_delay_s"]
    interrupt_after_s: float = KNOBS["interrupt_after_s"]
    interrupt_timeout_s: float = KNOBS["interrupt_timeout_s"]
    tail_s: float = KNOBS["tail_s"]

    def __post_init__(self):
        # Checked here, at construction: a bad value would otherwise surface hundreds of steps
        # later (a string in arithmetic), never end an episode (tail_s=1e9) or silently shorten it.
        from ..errors import ConfigError

        for name, f in self.__dataclass_fields__.items():
            if not isinstance(f.default, float):
                continue  # only the time settings (seconds) are checked here
            value = getattr(self, name)
            lo, hi = _SECONDS_RANGE.get(name, _SECONDS_RANGE[None])
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ConfigError(f"scheduler.{name}={value!r}: expected a finite number of seconds in [{lo}, {hi}], "
                                  f"e.g. the default {f.default}")
            if not lo <= value <= hi:
                raise ConfigError(f"scheduler.{name}={value!r}: out of range; use seconds in [{lo}, {hi}] "
                                  f"(default {f.default})")
            object.__setattr__(self, name, float(value))


# Seconds each scheduler setting may take: wide enough for any scene, bounded so that an episode ends
# (and fits in memory). A zero wait or idle is allowed; negative times are not.
_SECONDS_RANGE = {None: (0.0, 120.0), "tail_s": (0.0, 30.0), "response_idle_s": (0.08, 30.0)}


@dataclass
class ScheduledClip:
    turn: int
    piece: int
    start: int  # source-axis sample
    length: int


@dataclass
class ScheduledExtra:
    """An unscripted human event (natural behaviour): a backchannel, or a competing start that
    drops out. Never scored; ``length`` is what is played (a false start is cut there)."""

    id: str
    speaker: str
    label: str
    text: str
    start: int
    length: int
    resolves: str | None = None  # a re-ask: the id of the request it repeats


@dataclass
class Reaction:
    """What a natural human did when turn ``turn`` was due while the assistant spoke unasked:
    ``pause`` / ``repair`` (then waited for it, at most a drawn hold) or ``talk_over``."""

    kind: str
    turn: int
    at: int  # when it was due (source axis)
    start: int | None = None  # when the turn then started


@dataclass
class ScheduledTurn:
    index: int
    start: int
    end: int
    trps: list[int] = field(default_factory=list)


class _Watch:
    """Shared by the watches: once the assistant is engaged, when has it been idle long enough?"""

    idle: int
    off: int | None

    def _idle_end(self, active: bool, t0: int) -> int | None:
        """Feed the detector state of the frame starting at t0; the sample at which ``idle`` of
        inactivity is reached (if inactive now)."""
        if active:
            self.off = None
        elif self.off is None:
            self.off = t0
        return None if self.off is None else self.off + self.idle


class ResponseWatch(_Watch):
    """Watches the assistant after a turn end ``e``: has it answered, and when is it done?

    ``engaged`` once the detector is active in the frame that contains ``e`` or has an onset in
    (e, e + wait]. Done at the first moment the detector has been inactive for ``idle`` after
    engagement, or at e + wait when never engaged. Used by the scheduler (T / final waits) and
    by the ``respond`` label.
    """

    def __init__(self, e: int, frame: int, idle: int, wait: int, cap: int | None = None):
        self.e, self.frame, self.idle, self.wait, self.cap = e, frame, idle, wait, cap
        self.engaged = False
        self.off: int | None = None  # start of the current inactive stretch, after engagement
        self.done_at: int | None = None

    def update(self, j: int, active: bool, onset: bool) -> int | None:
        """Feed frame j; returns the sample at which the watch ends if that falls in frame j."""
        if self.done_at is not None:
            return self.done_at
        t0, t1 = j * self.frame, (j + 1) * self.frame
        if t1 <= self.e:
            return None
        if not self.engaged and active and (t0 <= self.e or (onset and t0 <= self.e + self.wait)):
            self.engaged = True
        candidates = []
        if self.engaged:
            idle_end = self._idle_end(active, t0)
            if idle_end is not None:
                candidates.append(idle_end)
            if self.cap is not None:
                candidates.append(self.e + self.cap)
        else:
            candidates.append(self.e + self.wait)
        end = min(candidates) if candidates else None
        if end is not None and end < t1:
            self.done_at = end
            return end
        return None


class InterruptWatch(_Watch):
    """When the `interrupt` turn starts after a `final` ending at ``e`` (SPEC 3): the first of
    cumulative loud time since e reaching ``after``; e + timeout with no onset; ``idle`` of
    inactivity after an onset (a short answer that ended)."""

    def __init__(self, e: int, frame: int, after: int, timeout: int, idle: int):
        self.e, self.frame, self.after, self.timeout, self.idle = e, frame, after, timeout, idle
        self.spoken = 0
        self.reached: int | None = None  # when the cumulative loud time reached ``after``
        self.engaged = False
        self.off: int | None = None

    def update(self, j: int, loud: bool, active: bool, onset: bool) -> int | None:
        t0, t1 = j * self.frame, (j + 1) * self.frame
        if t1 <= self.e:
            return None
        lo = max(t0, self.e)
        candidates = []
        if loud:
            if self.reached is None and self.spoken + (t1 - lo) >= self.after:
                self.reached = lo + (self.after - self.spoken)  # may be t1 itself: kept for the next frame
            self.spoken += t1 - lo
        if self.reached is not None:
            candidates.append(self.reached)
        if not self.engaged and active and (t0 <= self.e or onset):
            self.engaged = True
        if self.engaged:
            idle_end = self._idle_end(active, t0)
            if idle_end is not None:
                candidates.append(idle_end)
        else:
            candidates.append(self.e + self.timeout)
        if not candidates:
            return None
        end = min(candidates)
        return end if end < t1 else None


def in_samples(sample_rate: int):
    """``fdenv.windows``' unit converter for times counted in samples."""
    return lambda sec: int(round(sec * sample_rate))


class Scheduler:
    """Lays out a scene's clips in time, turn by turn, reacting to the assistant.

    ``durations[i][p]`` is the length in samples of piece p of turn i (after TTS trimming).
    """

    def __init__(self, scene: Scene, durations: list[list[int]], sample_rate: int, frame_samples: int,
                 config: SchedulerConfig = SchedulerConfig(), delays: dict[str, int] | None = None,
                 behaviour: Behaviour | None = None, extra_lengths: dict[tuple[str, str], int] | None = None):
        self.scene, self.durations, self.sr, self.F, self.cfg = scene, durations, sample_rate, frame_samples, config
        self.behaviour = behaviour or Behaviour(config)  # paper: SPEC 3's constants
        # Unscripted events: the rendered length of each (speaker, text) they may use (none
        # without them: a scheduler driven without audio plays the script and its timings only).
        self.extra_lengths = extra_lengths or {}
        self.extras: list[ScheduledExtra] = []
        self.listeners = listeners(scene)
        self._busy_until = 0  # end of the latest human clip decided so far
        self._last_speaker: str | None = None
        self._compete: tuple | None = None  # (turn index, competing start) for the next turn
        self._responses = 0  # the assistant's answers so far, and listener backchannels in the current one
        self._answer_bcs = 0
        self.reactions: list[Reaction] = []
        self._pending_gap = False  # the pending start is a scripted gap (an intrusion may move it)
        self._watch_turn: int | None = None  # the turn whose end the current watch follows
        self._reasked: set[int] = set()
        self._cut_in = False
        self.delays = delays or {}
        self.turns: list[ScheduledTurn] = []
        self.clips: list[ScheduledClip] = []
        self._next = 0  # index of the next turn to schedule
        self._pending_start: int | None = None  # fixed start of the next turn, if known
        self._watch: ResponseWatch | InterruptWatch | None = None
        self.end_sample: int | None = None  # episode end (source axis), once decided
        self._windows_end = 0
        # The assistant's current response (for the episode end): it began at _response_start and
        # is over once the detector has been inactive (since _off) for response_idle_s.
        self._response_start: int | None = None
        self._off: int | None = 0
        first = scene.turns[0]
        self._pending_start = self._s(max(0.0, first.gap_s))

    def _s(self, seconds: float) -> int:
        return int(round(seconds * self.sr))

    # ---- scheduling ------------------------------------------------------------------
    def _schedule(self, i: int, start: int) -> None:
        turn = self.scene.turns[i]
        pieces = turn.pieces
        t = start
        trps: list[int] = []
        for p, piece in enumerate(pieces):
            n = self.durations[i][p]
            self.clips.append(ScheduledClip(i, p, t, n))
            t += n
            if p < len(pieces) - 1:
                if piece.trp_after:
                    trps.append(t)
                    t += self._s(self.scene.trp_gap_s)
                t += self._s(piece.silence_after_s)
        self.turns.append(ScheduledTurn(i, start, t, trps))
        self._next = i + 1
        self._windows_end = max(self._windows_end, self._window_end(turn.label, start, t))
        self._busy_until = max(self._busy_until, t)
        if turn.speaker in self.listeners:
            self._last_speaker = turn.speaker
        self._turn_extras(i, start, t, trps)
        self._plan_next(i, start, t)

    def _turn_extras(self, i: int, start: int, end: int, trps: list[int]) -> None:
        """Listener backchannels during turn i, and a competing start with it, as drawn."""
        turn, b = self.scene.turns[i], self.behaviour
        if not self.extra_lengths:
            return
        if turn.label in BC_DURING:
            others = [x for x in self.listeners if x != turn.speaker]
            places = [(x - start) / self.sr for x in trps]
            for rel, who, text in b.turn_backchannels(i, (end - start) / self.sr, places, others):
                self._add_extra(who, BC_LABEL, text, start + self._s(rel))
        if self._compete is not None and self._compete[0] == i:
            delay, drop, who, text = self._compete[1]
            self._add_extra(who, FALSE_START_LABEL, text, start + self._s(delay), self._s(drop))
        self._compete = None

    def _add_extra(self, speaker: str, label: str, text: str, start: int, cut: int | None = None,
                   resolves: str | None = None) -> int:
        n = self.extra_lengths[(speaker, text)]
        if cut is not None:
            n = min(n, cut)
        self.extras.append(ScheduledExtra(f"{label}{len(self.extras)}", speaker, label, text, start, n, resolves))
        self._busy_until = max(self._busy_until, start + n)
        self._windows_end = max(self._windows_end, start + n)
        return start + n

    def _react(self, j: int, active: bool) -> bool:
        """Turn ``_next`` is due in frame j at a scripted gap: if the assistant speaks unasked,
        its speaker reacts as drawn. True when the start moved (a wait began)."""
        self._pending_gap = False
        prev = self.scene.turns[self._next - 1]
        if not active or prev.label == "interrupt":  # (after an interrupt the assistant should answer)
            return False
        if self.scene.turns[self._next].label in HOLD_LABELS:  # talk among the humans, or a TV: not for it
            return False
        reaction = self.behaviour.intrusion_reaction(self._next)
        if reaction is None:
            return False
        kind, hold = reaction
        at = self._pending_start
        self.reactions.append(Reaction(kind, self._next, at))
        if kind == "talk_over":
            return False
        if kind == "repair" and self.extra_lengths:
            nxt = self.scene.turns[self._next]
            # it cut into someone's talk: yield politely; it started in a silence: nobody had addressed it
            text = REPAIR_YIELD if self._cut_in else REPAIR_UNADDRESSED
            at = self._add_extra(nxt.speaker, REPAIR_LABEL, text, at)
        # wait until the assistant has finished (a drawn resumption), at most ``hold``
        self._watch = ResponseWatch(at, self.F, self._s(self.behaviour.response_idle_s(self._next)), 0, self._s(hold))
        self._watch_turn = None
        self._pending_start = None
        return True

    def _reask(self, start: int) -> bool:
        """An unanswered request's patience ran out at ``start``: its asker may call again."""
        i = self._watch_turn
        if i is None or not self.extra_lengths or i in self._reasked or self.scene.turns[i].label != "T" or self._watch.engaged:
            return False
        wait = self.behaviour.reask(i)
        if wait is None:
            return False
        self._reasked.add(i)
        turn = self.scene.turns[i]
        end = self._add_extra(turn.speaker, REASK_LABEL, f"{self.scene.assistant_name}?", start, resolves=turn.id)
        self._watch = ResponseWatch(end, self.F, self._s(self.behaviour.response_idle_s(self._next)), self._s(wait),
                                    self._s(self.cfg.max_response_s))
        return True

    def _window_end(self, label: str, start: int, end: int) -> int:
        if label == "N4Q":  # its windows run to the N4R start, which may be drawn
            return end + self._s(self.behaviour.n4r_delay_s(self._next))
        return close_of(label, start, end, self.cfg, self._s)

    def _plan_next(self, i: int, start: int, end: int) -> None:
        self._watch = None
        self._pending_start = None
        self._pending_gap = False
        self._watch_turn = i
        if self._next >= len(self.scene.turns):
            return
        label = self.scene.turns[i].label
        nxt = self.scene.turns[self._next]
        s, F, b = self._s, self.F, self.behaviour
        if label == "N4Q":
            self._pending_start = end + s(b.n4r_delay_s(self._next))
        elif is_overlap_event(self.scene, self._next):  # overlap set: a drawn 1-4 s into the answer
            self._watch = InterruptWatch(end, F, s(b.event_after_s(self._next)),
                                         s(b.interrupt_timeout_s(self._next)), s(b.response_idle_s(self._next)))
        elif nxt.label == "interrupt":
            self._watch = InterruptWatch(end, F, s(b.interrupt_after_s(self._next)),
                                         s(b.interrupt_timeout_s(self._next)), s(b.response_idle_s(self._next)))
        elif label in RESPONSE_LABELS:
            self._watch = ResponseWatch(end, F, s(b.response_idle_s(self._next)), s(b.response_wait_s(self._next)),
                                        s(self.cfg.max_response_s))
        else:
            self._pending_start = max(b.earliest_start(start, end), end + s(b.gap_s(self._next, self.scene, label)))
            self._pending_gap = True
            speaker = self.scene.turns[i].speaker
            if nxt.speaker != speaker:
                others = [x for x in self.listeners if x not in (speaker, nxt.speaker)]
                compete = b.competing_start(self._next, others)
                self._compete = None if compete is None else (self._next, compete)

    def advance(self, j: int, loud: bool, active: bool, onset: bool) -> None:
        """Decide everything that starts inside frame j, given the assistant's frame j."""
        t0, t1 = j * self.F, (j + 1) * self.F
        if onset and (self._response_start is None or t0 - self._off >= self._s(self.cfg.response_idle_s)):
            self._response_start = t0  # a new response; a shorter pause (a breath) continues the old one
            self._responses += 1
            self._answer_bcs = 0
            self._cut_in = t0 < self._busy_until  # a human was speaking when it began
        self._off = None if active else (t0 if self._off is None else self._off)
        if (active and self.extra_lengths and isinstance(self._watch, ResponseWatch) and self._watch_turn is not None and self._watch.engaged
                and t0 >= self._busy_until
                and self._last_speaker and self._response_start is not None):
            # the asker backchannels during a long answer (the humans wait for it; nobody speaks)
            bc = self.behaviour.answer_backchannel(self._responses, self._answer_bcs)
            if bc is not None and t0 - self._response_start >= self._s(bc[0]):
                self._add_extra(self._last_speaker, BC_LABEL, bc[1], t0)
                self._answer_bcs += 1
        # Several turns can start in one frame (short clips, overlaps): loop until settled.
        while self._next < len(self.scene.turns):
            if self._pending_start is None and self._watch is not None:
                if isinstance(self._watch, InterruptWatch):
                    start = self._watch.update(j, loud, active, onset)
                else:
                    start = self._watch.update(j, active, onset)
                if start is None:
                    break
                if isinstance(self._watch, ResponseWatch) and self._reask(start):
                    continue
                self._watch = None
                self._pending_start = start
            if self._pending_start is None or self._pending_start >= t1:
                break
            if self._pending_gap and self._react(j, active):
                continue
            if self.reactions and self.reactions[-1].turn == self._next:
                self.reactions[-1].start = self._pending_start
            self._schedule(self._next, self._pending_start)
        if self._next >= len(self.scene.turns) and self.end_sample is None:
            self._maybe_end(j, active)

    def _maybe_end(self, j: int, active: bool) -> None:
        t0, t1 = j * self.F, (j + 1) * self.F
        # Windows are on microphone 0's axis: count the largest speaker delay in.
        windows_end = self._windows_end + max(self.delays.values(), default=0)
        if windows_end >= t1:
            return
        ready = None
        cap = None if self._response_start is None else self._response_start + self._s(self.cfg.max_response_s)
        if not active and (self._response_start is None or t1 - self._off >= self._s(self.cfg.response_idle_s)):
            # never spoke, or the response is over: it ended when the detector went inactive
            ready = max(windows_end, t0 if self._response_start is None else self._off)
        elif cap is not None and cap < t1:
            ready = max(windows_end, cap)
        if ready is not None:  # (never before the frame at hand, whatever tail_s is)
            self.end_sample = max(ready + self._s(self.cfg.tail_s), t1)

    @property
    def n_frames(self) -> int | None:
        return None if self.end_sample is None else math.ceil(self.end_sample / self.F)
