"""Microphone arrays, seeded talker placement and directions of arrival.

Conventions (room frame, metres, ``z`` up):

- ``pair``: two microphones 8 cm apart on the ``x`` axis; microphone 0 at ``-x`` (centre - 4 cm),
  microphone 1 at ``+x``. A source at azimuth 0 (endfire, ``+x``) reaches microphone 1 first.
- ``circular4``: four microphones on a horizontal circle of radius 3.2 cm at azimuths 0, 90, 180
  and 270 degrees (microphone 0 on ``+x``, counter-clockwise).
- ``mono``: one microphone at the array centre.
- Azimuth: degrees in ``(-180, 180]``, in the horizontal plane from ``+x`` towards ``+y``
  (counter-clockwise seen from above). Elevation: degrees above the horizontal plane through the
  array centre. Distance: metres from the array centre (3-D).
"""

from __future__ import annotations

import math

import numpy as np

from .spec import RoomSpec

PAIR_SPACING_M = 0.08
CIRCULAR4_RADIUS_M = 0.032


def mic_layout(mics: str) -> np.ndarray:
    """Microphone offsets from the array centre, shape ``(3, n_mics)``, metres."""
    if mics == "mono":
        return np.zeros((3, 1))
    if mics == "pair":
        h = PAIR_SPACING_M / 2
        return np.array([[-h, h], [0.0, 0.0], [0.0, 0.0]])
    if mics == "circular4":
        a = np.deg2rad([0.0, 90.0, 180.0, 270.0])
        r = CIRCULAR4_RADIUS_M
        return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(4)])
    raise ValueError(f"room: mics: unknown array {mics!r}; valid choices: mono, pair, circular4")


def doa(position: np.ndarray, center: np.ndarray) -> tuple[float, float, float]:
    """(azimuth_deg, elevation_deg, distance_m) of ``position`` seen from ``center``."""
    d = np.asarray(position, dtype=float) - np.asarray(center, dtype=float)
    horiz = math.hypot(d[0], d[1])
    az = math.degrees(math.atan2(d[1], d[0]))
    if az <= -180.0:
        az += 360.0
    el = math.degrees(math.atan2(d[2], horiz))
    return (float(az), float(el), float(math.sqrt(horiz * horiz + d[2] * d[2])))


def _angle_diff(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _max_reach(spec: RoomSpec, az_rad: float) -> float:
    """Horizontal distance from the array centre to the wall margin along an azimuth."""
    cx, cy = spec.array_position[0], spec.array_position[1]
    m = spec.wall_margin
    reach = math.inf
    for c, lo, hi, u in ((cx, m, spec.size[0] - m, math.cos(az_rad)), (cy, m, spec.size[1] - m, math.sin(az_rad))):
        if u > 1e-12:
            reach = min(reach, (hi - c) / u)
        elif u < -1e-12:
            reach = min(reach, (lo - c) / u)
    return max(reach, 0.0)


def place_talkers(spec: RoomSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """Seeded positions of ``n`` talkers, shape ``(n, 3)``.

    Each talker gets an azimuth at least ``min_separation_deg`` from every other talker's, a
    horizontal distance in ``distance`` (shortened where a wall is closer: talkers keep
    ``wall_margin`` from the walls) and a mouth height in ``height``. Rejection sampling; if the
    separation cannot be met (too many talkers for the free directions) it is relaxed by 20 %
    steps, deterministically.
    """
    if n == 0:
        return np.zeros((0, 3))
    if spec.seats:
        return _seat_talkers(spec, n, rng)
    dmin, dmax = spec.distance
    sep = spec.min_separation_deg
    for _relax in range(30):
        out: list[tuple[float, float, float]] = []
        azs: list[float] = []
        tries = 0
        while len(out) < n and tries < 400 * n:
            tries += 1
            az = float(rng.uniform(-180.0, 180.0))
            if any(_angle_diff(az, b) < sep for b in azs):
                continue
            reach = min(dmax, _max_reach(spec, math.radians(az)))
            if reach < dmin:
                continue
            dist = float(rng.uniform(dmin, reach))
            z = float(rng.uniform(spec.height[0], spec.height[1]))
            x = spec.array_position[0] + dist * math.cos(math.radians(az))
            y = spec.array_position[1] + dist * math.sin(math.radians(az))
            azs.append(az)
            out.append((x, y, z))
        if len(out) == n:
            return np.array(out)
        sep *= 0.8
    raise ValueError(
        f"room: distance: cannot place {n} talkers at {list(spec.distance)} m from the array "
        f"inside the room {list(spec.size)} with wall_margin {spec.wall_margin} m"
    )


SEAT_JITTER_M = 0.05  # a seated talker's mouth moves this much around the seat's (each axis)


def _seat_talkers(spec: RoomSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` talkers in distinct seats, in a seeded order, each mouth within a few cm of its seat."""
    if n > len(spec.seats):
        raise ValueError(f"room: seats: {n} talkers but {len(spec.seats)} seats; add seats or use fewer speakers")
    order = rng.permutation(len(spec.seats))[:n]
    seats = np.array(spec.seats, dtype=float)[order]
    return seats + rng.uniform(-SEAT_JITTER_M, SEAT_JITTER_M, size=seats.shape)


def place_noise_source(spec: RoomSpec, rng: np.random.Generator) -> np.ndarray:
    """A seeded position for a point noise source: at least 1 m (horizontally) from the array
    where the room allows, 0.3 m from the walls, at 0.5 to 1.8 m height (clipped to the room)."""
    margin = min(0.3, min(spec.size) / 4)
    zlo, zhi = min(0.5, spec.size[2] / 2), min(1.8, spec.size[2] - margin)
    best, best_d = None, -1.0
    for _ in range(200):
        p = np.array([rng.uniform(margin, spec.size[0] - margin), rng.uniform(margin, spec.size[1] - margin),
                      rng.uniform(zlo, zhi)])
        d = math.hypot(p[0] - spec.array_position[0], p[1] - spec.array_position[1])
        if d >= 1.0:
            return p
        if d > best_d:
            best, best_d = p, d
    return best


__all__ = ["mic_layout", "doa", "place_talkers", "place_noise_source", "PAIR_SPACING_M", "CIRCULAR4_RADIUS_M"]
