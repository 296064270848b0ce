"""How far the ``paper`` profile's segment edges are from the sound's edges, against Silero's own.

    python benchmarks/bench_vad_edges.py

espeak sentences (nasal, fricative, plosive and vowel onsets) in four voices, each placed at 8
phases of Silero's 512-sample window grid, on a clean track and under white noise at -50 and -40
dBFS. The sound's edges are the clip's first and last samples above -60 dBFS. Prints percentiles
of (measured - true) in ms and how many of the cases miss by more than 40 ms (the tolerance of
the end-to-end latency test), for onsets and ends.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("FDENV_CACHE_DIR", tempfile.mkdtemp(prefix="fdenv-bench-"))

SENTENCES = (
    "Nine in the morning is when the next train leaves.", "So that is the plan for today.",
    "The next train leaves at nine.", "Hmm, let me think about that.", "Yes, that sounds right to me.",
    "Well, it depends on the weather.", "Five minutes from now, I think.", "Actually, the museum closes early.",
    "Sure, I can help you with that.", "It's on the second floor.", "Zero degrees tonight, so dress warmly.",
    "Michael said the meeting moved.", "Hello there, how can I help?", "Right, okay, go on.",
    "Maybe we should ask someone else.", "Of course.", "Two trains.", "Check the list, please.", "Pardon?", "Thanks.",
)
SR = 16000
PAD = 480  # Silero's 30 ms speech pad


def main() -> None:
    from silero_vad.utils_vad import get_speech_timestamps_from_probs

    from fdenv.render import Renderer
    from fdenv.score import vad

    r = Renderer(backend="espeak", sample_rate=SR)
    voices = r.voices[::2]
    print(f"{len(SENTENCES)} sentences x {len(voices)} voices x 8 window phases, errors in ms (measured - true)")
    print(f"{'noise':>10}  {'edge':5} {'method':8} {'p5':>6} {'p50':>6} {'p95':>6} {'max|e|':>7}  {'> 40 ms':>8}")
    rng = np.random.default_rng(0)
    for noise_db in (None, -50.0, -40.0):
        err = {k: [] for k in ("onset silero", "onset paper", "end silero", "end paper")}
        for v in voices:
            for text in SENTENCES:
                c = r.clip(text, v)
                on = np.flatnonzero(np.abs(c) > 1e-3)
                c = c[on[0] : on[-1] + 1]
                for ph in range(0, 512, 64):
                    a = 8000 + ph
                    x = np.zeros(a + len(c) + 8000, np.float32)
                    x[a : a + len(c)] = c
                    if noise_db is not None:
                        x += (10 ** (noise_db / 20) * rng.standard_normal(len(x))).astype(np.float32)
                    probs = vad.region_probs(x, cache=False)
                    raw = []
                    for ra, rb, p in probs:
                        ts = get_speech_timestamps_from_probs(p, sampling_rate=SR, threshold=vad.THRESHOLD,
                                                              min_speech_duration_ms=250, speech_pad_ms=vad.SPEECH_PAD_MS,
                                                              min_silence_duration_ms=vad.MIN_SILENCE_MS,
                                                              audio_length_samples=rb - ra)
                        raw += [((ra + t["start"] + PAD) / SR, (ra + t["end"] - PAD) / SR) for t in ts]
                    paper = vad.segments_from_probs(x, probs, 250)
                    for name, segs in (("silero", raw), ("paper", paper)):
                        if segs:
                            err[f"onset {name}"].append(1000 * (segs[0][0] - a / SR))
                            err[f"end {name}"].append(1000 * (segs[-1][1] - (a + len(c)) / SR))
        label = "clean" if noise_db is None else f"{noise_db:.0f} dBFS"
        for key, e in err.items():
            e = np.asarray(e)
            p5, p50, p95 = np.percentile(e, [5, 50, 95])
            edge, method = key.split()
            print(f"{label:>10}  {edge:5} {method:8} {p5:6.0f} {p50:6.0f} {p95:6.0f} {np.abs(e).max():7.0f}  "
                  f"{int((np.abs(e) > 40).sum()):4d}/{len(e)}")


if __name__ == "__main__":
    main()
