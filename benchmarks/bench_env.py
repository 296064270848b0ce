"""Step and reset costs of fdenv, measured against CartPole-v1 in the same process.

    python benchmarks/bench_env.py [--room office]

Prints ratios (the machine is noisy; ratios measured in one run are what we compare):
- step alone (resets not timed), fdenv/TurnTaking-v0 with a silent agent vs CartPole-v1;
- the same with a room dict (office, circular4 array, echo 0.5) when --room is given or by default;
- a reset from a warm clip cache;
- rendering a cold 60 s scene with espeak (an empty clip cache).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import gymnasium as gym
import numpy as np

import fdenv  # noqa: F401


def step_cost(env, steps: int, seed: int = 0, speaking: bool = False) -> float:
    """Mean seconds per step over ``steps`` steps, resets excluded. ``speaking``: the action is
    low-level noise instead of silence, so the echo is computed every frame."""
    if not env.action_space.shape:
        action = 0
    elif speaking:
        action = (0.01 * np.random.default_rng(0).standard_normal(env.action_space.shape)).astype(np.float32)
    else:
        action = np.zeros(env.action_space.shape, env.action_space.dtype)
    env.reset(seed=seed)
    total, n, ep = 0.0, 0, seed
    while n < steps:
        t = time.perf_counter()
        out = env.step(action)
        total += time.perf_counter() - t
        n += 1
        if out[2] or out[3]:
            ep += 1
            env.reset(seed=ep)
    return total / n


def cold_60s_render() -> float:
    """Seconds to render about 60 s of scene speech with espeak into an empty cache."""
    from fdenv.render import Renderer, voice_map
    from fdenv.scene import load_set

    scenes = load_set("backchannel", "all")
    with tempfile.TemporaryDirectory() as tmp:
        r = Renderer("espeak", 16000, cache_dir=tmp)
        t = time.perf_counter()
        seconds = 0.0
        for sc in scenes:
            voices = voice_map(sc, r)
            for turn in sc.turns:
                for p in turn.pieces:
                    seconds += len(r.clip(p.text, voices[turn.speaker])) / 16000
            if seconds >= 60:
                break
        return (time.perf_counter() - t) * 60.0 / seconds


def warm_reset(env_id: str, n: int = 20) -> float:
    env = gym.make(env_id)
    for s in range(n):
        env.reset(seed=s)  # fills the clip cache
    t = time.perf_counter()
    for s in range(n):
        env.reset(seed=s)
    return (time.perf_counter() - t) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--room", default='{"preset": "office", "mics": "circular4", "echo_gain": 0.5}',
                    help="room for the second measurement (JSON dict or preset name); 'none' to skip")
    args = ap.parse_args()
    os.environ.setdefault("FDENV_CACHE_DIR", tempfile.mkdtemp(prefix="fdenv-bench-"))

    cart = gym.make("CartPole-v1")
    fd = gym.make("fdenv/TurnTaking-v0")
    step_cost(fd, 500)  # warm up (clip cache, allocations)
    step_cost(cart, 500)
    c = step_cost(cart, args.steps)
    f = step_cost(fd, args.steps)
    print(f"CartPole-v1 step                 {c * 1e6:8.1f} us")
    print(f"fdenv/TurnTaking-v0 step          {f * 1e6:8.1f} us   ratio {f / c:5.2f}x  (target <= 4x)")
    if args.room.lower() != "none":
        import json

        room = json.loads(args.room) if args.room.strip().startswith("{") else args.room
        fr = gym.make("fdenv/TurnTaking-v0", room=room)
        step_cost(fr, 500)
        r = step_cost(fr, args.steps)
        print(f"  with room {args.room}")
        print(f"    silent agent                  {r * 1e6:8.1f} us   ratio {r / c:5.2f}x  (target <= 15x)")
        rs = step_cost(fr, args.steps, speaking=True)
        print(f"    speaking agent (echo each step){rs * 1e6:7.1f} us   ratio {rs / c:5.2f}x")
    wr = warm_reset("fdenv/TurnTaking-v0")
    print(f"reset, warm clip cache            {wr * 1e3:8.2f} ms  (target < 20 ms)")
    cold = cold_60s_render()
    print(f"render a cold 60 s scene (espeak) {cold:8.3f} s   (target < 1 s)")


if __name__ == "__main__":
    main()
