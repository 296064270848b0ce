"""Scoring: reads EpisodeRecords (never the simulator) and measures what the assistant did.

Modules: ``vad`` (Silero segmentation), ``asr`` (faster-whisper words), ``judge`` (offline and
Anthropic judges), ``fdb`` (Full-Duplex-Bench's four dimensions, ``paper`` and ``fdb_code``
profiles), ``fdb15`` (Full-Duplex-Bench v1.5's timing rules and behaviour categories, pure
functions), ``mpe`` (Duplex-MPE's measures), ``stats`` (bootstrap over scenes), ``summary``
(per-dimension tables). Tables: ``aggregate`` / ``format_table`` for the FDB dimensions,
``aggregate_mpe`` / ``format_mpe`` for the multi-party capabilities.
"""

from .fdb import FDBScorer, score_fdb_sample, score_record
from .mpe import MPEScorer
from .mpe_aggregate import aggregate_mpe
from .mpe_table import format_mpe
from .summary import aggregate, format_table

__all__ = ["FDBScorer", "MPEScorer", "aggregate", "aggregate_mpe", "format_mpe", "format_table", "score_fdb_sample",
           "score_record"]
