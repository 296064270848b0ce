"""Scoring: reads EpisodeRecords (never the simulator) and measures what the assistant did.

Modules: ``vad`` (Silero segmentation), ``asr`` (faster-whisper words), ``judge`` (offline and
Anthropic judges), ``fdb`` (Full-Duplex-Bench's four dimensions, ``paper`` and ``fdb_code``
profiles), ``stats`` (bootstrap over scenes), ``summary`` (per-dimension tables).
"""

from .fdb import FDBScorer, score_fdb_sample, score_record
from .summary import aggregate, format_table

__all__ = ["FDBScorer", "aggregate", "format_table", "score_fdb_sample", "score_record"]
