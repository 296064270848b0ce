"""Room configuration: presets (YAML files in ``presets/``) and overrides, validated.

``RoomSpec.from_config(room)`` takes what ``gym.make(..., room=...)`` and the CLI receive (SPEC 4):
``None`` (the ``anechoic`` default), a preset name, a dict ``{"preset": name, <field>: value, ...}``
(a dict without ``preset`` starts from ``anechoic``), or a ``RoomSpec``. Every problem raises
``ValueError`` naming the field and the valid choices or range.

Coordinates: metres, room frame of pyroomacoustics: the origin is a floor corner, ``x`` and ``y``
span the floor, ``z`` points up.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .effort import MAX_EFFORT_DB

PRESET_DIR = Path(__file__).resolve().parent / "presets"
DEFAULT_PRESET = "anechoic"
MIC_ARRAYS = ("mono", "pair", "circular4")
# self: the microphones' own noise only; hvac: building services (NC curve); road: a car's road noise
NOISE_KINDS = ("none", "self", "white", "pink", "babble", "hvac", "road")
POINT_NOISE_KINDS = ("fan", "tv")
SPEED_OF_SOUND = 343.0  # m/s, pyroomacoustics' default constant

# Fields that describe geometry: they must be null for the anechoic preset.
_GEOMETRY = ("size", "array_position", "loudspeaker_offset", "distance", "height", "seats", "materials")
SURFACES = ("floor", "ceiling", "walls")


def preset_names() -> tuple[str, ...]:
    """Names of the shipped presets (the YAML files in ``fdenv/room/presets``)."""
    return tuple(sorted(p.stem for p in PRESET_DIR.glob("*.yaml")))


@lru_cache(maxsize=None)
def _preset_data(name: str) -> dict:
    path = PRESET_DIR / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):  # pragma: no cover - shipped files are dicts
        raise ValueError(f"room preset file {path.name} is not a mapping")
    return data


def _fail(field: str, problem: str):
    raise ValueError(f"room: {field}: {problem}")


def _number(field: str, value: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(field, f"expected a number in {'(' if lo_open else '['}{lo}, {hi}], got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v > hi or v < lo or (lo_open and v == lo):
        _fail(field, f"{v:g} is out of range; expected {'(' if lo_open else '['}{lo}, {hi}]")
    return v


def _vector(field: str, value: Any, n: int) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != n:
        _fail(field, f"expected a list of {n} numbers, got {value!r}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
            _fail(f"{field}[{i}]", f"expected a finite number, got {v!r}")
        out.append(float(v))
    return tuple(out)


def _plain(value: Any) -> Any:
    """Hydra's DictConfig/ListConfig and tuples to plain dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class NoiseSource:
    """A point noise source: ``fan`` (low-pass filtered noise) or ``tv`` (speech clips).

    ``position`` in metres, or ``None`` for a seeded position; ``level_db`` is its level at
    microphone 0 relative to the diffuse noise (or to the other point sources when the diffuse
    noise is ``none``), before the total is scaled to the SNR.
    """

    kind: str
    position: tuple[float, float, float] | None = None
    level_db: float = 0.0


def _materials(raw) -> tuple[tuple[str, str], ...]:
    """``{floor: name, ceiling: name, walls: name}`` (or the pairs ``to_dict`` gives) -> pairs."""
    if raw is None or (isinstance(raw, (Mapping, list, tuple)) and len(raw) == 0):
        return ()
    try:
        d = dict(raw)
    except (TypeError, ValueError):
        d = None
    if not isinstance(raw, (Mapping, list, tuple)) or d is None or set(d) != set(SURFACES):
        _fail("materials", "expected {floor: name, ceiling: name, walls: name} with names from "
              "pyroomacoustics' materials database, or null for one frequency-independent absorption")
    import pyroomacoustics as pra  # only for rooms that name materials (they will simulate anyway)

    table = pra.materials_absorption_table
    for surface in SURFACES:
        name = d[surface]
        if not isinstance(name, str) or name not in table or name == "anechoic":
            _fail(f"materials.{surface}", f"unknown material {name!r}; valid choices: names from "
                  "pyroomacoustics' materials database, e.g. " + ", ".join(list(table)[1:6]))
    return tuple((surface, d[surface]) for surface in SURFACES)


@dataclass(frozen=True)
class RoomSpec:
    """A validated room configuration. See the preset YAML files for what each field means."""

    preset: str = DEFAULT_PRESET
    size: tuple[float, float, float] | None = None
    rt60: float = 0.0
    mics: str = "mono"
    array_position: tuple[float, float, float] | None = None
    loudspeaker_offset: tuple[float, float, float] | None = None
    distance: tuple[float, float] | None = None
    height: tuple[float, float] | None = None
    min_separation_deg: float = 0.0
    wall_margin: float = 0.0
    noise: str = "none"
    snr_db: float = 30.0
    # The room's background noise level in dB(A) (docs/rooms.md): picks the NC curve that shapes
    # ``hvac`` noise; the level at the microphones is set by ``snr_db``.
    noise_dba: float = 40.0
    babble_talkers: int = 6
    noise_sources: tuple[NoiseSource, ...] = ()
    echo_gain: float = 0.0
    max_order: int | None = None
    # Fixed places (mouth positions) the talkers are seated at, in a seeded order (a car's seats);
    # empty: talkers are placed by ``distance``, ``height`` and ``min_separation_deg``.
    seats: tuple[tuple[float, float, float], ...] = ()
    # Surface materials by name from pyroomacoustics' database (octave-band energy absorption):
    # ((floor, name), (ceiling, name), (walls, name)); empty: one frequency-independent absorption.
    # Their band shape is kept; one factor scales all of them to meet ``rt60`` (sim.absorption_for).
    materials: tuple[tuple[str, str], ...] = ()
    air_absorption: bool = False  # ISO 9613-1 air absorption (pyroomacoustics), per octave band
    # How far the talkers raise their voices above normal effort, in dB(A) (the Lombard effect):
    # their speech gets that effort's spectrum (ANSI S3.5-1997, ``effort.py``); 0 normal, 7.1 raised.
    vocal_effort_db: float = 0.0

    # ------------------------------------------------------------------ construction
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_config(cls, room: str | Mapping | RoomSpec | None = None) -> RoomSpec:
        """Build from ``None`` (anechoic), a preset name, a dict of overrides or a RoomSpec."""
        if isinstance(room, RoomSpec):
            return room
        if room is None:
            room = {}
        elif isinstance(room, str):
            room = {"preset": room}
        elif isinstance(room, Mapping):
            room = _plain(room)
        else:
            raise ValueError(
                f"room: expected a preset name, a dict or None, got {type(room).__name__}; "
                f"presets: {', '.join(preset_names())}"
            )
        preset = room.get("preset", DEFAULT_PRESET)
        if not isinstance(preset, str) or preset not in preset_names():
            _fail("preset", f"unknown preset {preset!r}; valid choices: {', '.join(preset_names())}")
        valid = cls.field_names()
        unknown = sorted(set(room) - set(valid))
        if unknown:
            _fail(unknown[0], f"unknown field; valid fields: {', '.join(valid)}")
        data = dict(_preset_data(preset))
        data.update({k: v for k, v in room.items() if k != "preset"})
        data["preset"] = preset
        return cls._validated(data)

    @classmethod
    def _validated(cls, d: dict) -> RoomSpec:
        preset = d["preset"]
        anechoic = preset == "anechoic"

        mics = d.get("mics", "mono")
        if mics not in MIC_ARRAYS:
            _fail("mics", f"unknown array {mics!r}; valid choices: {', '.join(MIC_ARRAYS)}")
        noise = d.get("noise", "none")
        if noise not in NOISE_KINDS:
            _fail("noise", f"unknown noise {noise!r}; valid choices: {', '.join(NOISE_KINDS)}")
        snr_db = _number("snr_db", d.get("snr_db", 30.0), -20.0, 100.0)
        noise_dba = _number("noise_dba", d.get("noise_dba", 40.0), 28.0, 77.0)  # the NC 15-70 curves' span
        echo_gain = _number("echo_gain", d.get("echo_gain", 0.0), 0.0, 10.0)
        effort = _number("vocal_effort_db", d.get("vocal_effort_db", 0.0), 0.0, MAX_EFFORT_DB)
        talkers = d.get("babble_talkers", 6)
        if isinstance(talkers, bool) or not isinstance(talkers, int) or not 1 <= talkers <= 64:
            _fail("babble_talkers", f"expected an integer in [1, 64], got {talkers!r}")
        max_order = d.get("max_order")
        if max_order is not None and (
            isinstance(max_order, bool) or not isinstance(max_order, int) or not 0 <= max_order <= 120
        ):
            _fail("max_order", f"expected null (automatic) or an integer in [0, 120], got {max_order!r}")

        raw_sources = d.get("noise_sources") or []
        if isinstance(raw_sources, (str, bytes, Mapping)) or not isinstance(raw_sources, Sequence):
            _fail("noise_sources", "expected a list of {kind, position, level_db} entries")

        common = dict(
            preset=preset, mics=mics, noise=noise, snr_db=snr_db, noise_dba=noise_dba, echo_gain=echo_gain,
            babble_talkers=talkers,
        )
        if anechoic:
            for name in _GEOMETRY:
                if d.get(name) not in (None, [], ()):
                    _fail(name, "the anechoic preset has no geometry; choose a room preset: "
                          + ", ".join(p for p in preset_names() if p != "anechoic"))
            if mics != "mono":
                _fail("mics", "the anechoic preset has one microphone; valid choices: mono "
                      "(choose a room preset for pair or circular4)")
            if raw_sources:
                _fail("noise_sources", "point noise sources need a room preset")
            if d.get("air_absorption"):
                _fail("air_absorption", "the anechoic preset has no room; valid choices: false")
            if float(d.get("rt60") or 0.0) != 0.0:
                _fail("rt60", "the anechoic preset has no reverberation; valid choices: 0")
            if effort != 0.0:
                _fail("vocal_effort_db", "the anechoic preset plays the voices as rendered; valid "
                      "choices: 0 (choose a room preset for raised voices)")
            return cls(**common)

        size = _vector("size", d.get("size"), 3)
        for i, s in enumerate(size):
            _number(f"size[{i}]", s, 1.0, 50.0)
        rt60 = _number("rt60", d.get("rt60"), 0.05, 3.0)
        # Inverse Sabine must give an energy absorption below 1.
        vol = size[0] * size[1] * size[2]
        surf = 2 * (size[0] * size[1] + size[0] * size[2] + size[1] * size[2])
        rt_min = 24 * math.log(10) * vol / (SPEED_OF_SOUND * surf)
        if rt60 <= rt_min:
            _fail("rt60", f"{rt60:g} s is too short for a {size[0]:g} x {size[1]:g} x {size[2]:g} m "
                  f"room (inverse Sabine needs rt60 > {rt_min:.3f} s); valid range: ({rt_min:.3f}, 3.0]")

        def inside(field: str, p: tuple[float, ...], margin: float):
            for i, (v, s) in enumerate(zip(p, size)):
                if not margin <= v <= s - margin:
                    _fail(field, f"{list(p)} is outside the room {list(size)} "
                          f"(axis {'xyz'[i]} must lie in [{margin:g}, {s - margin:g}])")

        array_position = _vector("array_position", d.get("array_position"), 3)
        inside("array_position", array_position, 0.1)
        ls_off = _vector("loudspeaker_offset", d.get("loudspeaker_offset"), 3)
        ls_dist = math.sqrt(sum(v * v for v in ls_off))
        if not 0.05 <= ls_dist <= 1.0:
            _fail("loudspeaker_offset", f"distance {ls_dist:.3f} m from the array centre is out of "
                  "range; expected [0.05, 1.0] m")
        inside("loudspeaker_offset", tuple(a + o for a, o in zip(array_position, ls_off)), 0.01)
        distance = _vector("distance", d.get("distance"), 2)
        if not 0.2 <= distance[0] <= distance[1] <= 50.0:
            _fail("distance", f"expected [min, max] with 0.2 <= min <= max <= 50 m, got {list(distance)}")
        height = _vector("height", d.get("height"), 2)
        if not 0.1 <= height[0] <= height[1] <= size[2] - 0.05:
            _fail("height", f"expected [min, max] with 0.1 <= min <= max <= {size[2] - 0.05:g} m "
                  f"(room height {size[2]:g} m), got {list(height)}")
        min_sep = _number("min_separation_deg", d.get("min_separation_deg", 0.0), 0.0, 120.0)
        margin = _number("wall_margin", d.get("wall_margin", 0.0), 0.0, min(size) / 2 - 0.05)

        sources = []
        for i, s in enumerate(raw_sources):
            f = f"noise_sources[{i}]"
            if not isinstance(s, Mapping):
                _fail(f, "expected {kind: fan|tv, position: [x, y, z] or null, level_db: number}")
            bad = sorted(set(s) - {"kind", "position", "level_db"})
            if bad:
                _fail(f"{f}.{bad[0]}", "unknown field; valid fields: kind, position, level_db")
            kind = s.get("kind")
            if kind not in POINT_NOISE_KINDS:
                _fail(f"{f}.kind", f"unknown kind {kind!r}; valid choices: {', '.join(POINT_NOISE_KINDS)}")
            pos = s.get("position")
            if pos is not None:
                pos = _vector(f"{f}.position", pos, 3)
                inside(f"{f}.position", pos, 0.05)
            level = _number(f"{f}.level_db", s.get("level_db", 0.0), -60.0, 60.0)
            sources.append(NoiseSource(kind=kind, position=pos, level_db=level))

        raw_seats = d.get("seats") or []
        if isinstance(raw_seats, (str, bytes, Mapping)) or not isinstance(raw_seats, Sequence):
            _fail("seats", "expected a list of [x, y, z] mouth positions")
        seats = []
        for i, p in enumerate(raw_seats):
            seat = _vector(f"seats[{i}]", p, 3)
            inside(f"seats[{i}]", seat, 0.05)
            seats.append(seat)

        materials = _materials(d.get("materials"))
        air = d.get("air_absorption", False)
        if not isinstance(air, bool):
            _fail("air_absorption", f"expected true or false, got {air!r}")

        return cls(
            **common, size=size, rt60=rt60, materials=materials, air_absorption=air, array_position=array_position,
            loudspeaker_offset=ls_off, distance=distance, height=height,
            min_separation_deg=min_sep, wall_margin=margin, noise_sources=tuple(sources),
            max_order=max_order, seats=tuple(seats), vocal_effort_db=effort,
        )

    # ------------------------------------------------------------------ views
    @property
    def simulated(self) -> bool:
        """False for the anechoic preset (no geometry, no impulse responses)."""
        return self.size is not None

    def to_dict(self) -> dict:
        """Plain data (lists, no tuples) that ``from_config`` accepts back unchanged."""
        d = asdict(self)

        def lists(v):
            if isinstance(v, (tuple, list)):
                return [lists(x) for x in v]
            if isinstance(v, dict):
                return {k: lists(x) for k, x in v.items()}
            return v

        return lists(d)

    def key(self) -> str:
        """Stable hash of every field (cache keys)."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(blob.encode(), digest_size=12).hexdigest()

    def replace(self, **changes) -> RoomSpec:
        """A copy with fields changed, validated again."""
        d = self.to_dict()
        d.update(changes)
        return RoomSpec._validated(d)


__all__ = ["RoomSpec", "NoiseSource", "preset_names", "MIC_ARRAYS", "NOISE_KINDS", "SPEED_OF_SOUND"]
