"""Room module costs: cold and warm preparation of a 60 s scene, and the per-step echo cost.

Run: ``python benchmarks/bench_room.py [--rate 16000] [--room office] [--mics circular4]``.

- cold: empty caches, ``build_room`` (impulse responses for 4 talkers + the loudspeaker into
  every microphone, absorption correction included) and convolving 25 clips totalling 60 s;
- warm: the same again (cache hits; clips are hashed to find them);
- noise: diffuse noise for 60 s (cold), for reference;
- echo: one ``EchoPath.push`` (echo_gain 0.5, one frame), also as a ratio to CartPole-v1's step.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _clips(rate: int, total_s: float = 60.0, n: int = 25, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    lengths = rng.dirichlet(np.ones(n)) * total_s
    out = []
    for L in lengths:
        k = max(1, int(L * rate))
        t = np.arange(k) / rate
        x = np.sin(2 * np.pi * rng.uniform(90, 220) * t) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t))
        out.append((0.1 * x + 0.01 * rng.standard_normal(k)).astype(np.float32))
    return out


def _prepare(room_cfg, speakers, clips, seed, rate):
    from fdenv.room import build_room

    room = build_room(room_cfg, speakers, seed, rate)
    wet = [room.convolve(speakers[i % len(speakers)], c) for i, c in enumerate(clips)]
    return room, wet


def _cartpole_step_s(n: int = 20000) -> float | None:
    try:
        import gymnasium as gym
    except ImportError:  # pragma: no cover
        return None
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    t = time.perf_counter()
    for _ in range(n):
        _, _, term, trunc, _ = env.step(0)
        if term or trunc:
            env.reset()
    return (time.perf_counter() - t) / n


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=int, default=16000)
    ap.add_argument("--room", default="office")
    ap.add_argument("--mics", default="circular4")
    ap.add_argument("--echo-gain", type=float, default=0.5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import pyroomacoustics  # noqa: F401  (import cost is not preparation cost)
    import scipy.signal  # noqa: F401

    from fdenv.room import active_speech_level_dba, clear_caches

    rate, frame = args.rate, args.rate * 80 // 1000
    cfg = {"preset": args.room, "mics": args.mics, "echo_gain": args.echo_gain}
    speakers = ["alice", "bob", "carol", "dave"]
    clips = _clips(rate)

    cold, warm = [], []
    for r in range(args.repeats):
        clear_caches()
        t = time.perf_counter()
        room, wet = _prepare(cfg, speakers, clips, 100 + r, rate)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        _prepare(cfg, speakers, clips, 100 + r, rate)
        warm.append(time.perf_counter() - t)

    level = active_speech_level_dba(np.concatenate([w[0] for w in wet]), rate)
    t = time.perf_counter()
    room.noise(60 * rate, level, kind="pink", snr_db=15)
    noise_s = time.perf_counter() - t

    echo = room.echo_path(frame)
    a = (0.1 * np.random.default_rng(0).standard_normal(frame)).astype(np.float32)
    for _ in range(200):
        echo.push(a)
    n = 5000
    t = time.perf_counter()
    for _ in range(n):
        echo.push(a)
    echo_s = (time.perf_counter() - t) / n
    cp = _cartpole_step_s()

    print(f"room {cfg} at {rate} Hz, {room.n_mics} mics, image order {room.max_order}, "
          f"IR length {room.ir_length} samples ({room.ir_length / rate:.2f} s), {echo.partitions} echo partitions")
    print(f"cold 60 s scene (IRs for {len(speakers)} talkers + loudspeaker, 25 clips): "
          f"median {np.median(cold) * 1e3:.0f} ms (runs: {', '.join(f'{c * 1e3:.0f}' for c in cold)})"
          "  [target < 1000 ms]")
    print(f"warm 60 s scene: median {np.median(warm) * 1e3:.1f} ms  [target < 50 ms]")
    print(f"noise, 60 s pink, cold: {noise_s * 1e3:.0f} ms")
    line = f"echo push per step: {echo_s * 1e6:.1f} us"
    if cp:
        line += f"; CartPole-v1 step {cp * 1e6:.1f} us; ratio {echo_s / cp:.1f}x"
    print(line)
    return {"cold_s": float(np.median(cold)), "warm_s": float(np.median(warm)), "noise_s": noise_s,
            "echo_step_s": echo_s, "cartpole_step_s": cp}


if __name__ == "__main__":
    main()
