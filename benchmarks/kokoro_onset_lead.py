"""How long before its aligned start a Kokoro voice already sounds a word.

    python benchmarks/kokoro_onset_lead.py [--texts 4]     # 3-7 minutes here

Kokoro reports each word's samples from its duration predictor (``synthesize_words``); the
renderer cuts a turn's pieces at those times and moves each cut back by the back end's
``onset_lead_s``, since the sound of a word starts before its aligned frame. The one place where
the sound's start is known without a detector is an utterance's first word: before it there is
only the model's leading pad, so the first sample above the trim threshold (``trim_bounds``, as
the renderer trims) is the word's onset. For every voice and the first ``--texts`` validation
turns of the shipped scene sets, spoken alone, this prints the aligned start minus that onset in
ms: median, 10th and 90th percentiles, and per voice. Deterministic.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def onset_lead_ms(audio: np.ndarray, sr: int, first_word_start: int) -> float:
    """The first word's aligned start minus the audio's onset (``trim_bounds``), in ms."""
    from fdenv.render.process import trim_bounds

    onset, end = trim_bounds(audio, sr)
    if end <= onset:
        raise ValueError("the audio holds no sound above the trim threshold")
    return (first_word_start - onset) * 1000.0 / sr


def turn_texts(n: int) -> list[str]:
    """The first ``n`` human turns of the validation pause scenes, as spoken (no markers)."""
    from fdenv.scene.sets import load_set

    out = []
    for scene in load_set("pause", "val"):
        out += [turn.spoken_text for turn in scene.turns]
        if len(out) >= n:
            return out[:n]
    return out


def main(argv=None) -> None:
    from fdenv.render.registry import get_backend

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=4, help="turns per voice (default 4)")
    args = ap.parse_args(argv)
    if args.texts < 1:
        ap.error(f"--texts {args.texts}: at least one turn per voice")
    backend = get_backend("kokoro")
    texts, leads = turn_texts(args.texts), {}
    for voice in backend.voices():
        for text in texts:
            audio, words = backend.synthesize_words([text], voice)
            leads.setdefault(voice, []).append(onset_lead_ms(audio, backend.sample_rate, words[0][0][0]))
    every = np.concatenate(list(leads.values()))
    p10, p50, p90 = np.percentile(every, [10, 50, 90])
    print(f"Kokoro, {len(leads)} voices x {len(texts)} turns: the first word's aligned start trails the "
          f"sound's onset by {p50:.0f} ms (median; 10th-90th percentile {p10:.0f}-{p90:.0f} ms); "
          f"the renderer's onset_lead_s is {backend.onset_lead_s * 1000:.0f} ms")
    for voice, ms in leads.items():
        print(f"  {voice:16s} median {np.median(ms):4.0f} ms  min {np.min(ms):4.0f}  max {np.max(ms):4.0f}")


if __name__ == "__main__":
    main()
