"""Sound that the VAD does not call speech: a warning beside the scores, never a score.

A tone, noise or clipped audio on the assistant track has no speech segments, so every measure
treats it as silence: right by the rules (SPEC 5), and a trap for someone whose agent meant to
speak. The scorers add this warning to the episode's result; the report tables count it.
"""

from __future__ import annotations

import numpy as np

RATE = 16000
FRAME_S = 0.02
SOUND_DB = -45.0  # what the text timeline draws as '#'
MIN_SOUND_S = 0.2


def no_speech_warning(audio16k, segments) -> str | None:
    """A warning when ``audio16k`` holds at least 0.2 s of sound above -45 dBFS (20 ms frames) and
    ``segments`` (the VAD's speech segments of it) is empty; else ``None``."""
    if segments:
        return None
    x = np.asarray(audio16k, dtype=np.float32)
    if not x.any():
        return None
    frame = int(FRAME_S * RATE)
    k = len(x) // frame
    rms = np.sqrt(np.mean(x[: k * frame].reshape(k, frame).astype(np.float64) ** 2, axis=1))
    seconds = float(np.count_nonzero(rms > 10 ** (SOUND_DB / 20)) * FRAME_S)
    if seconds < MIN_SOUND_S:
        return None
    peak = 20 * np.log10(float(np.abs(x).max()))
    return (f"sound but no speech: the assistant track holds {seconds:.1f} s of sound above {SOUND_DB:.0f} dBFS "
            f"(peak {peak:.0f} dBFS) and the VAD found no speech in it (a tone, noise, clipped audio, or speech "
            "shorter than min_speech_ms?); it is scored as silence")
