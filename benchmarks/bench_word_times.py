"""How far the recogniser's first word start and last word end are from the rendered answer.

    python benchmarks/bench_word_times.py [--backend espeak|kokoro|both] [--n 200] [--asr tiny.en]

Ground truth comes from the render, not from any detector: each answer (the shipped scenes' gold
answers, in a seeded order, voices in turn) is placed in a silent 16 kHz assistant track at a
known sample, so its first and last samples are known exactly. The track goes through
``fdenv.score.asr.transcribe`` as the scorer calls it; errors are (measured - true) in ms for the
first word's start and the last word's end. Interior words (every recognised word but the first
and last, matched to the script's words by their normalised text) are measured against the TTS
back end's own word times (``Renderer.words``: espeak-ng's word events, Kokoro's phoneme
durations), start and end alike. Prints, per back end, the median and 95th percentile of the
absolute error, the signed 5th/50th/95th percentiles, and the same for Whisper's own times
(``snap=False``) for comparison, plus the recogniser's cost (uncached) as a fraction of real time.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SR = 16000


def answer_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct gold answers of the shipped scenes, in a seeded order."""
    from fdenv.scene import list_sets, load_set

    texts = sorted({t.gold_answer for name in list_sets() for sc in load_set(name, "all")
                    for t in sc.turns if t.gold_answer})
    order = np.random.default_rng(seed).permutation(len(texts))
    return [texts[i] for i in order[:n]]


def word_time_errors(backend: str, n: int, asr: str = "tiny.en", seed: int = 0) -> dict:
    """Signed errors in seconds: ``{"start", "end", "raw_start", "raw_end"}`` (one per answer with
    words), ``"missed"`` (answers with no word), ``"audio_s"`` and ``"asr_s"`` (recogniser time)."""
    from fdenv.render import Renderer
    from fdenv.score.asr import snap_to_track, transcribe

    r = Renderer(backend, SR)
    rng = np.random.default_rng(seed)
    out = {"start": [], "end": [], "raw_start": [], "raw_end": [], "inner_start": [], "inner_end": [],
           "missed": 0, "audio_s": 0.0, "asr_s": 0.0, "asr_cpu_s": 0.0}
    timed = hasattr(r, "words")  # a renderer that reports when each word is spoken
    for i, text in enumerate(answer_texts(n, seed)):
        clip = r.clip(text, r.voices[i % len(r.voices)])
        a = SR + int(rng.integers(0, SR // 2))  # 1-1.5 s of silence before, 1.5 s after
        x = np.zeros(a + len(clip) + 3 * SR // 2, np.float32)
        x[a : a + len(clip)] = clip
        t, c = time.perf_counter(), time.process_time()
        raw = transcribe(x, model=asr, snap=False, cache=False)
        words = snap_to_track(raw, x)  # what transcribe returns by default
        out["asr_s"] += time.perf_counter() - t
        out["asr_cpu_s"] += time.process_time() - c
        out["audio_s"] += len(x) / SR
        if not words:
            out["missed"] += 1
            continue
        on, off = a / SR, (a + len(clip)) / SR
        out["start"].append(words[0].start - on)
        out["end"].append(words[-1].stop - off)
        out["raw_start"].append(raw[0].start - on)
        out["raw_end"].append(raw[-1].stop - off)
        if timed:
            truth = [(w.start + on, w.end + on) for w in r.words(text, r.voices[i % len(r.voices)])]
            for (s0, s1), w in interior_pairs(text, truth, words):
                out["inner_start"].append(w.start - s0)
                out["inner_end"].append(w.stop - s1)
    return out


def interior_pairs(text: str, truth: list[tuple[float, float]], words) -> list:
    """(true (start, end), recognised word) for the recognised words other than the first and the
    last, matched to the script's words (``text.split()``, times ``truth``) where their normalised
    texts agree in the best alignment of the two sequences (a word the recogniser got wrong,
    merged or split is left out)."""
    from difflib import SequenceMatcher

    from fdenv.score.text import normalise

    script = [" ".join(normalise(t)) for t in text.split()]
    heard = [" ".join(normalise(w.text)) for w in words]
    pairs = []
    for block in SequenceMatcher(None, script, heard, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            a, b = block.a + k, block.b + k
            if 0 < b < len(words) - 1 and script[a]:
                pairs.append((truth[a], words[b]))
    return pairs


def summary(errors) -> dict:
    """Median and p95 of |error|, signed p5/p50/p95, all in ms."""
    e = 1000 * np.asarray(errors, dtype=float)
    a = np.abs(e)
    return {"median_abs": float(np.median(a)), "p95_abs": float(np.percentile(a, 95)),
            "p5": float(np.percentile(e, 5)), "p50": float(np.median(e)), "p95": float(np.percentile(e, 95)),
            "max_abs": float(a.max()), "n": int(len(e))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="both", choices=("espeak", "kokoro", "both"))
    ap.add_argument("--n", type=int, default=200, help="answers per back end (default 200)")
    ap.add_argument("--asr", default="tiny.en", help="recogniser: tiny.en, base, or a model folder")
    args = ap.parse_args(argv)
    backends = ("espeak", "kokoro") if args.backend == "both" else (args.backend,)
    print(f"{args.n} answers per back end, recogniser {args.asr}; errors in ms (measured - true)")
    print(f"{'backend':8} {'edge':12} {'median|e|':>9} {'p95|e|':>7} {'p5':>6} {'p50':>6} {'p95':>6} {'max|e|':>7}")
    for b in backends:
        res = word_time_errors(b, args.n, args.asr)
        for key, label in (("start", "first start"), ("end", "last end"),
                           ("raw_start", "  (whisper)"), ("raw_end", "  (whisper)"),
                           ("inner_start", "inner start"), ("inner_end", "inner end")):
            if not res[key]:
                continue
            s = summary(res[key])
            print(f"{b:8} {label:12} {s['median_abs']:9.0f} {s['p95_abs']:7.0f} {s['p5']:6.0f} {s['p50']:6.0f} "
                  f"{s['p95']:6.0f} {s['max_abs']:7.0f}")
        print(f"{b:8} answers without words: {res['missed']}/{args.n}; interior words matched: "
              f"{len(res['inner_start'])}; recogniser cost "
              f"{res['asr_s'] / res['audio_s']:.3f} x real time ({res['asr_cpu_s'] / res['audio_s']:.3f} in CPU time)")


if __name__ == "__main__":
    main()
