"""Full-Duplex-Bench's four dimensions (SPEC 6) under two profiles.

Layers:

1. Pure rules on segments (``[(start_s, end_s)]``) and words (``asr.Word``), one function per
   dimension and profile: ``paper_pause``, ``paper_backchannel``, ``paper_turn_taking``,
   ``paper_interruption``, ``fdb_code_pause``, ``fdb_code_backchannel``, ``fdb_code_turn_taking``,
   ``fdb_code_interruption``. The golden cases and hand-built cases test these directly.
2. ``FDBScorer``: runs VAD and ASR on an ``EpisodeRecord`` and applies the rules; ``score_record``
   is the one-call form. ``score_fdb_sample`` scores one FDB-format sample folder (``output.json``,
   ``output.wav``, the task json) with the ``fdb_code`` rules, as the public FDB scripts do.

Per-episode result (SPEC 9): ``{"dimension": name, "paper": {...}, "fdb_code": {...}}``; each
profile dict has ``to``, ``latency_s``, ``stop_latency_s``, ``relevance``, ``freq_hz``, ``jsd``
(``None`` where not applicable, never NaN) plus a few dimension-specific extras
(``n_backchannels``, ``overlapping``, ``spoke_at_interrupt``, ``did_not_stop``, ``judge``).

Conventions of the ``paper`` profile (SPEC 6.1-6.4), made precise here:

* Segment/window overlap and a word's belonging to a segment: ``fdenv.score.segments``.
* Backchannel: a segment shorter than 1 s with fewer than 2 words (SPEC 5.2).
* Backchannel dimension: a backchannel counts for Freq and P when its onset lies in the window;
  its duration is the whole segment's. JSD is the Jensen-Shannon divergence in base 2 (0..1, the
  paper's definition, not scipy's distance), over 200 ms bins of the window; the Gaussian kernel
  (sigma 0.3 s) is integrated over each bin.
* Interruption: "the segment that overlaps ``s``" is one with ``start <= s <= end``. It did not
  stop when that segment runs past ``f + 10 s``; then ``stop_latency_s`` is ``None`` and
  ``did_not_stop`` is true. The response is the first non-backchannel segment starting in
  ``(s, f + 10]``, continued by the segments that follow it with gaps under 1 s; its words go to
  the judge.
"""

from __future__ import annotations

import json
import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from ..windows import interruption_end, turn_taking_window
from . import vad
from .asr import Word, words_from_fdb
from .segments import Segment, follow_on, overlaps, text_of, word_in, words_in
from .sound import no_speech_warning


DIMENSIONS = ("pause_handling", "backchannel", "turn_taking", "interruption")
PROFILES = ("paper", "fdb_code")
KEYS = ("to", "latency_s", "stop_latency_s", "relevance", "freq_hz", "jsd")
# FDB folder names of the public evaluation scripts, per dimension.
FDB_TASKS = {"pause_handling": "pause_handling", "backchannel": "backchannel",
             "turn_taking": "smooth_turn_taking", "interruption": "user_interruption"}

BC_MAX_S = 1.0  # backchannel: shorter than 1 s ...
BC_MAX_WORDS = 1  # ... with fewer than 2 words
RESPONSE_GAP_S = 1.0
BIN_S = 0.2
KERNEL_SIGMA_S = 0.3
TRP_OFFSET_S = 0.2

# fdb_code constants (the public scripts)
FDB_TURN_S = 1.0
FDB_TURN_WORDS = 3
FDB_LONG_SEGMENT_S = 3.0
FDB_EPS = 1e-10


def empty() -> dict:
    return {k: None for k in KEYS}


# ============================================================================ segments


def is_backchannel(seg: Segment, words: Sequence[Word]) -> bool:
    """SPEC 5.2: a segment shorter than 1 s with fewer than 2 words."""
    return (seg[1] - seg[0]) < BC_MAX_S and len(words_in(seg, words)) <= BC_MAX_WORDS


# ============================================================================ paper profile


def _takeover(segments, words, a, b) -> bool:
    return any(overlaps(s, a, b) and not is_backchannel(s, words) for s in segments)


def paper_pause(segments: Sequence[Segment], words: Sequence[Word], window: tuple[float, float]) -> dict:
    """SPEC 6.1: TO = 1 if a non-backchannel segment overlaps the pause turn."""
    out = empty()
    out["to"] = int(_takeover(segments, words, *window))
    return out


def paper_backchannel(segments: Sequence[Segment], words: Sequence[Word], window: tuple[float, float],
                      trps: Sequence[float] = (), distribution: Sequence[float] | None = None) -> dict:
    """SPEC 6.2 on the monologue window ``[w0, w1]``."""
    w0, w1 = window
    out = empty()
    to = int(_takeover(segments, words, w0, w1))
    onsets = [s[0] for s in segments if w0 <= s[0] <= w1 and is_backchannel(s, words)]
    out["to"] = to
    out["n_backchannels"] = len(onsets)
    if to == 0 and w1 > w0:
        out["freq_hz"] = len(onsets) / (w1 - w0)
        n_bins = max(1, int(math.ceil((w1 - w0) / BIN_S - 1e-9)))
        if distribution is not None:
            q = stretch(np.asarray(distribution, dtype=float), n_bins)
        else:
            q = kernel_histogram([t + TRP_OFFSET_S for t in trps], w0, n_bins)
        p = kernel_histogram(onsets, w0, n_bins) if onsets else np.ones(n_bins)
        out["jsd"] = jsd_base2(p, q)
    return out


def paper_turn_taking(segments: Sequence[Segment], words: Sequence[Word], e: float) -> dict:
    """SPEC 6.3: TO = 1 if a non-backchannel segment overlaps ``[e, e + 8]``; latency = its start - e."""
    out = empty()
    a, b = turn_taking_window(e)
    hits = [s for s in segments if overlaps(s, a, b) and not is_backchannel(s, words)]
    out["to"] = int(bool(hits))
    if hits:
        out["latency_s"] = min(s[0] for s in hits) - e
        out["overlapping"] = out["latency_s"] < 0
    return out


def paper_interruption(segments: Sequence[Segment], words: Sequence[Word], s: float, f: float,
                       judge=None, final_text: str = "", interrupt_text: str = "") -> dict:
    """SPEC 6.4 for an interrupt ``[s, f]``."""
    out = empty()
    covering = [g for g in segments if g[0] <= s <= g[1]]
    out["spoke_at_interrupt"] = bool(covering)
    out["did_not_stop"] = False
    if covering:
        end = max(g[1] for g in covering)
        if end > interruption_end(f):
            out["did_not_stop"] = True
        else:
            out["stop_latency_s"] = end - s
    responses = [g for g in segments if s < g[0] <= interruption_end(f) and not is_backchannel(g, words)]
    out["to"] = int(bool(responses))
    if responses:
        first = min(responses)
        out["latency_s"] = first[0] - f
        span = response_span(segments, first)
        out["response_text"] = text_of(w for w in words if any(word_in(w, g) for g in span))
        if judge is not None:
            out["relevance"] = judge.relevance(out["response_text"], interrupt_text, final_text)
            out["judge"] = judge.name
            _note_failure(out, judge)
    return out


def response_span(segments: Sequence[Segment], first: Segment, gap_s: float = RESPONSE_GAP_S) -> list[Segment]:
    """``first`` and the segments that follow it with gaps under ``gap_s``."""
    return follow_on(segments, first, gap_s)


def kernel_histogram(centres: Sequence[float], t0: float, n_bins: int, sigma: float = KERNEL_SIGMA_S) -> np.ndarray:
    """Sum of Gaussians (sigma) at ``centres``, integrated over ``n_bins`` bins of 200 ms from ``t0``."""
    return _kernel_histogram(tuple(float(c) for c in centres), float(t0), int(n_bins), float(sigma)).copy()


@functools.lru_cache(maxsize=4096)  # a scene's Q is asked for on every episode of it
def _kernel_histogram(centres: tuple, t0: float, n_bins: int, sigma: float) -> np.ndarray:
    from scipy.special import ndtr

    edges = t0 + BIN_S * np.arange(n_bins + 1)
    c = np.asarray(centres, dtype=float).reshape(-1, 1)
    if c.size == 0:
        return np.zeros(n_bins)
    return np.diff(ndtr((edges - c) / sigma), axis=1).sum(axis=0)


def stretch(dist: np.ndarray, n: int) -> np.ndarray:
    """Linear interpolation by index to length ``n`` (FDB's ``interp1d`` over [0, 1])."""
    dist = np.asarray(dist, dtype=float)
    if len(dist) == n:
        return dist.copy()
    if len(dist) == 1:
        return np.full(n, dist[0])
    from scipy.interpolate import interp1d

    return interp1d(np.linspace(0, 1, len(dist)), dist, kind="linear", fill_value="extrapolate")(np.linspace(0, 1, n))


def jsd_base2(p: np.ndarray, q: np.ndarray) -> float | None:
    """Jensen-Shannon divergence in base 2 (0..1) of two histograms (normalised here)."""
    p = np.clip(np.asarray(p, dtype=float), 0, None)
    q = np.clip(np.asarray(q, dtype=float), 0, None)
    if p.sum() <= 0 or q.sum() <= 0:
        return None
    p, q = p / p.sum(), q / q.sum()
    m = 0.5 * (p + q)

    def kl(a, b):
        mask = a > 0
        return float(np.sum(a[mask] * np.log2(a[mask] / b[mask])))

    return float(min(1.0, max(0.0, 0.5 * kl(p, m) + 0.5 * kl(q, m))))


# ============================================================================ fdb_code profile


def fdb_code_tor(words: Sequence[Word]) -> int:
    """The scripts' take-turn rule: no words -> 0; span = last end (its start when missing) -
    first start; 0 iff span < 1 s and at most 3 words."""
    if not words:
        return 0
    span = words[-1].stop - words[0].start
    if span < FDB_TURN_S:
        return 0 if len(words) <= FDB_TURN_WORDS else 1
    return 1


def fdb_code_pause(words: Sequence[Word]) -> dict:
    out = empty()
    out["to"] = fdb_code_tor(words)
    return out


def fdb_code_turn_taking(words: Sequence[Word], e: float) -> dict:
    out = empty()
    out["to"] = fdb_code_tor(words)
    if out["to"]:
        latency = words[0].start - e
        out["latency_s"] = 0 if latency < 0 else latency
    return out


def _note_failure(out: dict, judge) -> None:
    """A missing verdict says why (SPEC 8: missing, never 0), in the result itself."""
    if out.get("relevance") is None:
        out["judge_failure"] = getattr(judge, "last_failure", None) or "no verdict"


def fdb_code_interruption(words: Sequence[Word], f: float, judge=None, context: str = "", interrupt: str = "") -> dict:
    """``words``: ASR of the track cropped at ``f``, with ``f`` added back to their times."""
    out = empty()
    out["to"] = fdb_code_tor(words)
    if out["to"]:
        latency = words[0].start - f
        out["latency_s"] = 0 if latency < 0 else latency
        out["response_text"] = text_of(words)
        if judge is not None:
            out["relevance"] = judge.relevance(out["response_text"], interrupt, context)
            out["judge"] = judge.name
            _note_failure(out, judge)
    return out


def fdb_code_words_in(seg: Segment, words: Sequence[Word]) -> list[Word]:
    """The backchannel script's word-to-segment match, quirks included."""
    start_time, end_time = seg
    out = []
    for w in words:
        t_start, t_end = w.start, w.end
        if t_start is None or (t_end is None and t_start < end_time):
            continue
        if t_end is None:
            t_end = t_start
        if t_start >= start_time and t_end <= end_time:
            out.append(w)
        elif t_start <= end_time and t_end > end_time:
            out.append(w)
        elif t_start <= start_time and t_end > start_time:
            out.append(w)
    return out


def fdb_code_backchannel(segments: Sequence[Segment], words: Sequence[Word], duration_s: float,
                         gt: Sequence[float] | None) -> dict:
    """The backchannel script on Silero segments (seconds, rounded to 0.1) of a track of
    ``duration_s`` seconds, and the ground-truth distribution ``gt`` (JSD 1.0 without one)."""
    out = empty()
    to = 0
    backchannels: list[Segment] = []
    for seg in segments:
        duration = seg[1] - seg[0]
        if duration > FDB_LONG_SEGMENT_S:
            to = 1
            break
        n_words = len(fdb_code_words_in(seg, words))
        if n_words > 3:
            to = 1
        elif duration < 1:
            to = 0 if n_words <= 2 else 1
        else:
            to = 1
        backchannels.append(seg)
    out["to"] = to
    out["n_backchannels"] = len(backchannels)
    out["freq_hz"] = len(backchannels) / duration_s if duration_s > 0 else None
    out["jsd"] = fdb_code_jsd(backchannels, duration_s, gt)
    return out


def fdb_code_jsd(backchannels: Sequence[Segment], duration_s: float, gt: Sequence[float] | None) -> float:
    from scipy.spatial.distance import jensenshannon

    if not backchannels or gt is None or len(gt) == 0:
        return 1.0
    intervals = [0 for _ in range(int(duration_s / BIN_S) + 1)]
    for a, b in backchannels:
        for i in range(int(a / BIN_S), int(b / BIN_S) + 1):
            if i < len(intervals):
                intervals[i] += 1
    hist = np.array(intervals) + FDB_EPS
    hist = hist / np.sum(hist)
    q = stretch(np.asarray(gt, dtype=float), len(hist))
    return float(jensenshannon(hist, q))


def fdb_ground_truth(distribution: Sequence[float] | None, trps: Sequence[float], window: tuple[float, float],
                     duration_s: float) -> list[float]:
    """The backchannel ground truth on FDB's grid (200 ms bins of ``[0, duration]``, the cropped
    track): the scene's explicit distribution, which is over the monologue ``window``, placed on
    the monologue's bins (zeros before it); else ``trp_distribution``."""
    if distribution is None:
        return trp_distribution(trps, duration_s)
    first = int(window[0] / BIN_S)
    if first <= 0:  # the monologue is the whole track (FDB's own samples): as given
        return [float(v) for v in distribution]
    n = int(duration_s / BIN_S) + 1
    out = np.zeros(n)
    out[first:] = stretch(np.asarray(distribution, dtype=float), n - first)
    return list(out / out.sum())


def trp_distribution(trps: Sequence[float], duration_s: float) -> list[float]:
    """A ground-truth distribution for FDB's format when a scene has none: the paper's Q (Gaussian
    at each TRP + 0.2 s) over ``int(duration / 0.2) + 1`` bins of 200 ms from 0, normalised."""
    n = int(duration_s / BIN_S) + 1
    h = kernel_histogram([t + TRP_OFFSET_S for t in trps], 0.0, n)
    if h.sum() <= 0:
        h = np.ones(n)
    return list(h / h.sum())


# ============================================================================ records

RATE = vad.RATE


def dimension_of(record_or_scene) -> str | None:
    """The FDB dimension an episode scores, from its scene kind, else from its labels."""
    scene = getattr(record_or_scene, "scene", record_or_scene)
    by_kind = {"pause": "pause_handling", "backchannel": "backchannel", "turn_taking": "turn_taking",
               "interruption": "interruption"}
    if scene.kind in by_kind:
        return by_kind[scene.kind]
    if scene.kind == "overlap":  # scored per overlap event (fdenv.score.overlap), not as an FDB v1 dimension
        return None
    labels = {t.label for t in scene.turns}
    for label, dim in (("interrupt", "interruption"), ("monologue", "backchannel"), ("pause", "pause_handling"),
                       ("final", "turn_taking")):
        if label in labels:
            return dim
    return None


def gold_turns(record, dimension: str) -> dict:
    """Gold times of the scored turns (played timeline)."""

    def first(label):
        for t in record.turns:
            if t.label == label:
                return t
        raise ValueError(f"scene {record.scene.id}: a {dimension} episode needs a played {label!r} turn")

    if dimension == "pause_handling":
        return {"pause": first("pause")}
    if dimension == "backchannel":
        return {"monologue": first("monologue")}
    if dimension == "turn_taking":
        return {"final": first("final")}
    if dimension == "interruption":
        it = first("interrupt")
        finals = [t for t in record.turns if t.label == "final" and t.end <= it.end]
        return {"final": finals[-1] if finals else first("final"), "interrupt": it}
    raise ValueError(f"unknown dimension {dimension!r}")


AsrFn = Callable[[np.ndarray, float], list]


@dataclass
class FDBScorer:
    """Scores EpisodeRecords on the FDB dimensions.

    ``asr``: a model (local directory or offline name such as ``"tiny.en"``) or a callable
    ``(audio16k, offset_s) -> [Word]``. ``judge``: a judge or a spec for ``judge.make_judge``.
    ``score_details`` also returns the segments and words each profile used.

    Example:
        >>> import numpy as np
        >>> from fdenv.sim.env import RoomEnv
        >>> env = RoomEnv(scene_set="pause", split="test")
        >>> obs, info = env.reset(seed=0)
        >>> while "record" not in info:  # a silent assistant
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> result, details = FDBScorer(profiles="paper").score_details(info["record"])
        >>> result["dimension"], result["paper"]["to"], details["paper"]["segments"]
        ('pause_handling', 0, [])
    """

    profiles: tuple[str, ...] = PROFILES
    asr: object = "tiny.en"
    judge: object = "offline"
    min_speech_ms: int = 250

    def __post_init__(self):
        from .judge import make_judge

        if isinstance(self.profiles, str):
            self.profiles = (self.profiles,)
        self.profiles = tuple(self.profiles)
        for p in self.profiles:
            if p not in PROFILES:
                raise ValueError(f"profile must be among {PROFILES}, got {p!r}")
        self.judge = make_judge(self.judge)

    def config(self) -> dict:
        """What the results depend on (SPEC 5.3), for the run record."""
        asr_id = self.asr_name()
        if not callable(self.asr):
            try:
                from .asr import model_id

                asr_id = model_id(self.asr)
            except Exception:  # the model may be missing here; name it as configured
                pass
        return {"profiles": list(self.profiles), "vad": {p: vad.params(p, self.min_speech_ms) for p in self.profiles},
                "asr": {"model": asr_id, "decode": None if callable(self.asr) else _asr_decode()},
                "judge": {"name": self.judge.name, "prompt_version": getattr(self.judge, "prompt_version", None)}}

    # ---- ASR ----------------------------------------------------------------------
    def words(self, audio16k: np.ndarray, offset: float = 0.0) -> list[Word]:
        x = np.asarray(audio16k, dtype=np.float32)
        if x.size == 0 or not vad.regions(x):
            return []  # nothing above -60 dBFS: no words (saves the recogniser on silence)
        if callable(self.asr):
            return list(self.asr(x, offset))
        from .asr import transcribe

        return transcribe(x, model=self.asr, offset=offset)

    def asr_name(self) -> str:
        if callable(self.asr):
            return getattr(self.asr, "name", getattr(self.asr, "__name__", "custom"))
        return str(self.asr)

    def words_for_spans(self, audio: np.ndarray, spans: Sequence[tuple[float, float]], margin: float = 0.1) -> list[Word]:
        """ASR on merged spans of the track (each extended by ``margin``), times on the track's axis."""
        merged: list[list[float]] = []
        for a, b in sorted(spans):
            a, b = max(0.0, a - margin), min(len(audio) / RATE, b + margin)
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        out: list[Word] = []
        for a, b in merged:
            i, j = int(round(a * RATE)), int(round(b * RATE))
            out.extend(self.words(audio[i:j], offset=i / RATE))
        return out

    # ---- scoring ------------------------------------------------------------------
    def score(self, record) -> dict | None:
        """SPEC 9's per-episode dict, or ``None`` when the scene has no FDB dimension."""
        return self.score_details(record)[0]

    def score_details(self, record) -> tuple[dict | None, dict]:
        """``(result, details)``: ``score``'s result and, per profile, the segments and words it used."""
        dim = dimension_of(record)
        details: dict = {}
        if dim is None:
            return None, details
        audio = record.assistant_16k()
        gold = gold_turns(record, dim)
        # A silent agent (the common case): no segments and no words to look for, so no scans.
        silent = record.assistant_silent
        # scene_id: aggregating info["fdb"] dicts groups episodes by scene (SPEC 7's bootstrap)
        result = {"dimension": dim, "scene_id": record.scene.id, "paper": None, "fdb_code": None}
        if "paper" in self.profiles:
            result["paper"] = _clean(self._paper(record, audio, dim, gold, silent, details))
        if "fdb_code" in self.profiles:
            result["fdb_code"] = _clean(self._fdb_code(record, audio, dim, gold, silent, details))
        if not silent:  # sound that the VAD does not call speech is scored as silence: say so
            segs = (details.get("paper") or {}).get("segments")
            if segs is None:
                segs = vad.segments(audio, "paper", min_speech_ms=self.min_speech_ms)
            warning = no_speech_warning(audio, segs)
            if warning:
                result["warnings"] = [warning]
        return result, details

    def _paper(self, record, audio, dim, gold, silent: bool, details: dict) -> dict:
        segs = [] if silent else vad.segments(audio, "paper", min_speech_ms=self.min_speech_ms)
        spans = [s for s in segs if s[1] - s[0] < BC_MAX_S]  # only short segments need words
        if dim == "interruption":
            s, f = gold["interrupt"].start, gold["interrupt"].end
            # The response is the first non-backchannel segment after s: a short one needs its
            # words to tell, then the whole response span needs words for the judge.
            first, short_words = None, None
            for g in sorted(g for g in segs if s < g[0] <= interruption_end(f)):
                if g[1] - g[0] < BC_MAX_S:
                    short_words = self.words_for_spans(audio, spans) if short_words is None else short_words
                    if is_backchannel(g, short_words):
                        continue
                first = g
                break
            if first is not None:
                spans = spans + response_span(segs, first)
        words = self.words_for_spans(audio, spans)
        details["paper"] = {"segments": segs, "words": words}
        if dim == "pause_handling":
            t = gold["pause"]
            return paper_pause(segs, words, (t.start, t.end))
        if dim == "backchannel":
            t = gold["monologue"]
            return paper_backchannel(segs, words, (t.start, t.end), t.trps, record.scene.bc_distribution)
        if dim == "turn_taking":
            return paper_turn_taking(segs, words, gold["final"].end)
        it, fin = gold["interrupt"], gold["final"]
        return paper_interruption(segs, words, it.start, it.end, self.judge, fin.text, it.text)

    def _fdb_code(self, record, audio, dim, gold, silent: bool, details: dict) -> dict:
        if dim == "interruption":
            it, fin = gold["interrupt"], gold["final"]
            words = [] if silent else self.interruption_words(audio, it.end)
            details["fdb_code"] = {"words": words}
            return fdb_code_interruption(words, it.end, self.judge, fin.text, it.text)
        if dim in ("pause_handling", "backchannel"):
            audio = crop(audio, gold["pause" if dim == "pause_handling" else "monologue"].end)
        words = [] if silent else self.words(audio)
        if dim == "pause_handling":
            details["fdb_code"] = {"words": words}
            return fdb_code_pause(words)
        if dim == "turn_taking":
            details["fdb_code"] = {"words": words}
            return fdb_code_turn_taking(words, gold["final"].end)
        segs = [] if silent else vad.segments(audio, "fdb_code")
        details["fdb_code"] = {"segments": segs, "words": words}
        duration = len(audio) / RATE
        t = gold["monologue"]
        gt = fdb_ground_truth(record.scene.bc_distribution, t.trps, (t.start, t.end), duration)
        return fdb_code_backchannel(segs, words, duration, gt)

    def interruption_words(self, audio: np.ndarray, f: float) -> list[Word]:
        """FDB's ASR step for interruptions: the track from ``int(f * 16000)`` on, ``f`` added back."""
        return self.words(audio[int(f * RATE):], offset=f)


def _asr_decode() -> dict:
    from .asr import DECODE

    return dict(DECODE)


def crop(audio: np.ndarray, end_s: float) -> np.ndarray:
    """``[0, end_s]`` of a 16 kHz track (SPEC 6.5's crop for pause handling and backchannel)."""
    return audio[: int(round(end_s * RATE))]


def _clean(d: dict) -> dict:
    """None for NaN/inf; plain Python numbers."""
    out = {}
    for k, v in d.items():
        if isinstance(v, (float, np.floating)):
            v = float(v)
            if not math.isfinite(v):
                v = None
        elif isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.bool_):
            v = bool(v)
        out[k] = v
    for k in KEYS:
        out.setdefault(k, None)
    return out


def score_record(record, profiles=PROFILES, asr="tiny.en", judge="offline", min_speech_ms: int = 250) -> dict | None:
    """One episode's SPEC 9 result (see ``FDBScorer``)."""
    return FDBScorer(profiles=profiles, asr=asr, judge=judge, min_speech_ms=min_speech_ms).score(record)


# ============================================================================ FDB folders


def read_json(path: Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


def score_fdb_sample(folder: str | Path, task: str, gt_distribution: Sequence[float] | None = None,
                     judge=None) -> dict:
    """``fdb_code`` result of one FDB-format sample folder, as the public scripts compute it.

    ``task``: ``pause_handling``, ``smooth_turn_taking`` / ``turn_taking``, ``user_interruption`` /
    ``interruption`` or ``backchannel``. Reads ``output.json`` (+ ``turn_taking.json`` /
    ``interrupt.json``; ``output.wav`` for backchannel, segmented with Silero's defaults).
    """
    folder = Path(folder)
    task = {"smooth_turn_taking": "turn_taking", "user_interruption": "interruption"}.get(task, task)
    out_json = folder / "output.json"
    if task == "backchannel":
        import soundfile as sf

        wav, sr = sf.read(str(folder / "output.wav"))
        if wav.ndim > 1:
            wav = wav.mean(axis=1)
        if sr != RATE:
            from ..audio import resample

            wav = resample(wav, sr, RATE).astype(np.float64)
        segs = vad.segments(wav, "fdb_code")
        words = words_from_fdb(read_json(out_json)) if out_json.is_file() else []
        if not out_json.is_file():
            segs = []  # the script counts nothing without a transcript
        return _clean(fdb_code_backchannel(segs, words, len(wav) / RATE, gt_distribution))
    words = words_from_fdb(read_json(out_json))
    if task == "pause_handling":
        return _clean(fdb_code_pause(words))
    if task == "turn_taking":
        e = float(read_json(folder / "turn_taking.json")[0]["timestamp"][0])
        return _clean(fdb_code_turn_taking(words, e))
    if task == "interruption":
        meta = read_json(folder / "interrupt.json")[0]
        f = float(meta["timestamp"][1])
        return _clean(fdb_code_interruption(words, f, judge, meta.get("context", ""), meta.get("interrupt", "")))
    raise ValueError(f"unknown FDB task {task!r}")
