"""Per-frame labels (SPEC 2): who speaks, which turn, TRPs, what the assistant is expected to do.

``turn`` is the scripted turn under way (the latest to start); ``turns`` lists every turn under
way, the unscripted ones of natural humans (backchannels, competing starts) included.

Labels are causal: the labels of frame j use the played timeline decided up to frame j and the
assistant's activity up to frame j. Times are on microphone 0's axis (the played timeline).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..scene.schema import HOLD_LABELS, SILENCE_LABELS, Scene
from ..windows import CUTS_SILENCE, RESPOND_AFTER, knob, silence_end, yield_window
from .scheduler import ResponseWatch, in_samples

EXPECT = ("yield", "silent", "hold", "respond", "may_backchannel", "free")
# No turn under way. SPEC 2 writes this as None; a dict with None fields keeps the label's type
# fixed, which Gymnasium's vector envs need to merge infos across sub-environments.
NO_TURN = {"id": None, "speaker": None, "label": None, "addressee": None}
_BACKCHANNEL_OK = ("ctx", "pause", "monologue", "final")


@dataclass
class _LiveTurn:
    index: int
    label: str
    start: int
    end: int
    trps: list[int]
    info: dict  # the ``turn`` label: id, speaker, label, addressee
    extent: int  # last sample at which this turn still affects a label
    silent_until: int | None = None  # N1-N3: silence window end, cut later by T / N4Q
    yield_from: int | None = None  # N4R: the yield window
    yield_to: int | None = None


class Labeler:
    """Builds ``info["labels"]`` frame by frame. ``add_turn`` / ``add_clip`` as the scheduler
    decides them, then ``frame(j, active, onset)`` once per frame, in order. ``knobs``: the
    scheduler's settings (``respond`` lasts as long as the humans wait, ``fdenv.windows``)."""

    def __init__(self, scene: Scene, sample_rate: int, frame_samples: int, knobs=None, behaviour=None):
        self.scene, self.sr, self.F = scene, sample_rate, frame_samples
        self._behaviour = behaviour  # natural humans: how long they wait after each turn is drawn
        self._wait = int(round(knob(knobs, "response_wait_s") * sample_rate))
        self._idle = int(round(knob(knobs, "response_idle_s") * sample_rate))
        self._live: list[_LiveTurn] = []
        self._clips: list[tuple[int, int, str]] = []  # (start, end, speaker) not yet over
        self._watches: list[ResponseWatch] = []
        self._extras: list[tuple[int, int, dict]] = []
        self._silences: list[_LiveTurn] = []  # N1-N3 whose window a later T / N4Q may cut

    def add_turn(self, index: int, start: int, end: int, trps: list[int]) -> None:
        t = self.scene.turns[index]
        s = in_samples(self.sr)
        live = _LiveTurn(index, t.label, start, end, trps,
                         {"id": t.id, "speaker": t.speaker, "label": t.label, "addressee": t.addressee}, end)
        if t.label in SILENCE_LABELS:
            live.silent_until = live.extent = silence_end(end, s)
            self._silences.append(live)
        if t.label in CUTS_SILENCE:
            for w in self._silences:  # SPEC 7: a silence window is cut at the end of the next T / N4Q
                if w.start < start and w.silent_until > end:
                    w.silent_until = end
            self._silences = [w for w in self._silences if w.start > start]
        if t.label == "N4R":
            live.yield_from, live.yield_to = yield_window(start, end, s)
            live.extent = live.yield_to
        if t.label in RESPOND_AFTER:
            wait, idle = self._wait, self._idle
            if self._behaviour is not None:  # the same draws as the scheduler's wait after this turn
                s_ = in_samples(self.sr)
                wait, idle = s_(self._behaviour.response_wait_s(index + 1)), s_(self._behaviour.response_idle_s(index + 1))
            self._watches.append(ResponseWatch(end, self.F, idle, wait))
        self._live.append(live)

    def add_clip(self, start: int, end: int, speaker: str) -> None:
        self._clips.append((start, end, speaker))

    def add_extra(self, id_: str, speaker: str, label: str, start: int, end: int) -> None:
        """An unscripted human event (a backchannel, a competing start): heard (``speaking``) and
        listed in ``turns``, never the scored ``turn`` and never a change of ``expect``."""
        self._clips.append((start, end, speaker))
        self._extras.append((start, end, {"id": id_, "speaker": speaker, "label": label, "addressee": None}))

    def frame(self, j: int, active: bool, onset: bool) -> dict:
        t0, t1 = j * self.F, (j + 1) * self.F
        # Drop what can no longer matter (everything ends before this frame; windows are closed,
        # so one ending exactly at t0 still counts here).
        if self._live and self._live[0].extent < t0:
            self._live = [t for t in self._live if t.extent >= t0]
        if self._clips and self._clips[0][1] <= t0:
            self._clips = [c for c in self._clips if c[1] > t0]
        speaking = []
        for start, end, who in self._clips:
            if start < t1 and end > t0 and who not in speaking:
                speaking.append(who)
        turn = None
        trp = False
        yield_ = silent = hold = backchannel = False
        active_turns = []  # (start, info) of every turn under way: scripted and unscripted
        if self._extras:
            self._extras = [x for x in self._extras if x[1] > t0]
            active_turns = [(a, info) for a, b, info in self._extras if a < t1]
        for t in self._live:
            overlaps = t.start < t1 and t.end > t0
            if overlaps:
                active_turns.append((t.start, t.info))
                if turn is None or t.start >= turn_start:
                    turn, turn_start = t.info, t.start
                label = t.label
                if label == "interrupt":
                    yield_ = True
                elif label in ("duty", "T", "N4Q"):
                    silent = True
                elif label in HOLD_LABELS:  # an overlap event: keep the floor (go on with the answer)
                    hold = True
                elif label in _BACKCHANNEL_OK:
                    backchannel = True
                for x in t.trps:
                    if t0 <= x < t1:
                        trp = True
            if t.silent_until is not None and t.start < t1 and t.silent_until >= t0:
                silent = True
            if t.yield_from is not None and t.yield_from < t1 and t.yield_to >= t0:
                yield_ = True
        respond = False
        if self._watches:
            for w in self._watches:
                done = w.update(j, active, onset)
                if t1 > w.e and (done is None or done > t0):
                    respond = True
            self._watches = [w for w in self._watches if w.done_at is None or w.done_at > t0]
        if yield_:
            expect = "yield"
        elif silent:
            expect = "silent"
        elif hold:
            expect = "hold"
        elif respond:
            expect = "respond"
        elif backchannel:
            expect = "may_backchannel"
        else:
            expect = "free"
        return {
            "t": t0 / self.sr,
            "frame": j,
            "speaking": tuple(speaking),
            "turn": dict(NO_TURN if turn is None else turn),
            "turns": tuple(dict(info) for _, info in sorted(active_turns, key=lambda x: x[0])),
            "trp": trp,
            "expect": expect,
            "assistant_active": active,
        }
