"""The one resampler (soxr, DESIGN: about 10x faster than the alternatives; no torchaudio)."""

from __future__ import annotations

import numpy as np


def resample(x: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """``x`` (float32) from ``rate_in`` to ``rate_out`` Hz with soxr's high quality; identity
    when the rates are equal."""
    x = np.asarray(x, dtype=np.float32)
    if rate_in == rate_out:
        return x
    import soxr

    return soxr.resample(x, rate_in, rate_out, quality="HQ").astype(np.float32, copy=False)
