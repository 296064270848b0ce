"""TTS rendering cost: a 60 s scene cold (espeak), the same clips warm (cache), kokoro's real-time factor.

    python benchmarks/bench_render.py [--sample-rate 16000] [--kokoro-clips 4] [--no-kokoro]

Uses a temporary cache directory, so it measures real synthesis, not a cache left by earlier runs
(kokoro's own assembled model file, outside that directory, is reused).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from fdenv.render import BackendUnavailableError, Renderer  # noqa: E402

# A 60 s scene's worth of text: 25 clips, four speakers.
SCENE = [
    "So who is bringing the drinks on Saturday?",
    "I can pick up the cake on the way over.",
    "Did anyone check whether the park is open late?",
    "Aria, what time does the bakery on Main Street close?",
    "Never mind, I'll call them myself.",
    "We need four bottles of lemonade and some ice.",
    "My sister said she might come, but she isn't sure yet.",
    "Hey Siri, set a timer for ten minutes.",
    "That should be enough time to get everything ready.",
    "Let's meet at the north gate at three.",
    "Actually, can we make it half past three?",
    "Sure, half past three works for me.",
    "How many chairs do we still need?",
    "I counted twelve, so we need six more.",
    "Tom has folding chairs in his garage.",
    "Great, I'll text him tonight.",
    "Aria must be tired of us by now.",
    "Hmm, what else is on the list?",
    "Plates, cups, napkins, and a speaker for music.",
    "I'll bring my speaker, it's waterproof.",
    "Perfect, in case it rains again.",
    "The forecast says sunny with a light breeze.",
    "Then we should bring sunscreen too.",
    "Four shots at eighty-five each comes to three hundred and forty.",
    "Alright, I think that's everything for now.",
]


def _render_all(r: Renderer) -> float:
    voices = r.voices
    return sum(len(r.clip(text, voices[i % 4])) for i, text in enumerate(SCENE)) / r.sample_rate


def bench_espeak(sr: int, cache: str) -> None:
    r = Renderer("espeak", sample_rate=sr, cache_dir=cache)
    t = time.perf_counter()
    version = r.version  # loads libespeak-ng once per process
    t_init = time.perf_counter() - t
    t = time.perf_counter()
    audio_s = _render_all(r)
    cold = time.perf_counter() - t
    print(f"espeak ({version}), {sr} Hz")
    print(f"  library load (once per process): {t_init * 1000:.1f} ms")
    print(f"  cold render, {len(SCENE)} clips, {audio_s:.1f} s of speech: {cold * 1000:.0f} ms"
          f"  (real-time factor {cold / audio_s:.4f}; target < 1 s)")

    disk = []
    for _ in range(5):
        fresh = Renderer("espeak", sample_rate=sr, cache_dir=cache)
        fresh.cache.clear_memory()  # the process-wide memory tier: measure the disk
        fresh.version
        t = time.perf_counter()
        _render_all(fresh)
        disk.append(time.perf_counter() - t)
        assert fresh.synth_calls == 0
    t = time.perf_counter()
    _render_all(r)
    mem = time.perf_counter() - t
    print(f"  warm load from disk cache (new Renderer): median {statistics.median(disk) * 1000:.2f} ms,"
          f" min {min(disk) * 1000:.2f} ms  (target well under 20 ms)")
    print(f"  warm load from memory cache: {mem * 1000:.2f} ms")
    print(f"  cold / warm(disk) ratio: {cold / statistics.median(disk):.0f}x")


def bench_kokoro(sr: int, cache: str, n: int) -> None:
    try:
        r = Renderer("kokoro", sample_rate=sr, cache_dir=cache)
    except BackendUnavailableError as e:
        print(f"kokoro: skipped ({e})")
        return
    t = time.perf_counter()
    r.backend._load()
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    audio_s = sum(len(r.clip(text, r.voices[i % len(r.voices)])) for i, text in enumerate(SCENE[:n])) / sr
    dt = time.perf_counter() - t
    print(f"kokoro ({r.version}), {sr} Hz")
    print(f"  model load: {t_load:.2f} s")
    print(f"  {n} clips, {audio_s:.1f} s of speech in {dt:.2f} s: real-time factor {dt / audio_s:.2f}"
          f"  (a 60 s scene: about {60 * dt / audio_s:.0f} s cold; {os.cpu_count()} CPUs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample-rate", type=int, default=16000)
    ap.add_argument("--kokoro-clips", type=int, default=4)
    ap.add_argument("--no-kokoro", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fdenv-bench-render-") as cache:
        bench_espeak(args.sample_rate, cache)
        if not args.no_kokoro:
            bench_kokoro(args.sample_rate, cache, args.kokoro_clips)


if __name__ == "__main__":
    main()
