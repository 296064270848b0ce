"""The oracle's decisions in ``TurnActions``' space: targets for behaviour cloning.

``OracleTeacher`` reads the labels (privileged, like ``agents/oracle.py``) and the voice's state
and says which of silent / backchannel / speak the oracle would choose for the next frame:

- answer ``T``, ``final``, ``interrupt`` and ``N4Q`` ``response_delay_s`` after the turn ends
  (the oracle: 0.5 s), unless a human has taken the floor again since; with ``answer_all``, the
  end of every other human turn too (no measure scores speech after them once the floor is free);
- stop at once when ``expect`` is ``yield`` or ``silent``, when an ``interrupt`` or ``N4R``
  starts, when a new human turn starts over the utterance, or when the utterance is not one the
  oracle would have started (another policy started it: DAgger's correction);
- backchannel ``backchannel_delay_s`` after a TRP where ``expect`` is ``may_backchannel``;
- otherwise keep playing what plays, or stay silent.

Going on with a clip is target ``SPEAK`` (any non-silent action goes on).
"""

from __future__ import annotations

from .actions import ANSWERABLE, BACKCHANNEL, SILENT, SPEAK

FRAME_S = 0.08
# With ``answer_all``, the end of any of these turns is answered too, when nobody else takes the
# floor (what a policy that hears only the microphones can tell apart from a request's end).
_HUMAN_TURNS = ("ctx", "pause", "monologue", "N1", "N2", "N3", "N4R")


class OracleTeacher:
    def __init__(self, response_delay_s: float = 0.5, backchannel_delay_s: float = 0.16, backchannels: bool = True,
                 max_late_s: float = 3.0, answer_all: bool = False):
        self.response_delay_s = float(response_delay_s)
        self.answer_all = bool(answer_all)
        self.max_late_s = float(max_late_s)
        self.backchannel_delay_s = float(backchannel_delay_s)
        self.backchannels = bool(backchannels)
        self.reset()

    def reset(self) -> None:
        self._prev = None  # turn dict of the previous frame
        self._due: float | None = None  # time from which an answer should start
        self._bc_due: float | None = None
        self._utt_start: float | None = None
        self._granted = False  # the last decision started an answer
        self._intended = False  # the utterance under way is one the oracle started
        self._turn_start: dict = {}

    def config(self) -> dict:
        return {"response_delay_s": self.response_delay_s, "backchannel_delay_s": self.backchannel_delay_s,
                "backchannels": self.backchannels, "max_late_s": self.max_late_s, "answer_all": self.answer_all}

    def __call__(self, labels: dict, playing: str | None, armed: bool = True) -> int:
        """The target for the decision taken after hearing the frame of ``labels``, with
        ``playing`` the kind of clip that goes on after that frame (``"utterance"``,
        ``"backchannel"``, ``None``) and ``armed`` whether a non-silent decision would start a clip
        (``TurnVoice.armed``: not while the last decision holds). The teacher's plans (an answer due, a backchannel due) last
        until the voice shows they were carried out, so the targets stay right when another
        policy acted (DAgger)."""
        t = float(labels["t"])
        nxt = t + FRAME_S  # when the decided frame plays
        granted, self._granted = self._granted, False
        cur = labels["turn"] if labels["turn"]["id"] is not None else None
        prev = self._prev
        new_turn = cur is not None and (prev is None or cur["id"] != prev["id"])
        if new_turn:
            self._turn_start.setdefault(cur["id"], t)
        answerable = ANSWERABLE if not self.answer_all else ANSWERABLE + _HUMAN_TURNS
        if prev is not None and (cur is None or cur["id"] != prev["id"]) and prev["label"] in answerable:
            self._due = t + self.response_delay_s  # the oracle: the turn ended, answer after the delay
        self._prev = cur
        expect = labels["expect"]
        if new_turn and cur["label"] in ("interrupt", "N4R"):
            self._due = None
            return SILENT
        if expect in ("yield", "silent"):
            self._bc_due = None
            return SILENT
        if labels["trp"] and expect == "may_backchannel" and self.backchannels:
            self._bc_due = t + self.backchannel_delay_s
        if playing == "utterance":
            if self._utt_start is None:
                self._utt_start = t - FRAME_S
                self._intended = granted  # did the oracle's last decision start it?
            if not self._intended:
                return SILENT  # an utterance the oracle would not have started: stop it
            self._due = None  # the answer is under way
            # a human turn that started while the assistant was speaking: give the floor back
            if cur is not None and labels["speaking"] and self._turn_start.get(cur["id"], -1.0) > self._utt_start:
                return SILENT
            return SPEAK
        self._utt_start = None
        if playing == "backchannel":
            self._bc_due = None
            return SPEAK
        if self._due is not None and nxt >= self._due - 1e-9:
            ended = self._due - self.response_delay_s
            taken = cur is not None and self._turn_start.get(cur["id"], -1.0) > ended  # a new turn began since
            if taken or nxt > self._due + self.max_late_s:
                self._due = None  # someone else took the floor, or the moment has passed
                return SILENT
            if not armed:
                return SILENT  # release first: a clip starts on a decision after a silent one
            self._granted = True
            return SPEAK
        if self._bc_due is not None and nxt >= self._bc_due - 1e-9:
            if nxt > self._bc_due + 0.5 or expect != "may_backchannel":
                self._bc_due = None
                return SILENT
            return BACKCHANNEL if armed else SILENT
        return SILENT
