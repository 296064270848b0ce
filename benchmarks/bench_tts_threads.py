"""Kokoro in several worker processes: onnxruntime's own thread count against each worker's share of the cores.

    python benchmarks/bench_tts_threads.py [--workers 2] [--sentences 4]

A turn-end collection (``python -m fdenv.cli.turn_end collect --workers N``) spends almost all its
time in Kokoro's model when the voice cache is cold. Each worker here loads the model, then all
start together (a barrier) and synthesise the same sentences; the wall time is the slowest
worker's. Printed: both wall times, their ratio (shared / own count), and whether every worker's
audio is the same bit for bit in both settings. Nothing is cached: it calls the back end itself.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = [
    "I was thinking we could go to the market on Saturday morning before it gets busy.",
    "Do you know whether the library is open late on Thursdays?",
    "My sister said the new bakery on the corner makes the best bread in town, honestly.",
    "Could you remind me what time the train leaves tomorrow?",
]


def _worker(share: int | None, n: int, barrier, results) -> None:
    from fdenv.render import kokoro

    if share:
        kokoro.share_cores(share)
    backend = kokoro.KokoroBackend()
    voice = backend.voices()[0]
    backend.synthesize(SENTENCES[0], voice)  # loads the model
    threads = backend._load().sess.get_session_options().intra_op_num_threads
    barrier.wait()
    t = time.perf_counter()
    digest = hashlib.sha256()
    for i in range(n):
        digest.update(backend.synthesize(SENTENCES[i % len(SENTENCES)], voice).tobytes())
    results.put((time.perf_counter() - t, digest.hexdigest(), threads))


def _run(workers: int, n: int, share: bool) -> tuple[float, set[str], set[int]]:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(workers if share else None, n, barrier, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    out = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return max(t for t, _, _ in out), {d for _, d, _ in out}, {k for _, _, k in out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sentences", type=int, default=4, help="sentences each worker synthesises")
    args = ap.parse_args()
    print(f"{args.workers} workers on {os.cpu_count()} cores, {args.sentences} sentences each")
    own, own_audio, own_threads = _run(args.workers, args.sentences, share=False)
    print(f"  onnxruntime's own thread count (session option {sorted(own_threads)}, 0 = one per core): {own:.1f} s")
    shared, shared_audio, shared_threads = _run(args.workers, args.sentences, share=True)
    print(f"  each worker's share of the cores ({sorted(shared_threads)} threads): {shared:.1f} s")
    print(f"  ratio shared / own: {shared / own:.2f}")
    same = own_audio == shared_audio and len(own_audio) == 1
    print(f"  audio: {'the same bit for bit in every worker and setting' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
