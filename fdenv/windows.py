"""Every timing window of SPEC 2, 3, 6 and 7 in one table, and the functions that place them.

A window is opened and closed by events of the *played* timeline (the turn starts and ends the
scheduler decided, on microphone 0's axis) plus a constant of the SPEC or a scheduler knob. The
scheduler (when humans go on, when the episode may end), the labels (``expect``), the FDB and MPE
scorers and the plots all read their windows here, so one edit moves every user of a window.

``RULES`` is the table, for people: which turn opens a window, where it opens and closes, what
moves it. The functions below are the same rules as code. They take played times in any unit (the
scheduler and the labels count samples, scoring counts seconds): ``s`` converts a length in
seconds to that unit (identity for seconds). Knobs are the scheduler's settings (a
``SchedulerConfig``, a dict such as a record's ``config["scheduler"]``, or ``None`` for SPEC 3's
defaults); a drawn value (a human's reaction time) reaches scoring as a played time, never as a knob.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple

from .scene.schema import HOLD_LABELS, SILENCE_LABELS

# ---- SPEC's constants (measure definitions: no knob moves them) -----------------------------
TURN_TAKING_S = 8.0  # FDB turn-taking: [e, e + 8] after the end of `final` (SPEC 6.3)
INTERRUPTION_S = 10.0  # FDB interruption: (s, f + 10] after the `interrupt` turn (SPEC 6.4)
PRESENCE_S = 5.0  # MPE response presence / fresh onset: [e, e + 5] after the end of `T` (SPEC 7)
SILENCE_TAIL_S = 1.0  # an N1-N3 window runs to the turn's end + 1 s (SPEC 7)
YIELD_DEADLINE_S = 2.0  # silent at r + 2 s (SPEC 7)
YIELD_TAIL_S = 0.5  # ... and no intrusion until max(r_end, r + 2) + 0.5 s
OVERLAP_S = 10.0  # overlap events: scored from the event's start to its end + 10 s (as the interruption window)

# ---- SPEC 3's scheduler knobs and their defaults (the `paper` behaviour) --------------------
KNOBS = {
    "response_idle_s": 1.0,  # inactivity that ends an answer
    "response_wait_s": 5.0,  # no onset within this after T / final: humans go on
    "max_response_s": 20.0,  # an answer is cut this long after its start
    "n4r_delay_s": 3.0,  # N4R starts this long after the end of N4Q
    "interrupt_after_s": 1.5,  # the interrupt comes after this much assistant speech
    "interrupt_timeout_s": 6.0,  # ... or this long after `final` with no onset
    "tail_s": 2.0,  # the episode runs this long past its last open window
}

Seconds = Callable[[float], float]


def seconds(x: float) -> float:
    """The unit converter for times in seconds."""
    return x


def knob(knobs, name: str) -> float:
    """A scheduler knob from a ``SchedulerConfig``, a dict or ``None`` (SPEC 3's default)."""
    if knobs is None:
        return KNOBS[name]
    if isinstance(knobs, dict):
        return float(knobs.get(name, KNOBS[name]))
    return float(getattr(knobs, name))


@dataclass(frozen=True)
class Rule:
    """One row of the table."""

    name: str
    opened_by: tuple[str, ...]  # labels of the played turn the window belongs to
    opens: str
    closes: str
    moved_by: str  # the knob, played event or activity that moves it ("" = SPEC's constant only)
    spec: str
    used_by: tuple[str, ...]


RULES: tuple[Rule, ...] = (
    # scoring windows (closed intervals unless said otherwise)
    Rule("pause", ("pause",), "turn start", "turn end", "the played turn", "6.1", ("score.fdb", "plots")),
    Rule("backchannel", ("monologue",), "turn start", "turn end", "the played turn", "6.2", ("score.fdb", "plots")),
    Rule("turn_taking", ("final",), "turn end e", "e + 8 s", "the played turn end", "6.3",
         ("score.fdb", "sim.scheduler (episode end)", "plots")),
    Rule("interruption", ("interrupt",), "turn start s (open)", "turn end f + 10 s", "the played turn", "6.4",
         ("score.fdb", "sim.scheduler (episode end)", "plots")),
    Rule("presence", ("T",), "turn end e", "e + 5 s", "the played turn end", "7",
         ("score.mpe", "sim.scheduler (episode end)", "plots")),
    Rule("reask", ("reask",), "re-ask start", "re-ask end + 5 s", "the played re-ask (natural humans)",
         "7 (answered after a re-ask; behaviour profiles)", ("score.mpe",)),
    Rule("silence", ("N1", "N2", "N3"), "turn start", "turn end + 1 s, cut at the end of the next T or N4Q",
         "the played turns", "7; 2 (`silent`)", ("score.mpe", "sim.labels", "sim.scheduler (episode end)", "plots")),
    Rule("n4_window", ("N4Q",), "turn start", "start r of its N4R (q + n4r_delay_s when scheduled)",
         "n4r_delay_s, or the played N4R start", "7 (window response)", ("score.mpe", "sim.scheduler (episode end)", "plots")),
    Rule("n4_gap", ("N4Q",), "turn end q (open)", "start r of its N4R", "n4r_delay_s, or the played N4R start",
         "7 (eligible); 2 (`free`)", ("score.mpe", "sim.labels")),
    Rule("yield", ("N4R",), "r + 2 s", "max(r_end, r + 2 s) + 0.5 s", "the played N4R", "7; 2 (`yield`)",
         ("score.mpe", "sim.labels", "sim.scheduler (episode end)", "plots")),
    # label and scheduler windows (they follow the assistant's activity)
    Rule("respond", ("T", "final", "interrupt"), "turn end e",
         "response_idle_s of detector inactivity after activity, or e + response_wait_s with none",
         "response_idle_s, response_wait_s, the assistant", "2 (`respond`)", ("sim.labels",)),
    Rule("wait", ("T", "final"), "turn end e",
         "next turn: response_idle_s of inactivity after activity (at most e + max_response_s), "
         "or e + response_wait_s with no onset", "response_idle_s, response_wait_s, max_response_s, the assistant",
         "3", ("sim.scheduler",)),
    Rule("n4r_start", ("N4Q",), "turn end q", "N4R starts at q + n4r_delay_s", "n4r_delay_s", "3", ("sim.scheduler",)),
    Rule("interrupt_start", ("final",), "turn end e",
         "interrupt starts at the first of: interrupt_after_s of assistant speech since e; e + interrupt_timeout_s "
         "with no onset; response_idle_s of inactivity after an onset",
         "interrupt_after_s, interrupt_timeout_s, response_idle_s, the assistant", "3", ("sim.scheduler",)),
    Rule("overlap", ("interrupt", "bc", "side", "background"), "event start s (open)", "event end f + 10 s",
         "the played event turns (a side conversation: its first turn's start to its last turn's end)",
         "overlap set (FDB v1.5)", ("score.overlap", "sim.scheduler (episode end)")),
    Rule("hold", HOLD_LABELS, "turn start", "turn end", "the played turn", "overlap set; 2 (`hold`)",
         ("sim.labels",)),
    Rule("overlap_start", ("final",), "turn end e",
         "the event starts at the first of: a drawn 1-4 s of assistant speech since e (uniform, keyed per seed, "
         "scene and event); e + interrupt_timeout_s with no onset; response_idle_s of inactivity after an onset",
         "interrupt_timeout_s, response_idle_s, the draw, the assistant", "overlap set; 3 (as `interrupt_start`)",
         ("sim.scheduler",)),
    Rule("episode_end", (), "latest of: last clip end, every window's close, the current response's end",
         "that + tail_s", "tail_s, max_response_s", "3", ("sim.scheduler", "sim.replay")),
)
TABLE = {r.name: r for r in RULES}

CUTS_SILENCE = ("T", "N4Q")  # a silence window ends at the latest with the next of these
RESPOND_AFTER = ("T", "final", "interrupt")


# ---- the rules as code ------------------------------------------------------------------------


def presence_window(e, s: Seconds = seconds) -> tuple:
    return e, e + s(PRESENCE_S)


def reask_window(start, end, s: Seconds = seconds) -> tuple:
    """An answer after a natural asker's re-ask ("Aria?"): from its start to its end + 5 s."""
    return start, end + s(PRESENCE_S)


def turn_taking_window(e, s: Seconds = seconds) -> tuple:
    return e, e + s(TURN_TAKING_S)


def interruption_end(f, s: Seconds = seconds):
    """The end of the interruption window (s, f + 10 s]."""
    return f + s(INTERRUPTION_S)


def silence_end(end, s: Seconds = seconds):
    """The end of an N1-N3 window before any cut."""
    return end + s(SILENCE_TAIL_S)


def yield_window(r, r_end, s: Seconds = seconds) -> tuple:
    """``[r + 2 s, max(r_end, r + 2 s) + 0.5 s]`` for an N4R turn ``[r, r_end]``."""
    a = r + s(YIELD_DEADLINE_S)
    return a, max(r_end, a) + s(YIELD_TAIL_S)


def close_of(label: str, start, end, knobs=None, s: Seconds = seconds):
    """The last moment at which a scoring window opened by a turn (``label``, ``[start, end]``)
    is still open; ``end`` for a turn that opens none. The scheduler and replay end episodes with
    it. N4Q's windows run to the N4R start, ``n4r_delay_s`` after ``end`` as scheduled."""
    if label == "N4R":
        return yield_window(start, end, s)[1]
    if label == "N4Q":
        return end + s(knob(knobs, "n4r_delay_s"))
    if label in SILENCE_LABELS:
        return silence_end(end, s)
    after = {"final": TURN_TAKING_S, "interrupt": INTERRUPTION_S, "T": PRESENCE_S}.get(label)
    if label in HOLD_LABELS:
        after = OVERLAP_S
    return end if after is None else end + s(after)


def is_overlap_event(scene, i: int) -> bool:
    """Turn ``i`` opens an overlap event: a ``bc``/``side``/``background`` turn right after the
    ``final`` turn it overlaps, or an ``interrupt`` there in an ``overlap`` scene. The scheduler
    starts it on the assistant's active time (``overlap_start``)."""
    turns = scene.turns
    if i <= 0 or i >= len(turns) or turns[i - 1].label != "final":
        return False
    return turns[i].label in HOLD_LABELS or (turns[i].label == "interrupt" and scene.kind == "overlap")


def overlap_events(turns) -> list[tuple[list, float, float]]:
    """``(event turns, start, end)`` of each overlap event of a played timeline: a run of
    ``bc``/``side``/``background`` turns (a side conversation has two), or an ``interrupt``."""
    out: list = []
    for t in sorted(turns, key=lambda t: t.start):
        if t.label == "side" and out and out[-1][0][-1].label == "side":
            run = out[-1][0] + [t]
            out[-1] = (run, out[-1][1], max(out[-1][2], t.end))
        elif t.label in HOLD_LABELS + ("interrupt",):
            out.append(([t], t.start, t.end))
    return out


class Window(NamedTuple):
    name: str  # a RULES name
    turn_id: str
    label: str
    start: float
    end: float


def silence_windows(turns) -> list[tuple[object, float, float]]:
    """``(turn, start, end)`` for each N1-N3 played turn: turn start to turn end + 1 s, cut at the
    end of the next ``T`` or ``N4Q`` that starts after it."""
    ordered = sorted(turns, key=lambda t: t.start)
    out = []
    for i, t in enumerate(ordered):
        if t.label not in SILENCE_LABELS:
            continue
        end = silence_end(t.end)
        for u in ordered[i + 1:]:
            if u.label in CUTS_SILENCE and u.start > t.start:
                end = min(end, u.end)
                break
        out.append((t, t.start, end))
    return out


def n4_pairs(turns) -> list[tuple[object, object]]:
    """``(N4Q, N4R)`` played turn pairs (the N4R that resolves each N4Q)."""
    out = []
    for t in turns:
        if t.label == "N4Q":
            r = next((u for u in turns if u.label == "N4R" and u.resolves == t.id), None)
            if r is not None:
                out.append((t, r))
    return out


def played_windows(turns: Iterable) -> list[Window]:
    """Every scoring window of a played timeline (``PlayedTurn``-like objects in seconds), in
    turn order: what the scorers look at and the plots shade."""
    turns = list(turns)
    out: list[Window] = []
    silences = {id(t): (a, b) for t, a, b in silence_windows(turns)}
    resolved = {id(q): r for q, r in n4_pairs(turns)}
    for t in turns:
        if t.label == "pause":
            out.append(Window("pause", t.id, t.label, t.start, t.end))
        elif t.label == "monologue":
            out.append(Window("backchannel", t.id, t.label, t.start, t.end))
        elif t.label == "final":
            out.append(Window("turn_taking", t.id, t.label, *turn_taking_window(t.end)))
        elif t.label == "interrupt":
            out.append(Window("interruption", t.id, t.label, t.start, interruption_end(t.end)))
        elif t.label == "T":
            out.append(Window("presence", t.id, t.label, *presence_window(t.end)))
        elif t.label in SILENCE_LABELS:
            out.append(Window("silence", t.id, t.label, *silences[id(t)]))
        elif t.label == "N4Q" and id(t) in resolved:
            r = resolved[id(t)]
            out.append(Window("n4_window", t.id, t.label, t.start, r.start))
            out.append(Window("n4_gap", t.id, t.label, t.end, r.start))
        elif t.label == "N4R":
            out.append(Window("yield", t.id, t.label, *yield_window(t.start, t.end)))
    return out
