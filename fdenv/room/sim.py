"""Impulse responses (pyroomacoustics), clip convolution, echo and noise for one episode's room.

``build_room(spec, speakers, seed, sample_rate)`` places the talkers (seeded), computes every
source's impulse responses into every microphone and returns a ``RoomSim``. Always a ``RoomSim``:
for the ``anechoic`` preset it is a trivial one (``simulated`` is False, one microphone, no delay,
``convolve`` returns the clip, ``doa`` returns None), so the env has a single code path.

Time axes. ``convolve`` returns the full convolution: index 0 is the clip's start on the source
axis; the direct sound reaches microphone 0 at ``delay_s(speaker) * sample_rate`` samples
(direct-path distance to microphone 0 / c + the simulator's fractional-delay filter delay,
``frac_delay_length // 2`` = 40 samples at the IR rate). Gold times on microphone 0's axis are
source times plus ``delay_s`` (SPEC 1).

Levels. pyroomacoustics gives each path an amplitude of 1 / distance. Talker and point-source
impulse responses are used as they come (a reference distance of 1 m): a talker 1 m from
microphone 0 has a direct sound at the clip's own level (reverberation comes on top). The
loudspeaker's are multiplied by ``d`` (its distance to microphone 0): with ``echo_gain = g`` the
direct echo at microphone 0 is ``g`` times the action (band-limited: a click's sampled peak is
0.8-1.0 times that, depending on the fractional delay). A talker's responses also carry the
spectrum of their vocal effort (``spec.vocal_effort_db``, ``effort.py``): a minimum-phase filter
that keeps normal speech's A-weighted level.

Reverberation. A preset's ``rt60`` is its mid-frequency T30 (mean of the 500 Hz and 1 kHz
octave bands, ``levels.mid_rt60``). With ``materials`` every surface gets their area-weighted
octave-band absorption (``room_absorption``) times one factor, plus air absorption when
``air_absorption`` is set; without, one frequency-independent absorption. The absorption (or the
factor) starts from inverse Sabine (``pra.inverse_sabine``) and is then corrected on a probe
impulse response (source at the mean talker distance and height, receiver at the array centre,
16 kHz) by secant steps on log T_mid vs log absorption until T_mid is within 3 % of the target
(at most 6 IRs; cached per room geometry). Sources of each preset's values: docs/rooms.md.
The image-source order (``max_order: null``) is ``ceil(0.45 * c * rt60 / R)``, clipped to
[6, 40], with ``R`` the radius of the largest sphere inside pyroomacoustics' image "diamond"
(the same ``R`` as ``inverse_sabine``'s order): enough to cover the decay well past -30 dB while
keeping a room of five sources and four microphones around 0.2 s; the correction absorbs the
remaining truncation bias. (Sabine's own order, ``c * rt60 / R``, costs 5-20x more; order 10
covers only the first ~15 dB.)

Length and precision. All sources share one IR length (``ir_length``): the IRs end where the
energy decay curve (Schroeder) of every source at every microphone has fallen by ``IR_TAIL_DB``
(68 dB). The cut tail is mostly low frequencies, so a speech signal loses more than the tail's
share of energy: at a 60 dB cut, speech through a talker's IRs was off by -46 to -58 dB; at 68 dB
by -56 to -70 dB. The echo path (computed on every step the assistant speaks) ends where the
loudspeaker's own curves have fallen by ``ECHO_TAIL_DB`` (65 dB): its direct sound dominates, so
that comes earlier; with octave-band absorption the low bands ring longest, and at 60 dB speech
plus noise through the echo path was off by only -49 dB in the living room; at 65 dB it is off by
-54 to -61 dB in every preset (the office's path still fits four 1280-sample partitions). IRs,
convolution and echo are single precision (-128 dB on their own). Checked against the exact
computation (double precision, untruncated IRs: ``exact_irs``) with a -50 dB bound in
``tests/test_room_exact.py``.

Determinism. Before every impulse-response computation the numpy global RNG and
pyroomacoustics' package RNG (numpy and libroom parts) are seeded from the episode seed, and
pyroomacoustics' thread count is fixed (its RIR builder sums per-thread partial results, so the
bits depend on it); the numpy global state is restored afterwards. Talker and noise randomness use
their own generators derived from the seed.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from . import cache as _cache
from .echo import EchoPath, partition_spectra
from .effort import apply_filter, effort_filter
from .geometry import doa as _doa
from .geometry import mic_layout, place_noise_source, place_talkers
from .levels import mid_rt60, rms_dba, schroeder_edc_db
from .noise import ClipSource, diffuse_noise, point_source_noise, resolve_clips
from .noise import unit_level as _unit_level_clips
from .spec import SPEED_OF_SOUND, RoomSpec

ASSISTANT = "@assistant"  # name of the assistant's loudspeaker in delay_s / doa / ir
PRA_THREADS = 4  # fixed so the RIR bits do not depend on the machine
CALIBRATION_RATE = 16000
ORDER_COVERAGE = 0.45
ORDER_RANGE = (6, 40)
_REF_DISTANCE = 1.0
IR_TAIL_DB = 68.0  # impulse responses end where every energy decay curve is this far down ...
ECHO_TAIL_DB = 65.0  # ... and the echo path where the loudspeaker's are (see "Length" above)


# ---------------------------------------------------------------------- pyroomacoustics glue
def _seed_ints(*parts) -> tuple[int, int]:
    """Two integers (32- and 64-bit) derived from ``parts``."""
    h = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    v = int.from_bytes(h, "little")
    return v & 0xFFFFFFFF, v & 0x7FFFFFFFFFFFFFFF


@contextlib.contextmanager
def _pra_seeded(seed: int, tag: str):
    import pyroomacoustics as pra

    s32, s64 = _seed_ints(int(seed), tag)
    np_state = np.random.get_state()
    old_threads = pra.constants.get("num_threads")
    np.random.seed(s32)
    rnd = getattr(pra, "random", None)
    if rnd is not None and hasattr(rnd, "seed"):
        rnd.seed(numpy=s64, libroom=s64)
    elif hasattr(pra.libroom, "set_rng_seed"):  # pragma: no cover - older pyroomacoustics
        pra.libroom.set_rng_seed(s64)
    pra.constants.set("num_threads", PRA_THREADS)
    try:
        yield pra
    finally:
        pra.constants.set("num_threads", old_threads)
        np.random.set_state(np_state)


def filter_delay_samples() -> int:
    """pyroomacoustics' fixed delay of its fractional-delay filter, in samples at the IR rate."""
    import pyroomacoustics as pra

    return int(pra.constants.get("frac_delay_length")) // 2


def _diamond_radius(size) -> float:
    return min(a * b / math.hypot(a, b) for a, b in itertools.combinations(size, 2))


def image_order(spec: RoomSpec) -> int:
    """Image-source order used for ``spec``."""
    if spec.max_order is not None:
        return int(spec.max_order)
    o = math.ceil(ORDER_COVERAGE * SPEED_OF_SOUND * spec.rt60 / _diamond_radius(spec.size))
    return int(min(max(o, ORDER_RANGE[0]), ORDER_RANGE[1]))


_BANDS = (125, 250, 500, 1000, 2000, 4000, 8000)  # pyroomacoustics' materials table's octave bands


def room_absorption(spec: RoomSpec) -> tuple[float, ...]:
    """Area-weighted mean of the named materials' octave-band energy absorption (``_BANDS``; a
    table row without 8 kHz repeats its 4 kHz value): the room's Sabine mean absorption. Every
    surface gets this mean: the image-source shoebox has no furniture or scattering to mix the
    sound field, and with absorbing floor and ceiling but bare walls its horizontal reflections
    would ring on far longer than Sabine's estimate (the real rooms these presets stand for are
    furnished)."""
    import pyroomacoustics as pra

    x, y, z = spec.size
    area = {"floor": x * y, "ceiling": x * y, "walls": 2 * (x + y) * z}
    total = np.zeros(len(_BANDS))
    for surface, name in spec.materials:
        coeffs = [float(c) for c in pra.materials_absorption_table[name]["coeffs"]]
        coeffs += coeffs[-1:] * (len(_BANDS) - len(coeffs))
        total += area[surface] * np.asarray(coeffs[: len(_BANDS)])
    return tuple(float(v) for v in total / sum(area.values()))


def _materials(spec: RoomSpec, absorption: float):
    """pyroomacoustics material: one broadband absorption, or the room's mean band absorption
    (``room_absorption``) times ``absorption``, capped at 0.99."""
    import pyroomacoustics as pra

    if not spec.materials:
        return pra.Material(float(absorption))
    coeffs = [min(absorption * c, 0.99) for c in room_absorption(spec)]
    return pra.Material({"coeffs": coeffs, "center_freqs": list(_BANDS)})


def _room_irs(spec: RoomSpec, absorption: float, order: int, sources: np.ndarray, mics: np.ndarray,
              fs: int, seed: int, tag: str) -> list[list[np.ndarray]]:
    """rir[s][m] (float64, read-only) for sources (S, 3) and microphones (3, M). Cached by what
    they depend on: rooms that differ only in noise, SNR or echo gain share them."""
    sources, mics = np.asarray(sources, dtype=float), np.asarray(mics, dtype=float)
    key = (spec.size, spec.materials, spec.air_absorption, float(absorption), int(order), sources.shape,
           sources.tobytes(), mics.shape, mics.tobytes(), int(fs), int(seed), tag)
    hit = _cache.IRS.get(key)
    if hit is not None:
        return hit
    with _pra_seeded(seed, tag) as pra:
        room = pra.ShoeBox(list(spec.size), fs=fs, materials=_materials(spec, absorption),
                           max_order=int(order), air_absorption=bool(spec.air_absorption), use_rand_ism=False)
        for p in sources:
            room.add_source(np.asarray(p, dtype=float))
        room.add_microphone_array(np.asarray(mics, dtype=float))
        room.compute_rir()
        out = [[_cache.frozen(np.array(room.rir[m][s], dtype=np.float64)) for m in range(mics.shape[1])]
               for s in range(len(sources))]
    _cache.IRS.put(key, out, sum(h.nbytes for per_src in out for h in per_src))
    return out


def _probe(spec: RoomSpec) -> tuple[np.ndarray, np.ndarray]:
    """Probe source and receiver for the absorption correction (deterministic)."""
    c = np.asarray(spec.array_position, dtype=float)
    d = float(np.mean(spec.distance))
    h = float(np.mean(spec.height))
    best = None
    for k in range(8):
        az = 2 * math.pi * k / 8
        m = spec.wall_margin
        reach = math.inf
        for ci, lo, hi, u in ((c[0], m, spec.size[0] - m, math.cos(az)), (c[1], m, spec.size[1] - m, math.sin(az))):
            if u > 1e-9:
                reach = min(reach, (hi - ci) / u)
            elif u < -1e-9:
                reach = min(reach, (lo - ci) / u)
        if best is None or reach > best[0]:
            best = (reach, az)
    reach, az = best
    r = min(d, max(reach, 0.1))
    src = np.array([c[0] + r * math.cos(az), c[1] + r * math.sin(az), h])
    return src, c


def absorption_for(spec: RoomSpec, order: int | None = None) -> tuple[float, float]:
    """(energy absorption, probe T30) for ``spec``: inverse Sabine, corrected on a probe IR.
    With ``materials`` the first value is the factor on their band coefficients instead."""
    import pyroomacoustics as pra

    order = image_order(spec) if order is None else order
    key = (spec.size, spec.rt60, order, spec.array_position, spec.distance, spec.height, spec.wall_margin,
           spec.materials, spec.air_absorption)
    hit = _cache.CALIBRATION.get(key)
    if hit is not None:
        return hit
    alpha, _ = pra.inverse_sabine(spec.rt60, list(spec.size))
    hi = 0.99
    if spec.materials:  # a factor on the materials' bands: start where their mid bands give Sabine's
        bands = room_absorption(spec)
        alpha, hi = alpha / (0.5 * (bands[2] + bands[3])), 0.99 / min(bands)
    src, rcv = _probe(spec)
    t30 = float("nan")
    history: list[tuple[float, float]] = []
    for _ in range(6):
        ir = _room_irs(spec, alpha, order, src[None], rcv[:, None], CALIBRATION_RATE, 0, "calibration")[0][0]
        t30 = mid_rt60(ir, CALIBRATION_RATE)
        if not np.isfinite(t30):
            break
        history.append((alpha, t30))
        if abs(t30 / spec.rt60 - 1) < 0.03:
            break
        # Secant step on log(T30) against log(alpha); Sabine's slope (-1) for the first step or
        # when the measured slope is useless.
        slope = -1.0
        if len(history) >= 2:
            (a0, t0), (a1, t1) = history[-2], history[-1]
            if a1 != a0:
                s = (math.log(t1) - math.log(t0)) / (math.log(a1) - math.log(a0))
                if -4.0 < s < -0.1:
                    slope = s
        alpha = math.exp(math.log(alpha) + (math.log(spec.rt60) - math.log(t30)) / slope)
        alpha = float(min(max(alpha, 1e-3), hi))
    out = (float(alpha), float(t30))
    _cache.CALIBRATION.put(key, out)
    return out


# ---------------------------------------------------------------------- the room
class RoomSim:
    """One episode's room: geometry, impulse responses, and what is computed from them.

    Attributes: ``spec`` (RoomSpec), ``sample_rate``, ``seed``, ``speakers`` (talker names, in
    order), ``simulated``, ``n_mics``, ``mic_positions`` ``(3, n_mics)`` metres (room frame),
    ``array_center`` ``(3,)``, ``positions`` {name: (3,)} (talkers, ``ASSISTANT``, ``noise:<i>``),
    ``absorption`` (energy absorption; with ``materials`` the factor on their coefficients),
    ``max_order``, ``ir_length`` (samples, shared by all sources),
    ``filter_delay`` (samples), ``key`` (cache key).
    """

    def __init__(self, spec: RoomSpec, speakers: Sequence[str], seed: int, sample_rate: int,
                 positions: Mapping[str, Sequence[float]] | None = None):
        self.spec = spec
        self.speakers = tuple(speakers)
        self.seed = int(seed)
        self.sample_rate = int(sample_rate)
        self._fixed = _fixed_positions(spec, self.speakers, positions)
        self.key = room_key(spec, self.speakers, self.seed, self.sample_rate, self._fixed)
        self.simulated = spec.simulated
        self._echo_spectra: dict = {}
        if not self.simulated:
            self.n_mics = 1
            self.mic_positions = np.zeros((3, 1))
            self.array_center = np.zeros(3)
            self.positions: dict[str, np.ndarray] = {}
            self.absorption, self.max_order, self.filter_delay = 0.0, 0, 0
            self._irs = {name: np.ones((1, 1), dtype=np.float32) for name in (*self.speakers, ASSISTANT)}
            self.ir_length = 1
            return
        self._build()

    def _build(self) -> None:
        spec, fs = self.spec, self.sample_rate
        rng = np.random.default_rng(np.random.SeedSequence([self.seed & 0xFFFFFFFFFFFFFFFF, 0x726F6F6D]))
        talkers = place_talkers(spec, len(self.speakers), rng)
        talkers = [np.asarray(self._fixed.get(n, p), dtype=float) for n, p in zip(self.speakers, talkers)]
        centre = np.asarray(spec.array_position, dtype=float)
        self.array_center = centre
        self.mic_positions = centre[:, None] + mic_layout(spec.mics)
        self.n_mics = self.mic_positions.shape[1]
        names = list(self.speakers) + [ASSISTANT]
        pos = [*talkers, np.asarray(self._fixed.get(ASSISTANT, centre + np.asarray(spec.loudspeaker_offset)))]
        for i, src in enumerate(spec.noise_sources):
            names.append(f"noise:{i}")
            pos.append(np.asarray(src.position, dtype=float) if src.position is not None
                       else place_noise_source(spec, rng))
        self.positions = {n: np.asarray(p, dtype=float) for n, p in zip(names, pos)}
        self.max_order = image_order(spec)
        self.absorption, self.probe_rt60 = absorption_for(spec, self.max_order)
        self.filter_delay = filter_delay_samples()
        self._sources = (names, pos)
        rirs = self._voiced(names, _room_irs(spec, self.absorption, self.max_order, np.array(pos),
                                             self.mic_positions, fs, self.seed, "irs"))
        # Cut every IR where the last of them has decayed by IR_TAIL_DB (Schroeder curve): the
        # image-source tail beyond that is inaudible and costs convolution and echo partitions.
        L = max(1, max(_decay_length(h, IR_TAIL_DB) for per_src in rirs for h in per_src))
        self.ir_length = L
        self._irs = {}
        for name, p, per_src in zip(names, pos, rirs):
            scale = self._scale(name, p)
            arr = np.zeros((self.n_mics, L), dtype=np.float32)
            for m, h in enumerate(per_src):
                h = h[:L]
                arr[m, : len(h)] = h * scale
            self._irs[name] = _cache.frozen(arr)
        # The echo path ends where the loudspeaker's own decay curves are ECHO_TAIL_DB down: close
        # to the array its direct sound dominates, so that comes a partition or more before the
        # talkers' (each partition costs a multiply-add per microphone on every speaking step).
        echo = self._irs[ASSISTANT]
        self._echo_length = max(1, max(_decay_length(h, ECHO_TAIL_DB) for h in echo.astype(np.float64)))

    def _voiced(self, names, rirs):
        """The talkers' responses filtered to their vocal effort's spectrum (``effort.py``; linear
        and time-invariant, so filtering a response is filtering the voice); other sources as they
        are (the assistant's loudspeaker and point noise sources do not raise their voices)."""
        taps = effort_filter(self.spec.vocal_effort_db, self.sample_rate)
        if taps is None:
            return rirs
        return [[apply_filter(h, taps) for h in per_src] if name in self.speakers else per_src
                for name, per_src in zip(names, rirs)]

    @property
    def nbytes(self) -> int:
        """Memory held: the impulse responses, and the echo path's spectra (about twice the
        loudspeaker's responses per frame size)."""
        return sum(v.nbytes for v in self._irs.values()) + 2 * self._irs[ASSISTANT].nbytes

    def _scale(self, name: str, p) -> float:
        # pyroomacoustics' amplitudes are 1 / distance (no 4 pi): scale to 1 at the reference.
        return float(np.linalg.norm(np.asarray(p) - self.mic_positions[:, 0])) if name == ASSISTANT else _REF_DISTANCE

    def exact_irs(self) -> dict[str, np.ndarray]:
        """Every source's impulse responses as simulated, untruncated and in double precision
        ``{name: (n_mics, L)}`` (the same seeded computation; for checking the truncated,
        single-precision ones the room uses)."""
        if not self.simulated:
            return {name: np.ones((1, 1)) for name in self._irs}
        names, pos = self._sources
        rirs = self._voiced(names, _room_irs(self.spec, self.absorption, self.max_order, np.array(pos),
                                             self.mic_positions, self.sample_rate, self.seed, "irs"))
        out = {}
        for name, p, per_src in zip(names, pos, rirs):
            arr = np.zeros((self.n_mics, max(len(h) for h in per_src)))
            for m, h in enumerate(per_src):
                arr[m, : len(h)] = h * self._scale(name, p)
            out[name] = arr
        return out

    # ------------------------------------------------------------------ geometry
    def _check(self, name: str) -> None:
        if name not in self._irs:
            valid = ", ".join(repr(n) for n in self._irs)
            raise KeyError(f"room: unknown source {name!r}; valid: {valid}")

    def delay_s(self, name: str) -> float:
        """Seconds from a source's time axis to microphone 0's: direct path / c + filter delay."""
        self._check(name)
        if not self.simulated:
            return 0.0
        d = float(np.linalg.norm(self.positions[name] - self.mic_positions[:, 0]))
        return d / SPEED_OF_SOUND + self.filter_delay / self.sample_rate

    def doa(self, name: str) -> tuple[float, float, float] | None:
        """(azimuth_deg, elevation_deg, distance_m) from the array centre; None without a room."""
        self._check(name)
        if not self.simulated:
            return None
        return _doa(self.positions[name], self.array_center)

    def doas(self) -> dict[str, tuple[float, float, float] | None]:
        """``doa`` of every talker (for labels)."""
        return {n: self.doa(n) for n in self.speakers}

    def ir(self, name: str) -> np.ndarray:
        """Impulse responses of a source, ``(n_mics, ir_length)`` float32, read-only."""
        self._check(name)
        return self._irs[name]

    # ------------------------------------------------------------------ audio
    def convolve(self, name: str, clip: np.ndarray, *, key: str | None = None) -> np.ndarray:
        """A dry clip ``(n,)`` as heard at the microphones: ``(n_mics, n + ir_length - 1)`` float32,
        read-only (shared through the cache; copy before writing). Cached per (room, source, clip
        hash or ``key``)."""
        self._check(name)
        clip = np.asarray(clip)
        if clip.ndim != 1:
            raise ValueError(f"room.convolve: expected a mono clip (n,), got shape {clip.shape}")
        clip = clip.astype(np.float32, copy=False)
        if not self.simulated:
            out = clip[None, :].copy()
            return _cache.frozen(out)
        ck = (self.key, name, key if key is not None else _cache.array_digest(clip))
        hit = _cache.AUDIO.get(ck)
        if hit is not None:
            return hit
        if clip.size == 0:
            out = np.zeros((self.n_mics, self.ir_length - 1), dtype=np.float32)
        else:
            from scipy.signal import oaconvolve

            out = oaconvolve(clip[None, :], self._irs[name], axes=-1).astype(np.float32, copy=False)
        _cache.AUDIO.put(ck, _cache.frozen(out), out.nbytes)
        return out

    def echo_path(self, frame_samples: int, gain: float | None = None) -> EchoPath:
        """A fresh EchoPath (new episode state) for the assistant loudspeaker, ``gain`` defaulting to
        ``spec.echo_gain``. The partition spectra are computed once per (frame size, gain)."""
        gain = self.spec.echo_gain if gain is None else float(gain)
        if gain < 0 or not math.isfinite(gain):
            raise ValueError(f"room: echo_gain: {gain} is out of range; expected [0, 10]")
        ir = self._irs[ASSISTANT]
        if self.simulated:
            ir = ir[:, : self._echo_length]
        spectra = None
        if gain != 0.0 and ir.shape[1] > 1:
            k = (int(frame_samples), gain)
            spectra = self._echo_spectra.get(k)
            if spectra is None:
                spectra = self._echo_spectra[k] = partition_spectra(ir, frame_samples, gain)
        return EchoPath(ir, frame_samples, gain, spectra=spectra)

    def noise(self, n_samples: int, speech_level_dbfs: float, *, kind: str | None = None,
              snr_db: float | None = None, babble: ClipSource = None, tv: ClipSource = None,
              seed: int | None = None) -> np.ndarray:
        """Noise at the microphones, ``(n_mics, n_samples)`` float32, read-only (cached).

        The total noise (diffuse ``kind`` plus the spec's point sources, each point source
        ``level_db`` above the diffuse noise, A-weighted) is scaled so that its A-weighted
        long-term level at microphone 0 (``rms_dba``) is ``speech_level_dbfs - snr_db``
        (``speech_level_dbfs``: the A-weighted active speech level at microphone 0, see
        ``active_speech_level_dba``; zeros when it is -inf, i.e. no speech). ``kind`` and
        ``snr_db`` default to the spec's. ``babble`` (and ``tv``, defaulting to ``babble``): speech
        clips at the room's rate, or a callable ``f(n_clips, seed) -> clips``; without clips both
        fall back to speech-shaped noise. Deterministic from ``seed`` (default: the room's).
        """
        from .spec import NOISE_KINDS

        kind = self.spec.noise if kind is None else kind
        if kind not in NOISE_KINDS:
            raise ValueError(f"room: noise: unknown noise {kind!r}; valid choices: {', '.join(NOISE_KINDS)}")
        snr_db = self.spec.snr_db if snr_db is None else float(snr_db)
        n = int(n_samples)
        if n < 0:
            raise ValueError(f"room.noise: n_samples must be >= 0, got {n_samples}")
        seed = self.seed if seed is None else int(seed)
        sources = self.spec.noise_sources if self.simulated else ()
        if n == 0 or (kind in ("none", "self") and not sources) or not math.isfinite(speech_level_dbfs):
            return _cache.frozen(np.zeros((self.n_mics, n), dtype=np.float32))
        want_babble = kind == "babble"
        want_tv = any(s.kind == "tv" for s in sources)
        n_clips = max(8, 2 * self.spec.babble_talkers)
        bclips = resolve_clips(babble, n_clips, _seed_ints(seed, "babble")[0]) if (want_babble or want_tv) else []
        tclips = resolve_clips(tv, 8, _seed_ints(seed, "tv")[0]) if (want_tv and tv is not None) else bclips
        ck = ("noise", self.key, n, float(speech_level_dbfs), kind, snr_db, seed, "dBA",
              tuple(_cache.array_digest(c) for c in bclips), tuple(_cache.array_digest(c) for c in tclips))
        hit = _cache.AUDIO.get(ck)
        if hit is not None:
            return hit
        fs = self.sample_rate
        bclips = _unit_level_clips(bclips, fs)
        tclips = _unit_level_clips(tclips, fs) if tclips is not bclips else bclips
        offsets = self.mic_positions - self.array_center[:, None]
        total = np.zeros((self.n_mics, n), dtype=np.float64 if sources else np.float32)
        ref = 1.0
        if kind not in ("none", "self"):  # (the microphones' self-noise is the env's, on top)
            rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFFFFFFFFFF, 0x6E6F6973, 0]))
            d = diffuse_noise(kind, n, fs, offsets, rng, bclips, self.spec.babble_talkers, self.spec.noise_dba)
            r = 10 ** (rms_dba(d[0], fs) / 20) if sources else 1.0  # (the total is scaled below anyway)
            total += d * d.dtype.type(1 / r) if r > 0 else d
        for i, src in enumerate(sources):
            rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFFFFFFFFFF, 0x6E6F6973, 1 + i]))
            p = point_source_noise(src.kind, self._irs[f"noise:{i}"], n, fs, rng, tclips if src.kind == "tv" else None)
            r = 10 ** (rms_dba(p[0], fs) / 20)
            if r > 0:
                total += p * (ref * 10 ** (src.level_db / 20) / r)
        level = rms_dba(total[0], fs)
        if math.isfinite(level):
            total *= total.dtype.type(10 ** ((speech_level_dbfs - snr_db - level) / 20))
        out = _cache.frozen(total.astype(np.float32, copy=False))
        _cache.AUDIO.put(ck, out, out.nbytes)
        return out

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = dict(self.__dict__)
        state["_echo_spectra"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        for v in self._irs.values():
            v.setflags(write=False)

    def __repr__(self) -> str:
        return (f"RoomSim(preset={self.spec.preset!r}, mics={self.spec.mics!r}, n_mics={self.n_mics}, "
                f"speakers={list(self.speakers)}, seed={self.seed}, sample_rate={self.sample_rate})")


def _decay_length(h: np.ndarray, db: float) -> int:
    """Samples of ``h`` up to where its energy decay curve (Schroeder) has fallen by ``db``: what is
    cut after that holds 10^(-db/10) of the impulse response's energy."""
    below = np.flatnonzero(schroeder_edc_db(h) <= -db)
    return int(below[0]) + 1 if below.size else len(h)


def room_key(spec: RoomSpec, speakers: Sequence[str], seed: int, sample_rate: int,
             positions: Mapping[str, tuple] | None = None) -> str:
    fixed = tuple(sorted((positions or {}).items()))
    blob = repr((spec.key(), tuple(speakers), int(seed), int(sample_rate), fixed))
    return hashlib.blake2b(blob.encode(), digest_size=12).hexdigest()


def _fixed_positions(spec: RoomSpec, speakers: tuple[str, ...], positions) -> dict[str, tuple]:
    if not positions:
        return {}
    if not spec.simulated:
        raise ValueError("build_room: positions need a room preset (anechoic has no geometry)")
    out = {}
    for name, p in dict(positions).items():
        if name not in speakers and name != ASSISTANT:
            raise ValueError(f"build_room: positions: unknown source {name!r}; valid: "
                             + ", ".join(repr(n) for n in (*speakers, ASSISTANT)))
        try:
            v = tuple(float(x) for x in p)
        except (TypeError, ValueError):
            v = ()
        if len(v) != 3 or not all(math.isfinite(x) for x in v):
            raise ValueError(f"build_room: positions[{name!r}]: expected [x, y, z] in metres, got {p!r}")
        if not all(0.0 < x < s for x, s in zip(v, spec.size)):
            raise ValueError(f"build_room: positions[{name!r}]: {list(v)} is outside the room {list(spec.size)}")
        out[name] = v
    return out


def build_room(spec: RoomSpec | str | Mapping | None, speakers: Sequence[str], seed: int, sample_rate: int,
               *, positions: Mapping[str, Sequence[float]] | None = None, cache: bool = True) -> RoomSim:
    """The room of one episode: talkers ``speakers`` placed from ``seed``, IRs at ``sample_rate``.

    ``spec`` is anything ``RoomSpec.from_config`` accepts. ``positions`` optionally pins sources
    ({name or ASSISTANT: [x, y, z]} in metres, room frame) instead of the seeded placement.
    Cached in-process by (spec, speakers, seed, sample_rate, positions): the same arguments return
    the same object (treat it as immutable).
    """
    spec = RoomSpec.from_config(spec)
    if isinstance(speakers, str):
        raise ValueError("build_room: speakers must be a list of names, not a string")
    speakers = tuple(str(s) for s in speakers)
    if len(set(speakers)) != len(speakers):
        raise ValueError(f"build_room: speaker names must be distinct, got {list(speakers)}")
    if ASSISTANT in speakers or any(s.startswith("noise:") for s in speakers):
        raise ValueError(f"build_room: {ASSISTANT!r} and 'noise:*' are reserved source names")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"build_room: seed must be an integer, got {seed!r}")
    if (isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, np.integer))
            or not 4000 <= sample_rate <= 192000):
        raise ValueError(f"build_room: sample_rate must be an integer in [4000, 192000], got {sample_rate!r}")
    key = room_key(spec, speakers, int(seed), int(sample_rate), _fixed_positions(spec, speakers, positions))
    if cache:
        hit = _cache.ROOMS.get(key)
        if hit is not None:
            return hit
    room = RoomSim(spec, speakers, int(seed), int(sample_rate), positions)
    if cache:
        _cache.ROOMS.put(key, room, room.nbytes)
    return room


__all__ = ["RoomSim", "build_room", "ASSISTANT", "absorption_for", "image_order", "filter_delay_samples", "room_key",
           "room_absorption"]
