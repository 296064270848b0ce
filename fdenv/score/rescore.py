"""Re-scoring a saved run without simulating again: what it was scored with (``run_scoring``), its
records without the microphones, and MPE's ``min_speech_ms`` sensitivity sweep (SPEC 7)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..runs import load_for_scoring, read_config, read_run
from . import stats

__all__ = ["SWEEP_MS", "load_for_scoring", "run_scoring", "sweep_min_speech"]


def run_scoring(folder: str | os.PathLike) -> dict:
    """The recogniser and judge a run folder was scored with, as specs that re-scoring accepts:
    ``{"asr": "tiny.en" | None, "judge": "offline" | "anthropic:<model>" | None}`` (``None``:
    not recorded, or a local model folder whose path the run does not keep)."""
    config = read_config(folder)
    if config is None:
        return {"asr": None, "judge": None}
    from .asr import _NAMED

    asr = judge = None
    for entry in (config.get("scoring") or {}).values():
        if not isinstance(entry, dict):
            continue
        name = str((entry.get("asr") or {}).get("model") or "").rsplit(":", 1)[0]
        asr = asr or (name if name in _NAMED else None)
        judge = judge or (entry.get("judge") or {}).get("name")
    return {"asr": asr, "judge": judge}


SWEEP_MS = (0, 100, 200, 300, 500)


def sweep_min_speech(source, values: Sequence[int] = SWEEP_MS, asr=None, judge=None,
                     n_resamples: int = stats.N_RESAMPLES, seed: int = stats.SEED, aggregate: bool = True) -> dict:
    """Re-score a saved MPE run at each ``min_speech_ms`` in ``values`` without simulating again.

    ``source``: a run folder (``episodes.jsonl`` + the saved records) or a list of
    ``EpisodeRecord``. Each record is read once; Silero's speech probabilities are computed once per
    non-silent region (and cached on disk), and only the thresholding runs per value, so the five
    values cost little more than one. Transcripts and verdicts come from the disk caches the
    original scoring filled. ``asr`` and ``judge`` default to the run folder's own
    (``run_scoring``), else ``"tiny.en"`` and ``"offline"``. Returns ``{"values": [...], "episodes": {ms: [info["mpe"], ...]},
    "summary": {ms: aggregate_mpe(...)}}`` (``summary`` only with ``aggregate``).
    """
    from .mpe import MPEScorer, is_mpe_scene
    from .mpe_aggregate import aggregate_mpe

    values = [int(v) for v in values]
    if isinstance(source, (str, Path)):
        folder = Path(source)
        lines = read_run(folder)
        records = (load_for_scoring(folder / ln["record"]) for ln in lines if ln.get("kind", "mpe") == "mpe" or ln.get("mpe"))
        used = run_scoring(folder)
        asr, judge = asr or used["asr"], judge or used["judge"]
    else:
        records = iter(source)
    scorer = MPEScorer(asr=asr or "tiny.en", judge=judge or "offline")
    per_value: dict[int, list[dict]] = {v: [] for v in values}
    for record in records:
        if not is_mpe_scene(record.scene):
            continue
        for v, result in scorer.score_many(record, values).items():
            per_value[v].append(result)
    out: dict = {"values": values, "episodes": per_value}
    if aggregate:
        out["summary"] = {v: aggregate_mpe(per_value[v], n_resamples=n_resamples, seed=seed) for v in values}
    return out
