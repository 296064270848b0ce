"""``fdenv-bench``: step and reset costs of fdenv, measured against CartPole-v1 in the same process.

    fdenv-bench [--steps 20000] [--room office]     # `make bench` runs this through benchmarks/bench_env.py
    fdenv-bench --quick                             # a smoke run in seconds: the lines, not the numbers

Prints ratios (the machine is noisy; ratios measured in one run are what we compare):
- step alone (resets not timed; CPU time of the process), fdenv/TurnTaking-v0 with a silent agent vs CartPole-v1;
- the same with a room dict (office, circular4 array, echo 0.5) when --room is given or by default,
  for a silent and for a speaking agent;
  the step measurements take turns in short blocks (``BLOCK`` steps each, round robin), so a
  change of the machine's load during the run falls on all of them alike;
- a reset from a warm clip cache;
- rendering a cold 60 s scene with espeak (an empty clip cache).

Without ``$FDENV_CACHE_DIR`` the clips go to a temporary cache, removed at the end, so a run never
reads clips rendered by an earlier one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time

import numpy as np

STEPS = 20000
QUICK = {"steps": 200, "warmup": 50, "resets": 2, "render_s": 5.0}
FULL = {"steps": STEPS, "warmup": 500, "resets": 20, "render_s": 60.0}


BLOCK = 250  # steps per turn when measurements are interleaved


class _Stepper:
    """Steps one env with a fixed action, resetting (untimed) when an episode ends. ``speaking``:
    the action is low-level noise instead of silence, so the echo is computed every frame."""

    def __init__(self, env, seed: int = 0, speaking: bool = False):
        self.env, self.ep = env, seed
        if not env.action_space.shape:
            self.action = 0
        elif speaking:
            self.action = (0.01 * np.random.default_rng(0).standard_normal(env.action_space.shape)).astype(np.float32)
        else:
            self.action = np.zeros(env.action_space.shape, env.action_space.dtype)
        env.reset(seed=seed)

    def run(self, steps: int) -> float:
        """CPU seconds of the process spent in ``steps`` steps (resets subtracted). CPU time, not
        wall time: on a shared machine wall time also counts other processes' turns."""
        env, action, resets = self.env, self.action, 0.0
        start = time.process_time()
        for _ in range(steps):
            out = env.step(action)
            if out[2] or out[3]:
                t = time.process_time()
                self.ep += 1
                env.reset(seed=self.ep)
                resets += time.process_time() - t
        return time.process_time() - start - resets


def step_cost(env, steps: int, seed: int = 0, speaking: bool = False) -> float:
    """Mean seconds per step over ``steps`` steps, resets excluded (see ``_Stepper``)."""
    return _Stepper(env, seed, speaking).run(steps) / steps


def interleaved_costs(steppers: dict, steps: int, block: int = BLOCK) -> dict:
    """Mean seconds per step of each ``_Stepper``, ``steps`` steps each, run in round-robin
    blocks of ``block`` steps."""
    total = dict.fromkeys(steppers, 0.0)
    done = 0
    while done < steps:
        n = min(block, steps - done)
        for name, st in steppers.items():
            total[name] += st.run(n)
        done += n
    return {name: t / steps for name, t in total.items()}


def cold_60s_render(speech_s: float = 60.0) -> float:
    """Seconds to render about 60 s of scene speech with espeak into an empty cache (measured over
    at least ``speech_s`` seconds of speech, scaled to 60 s)."""
    from ..render import Renderer, voice_map
    from ..scene import load_set

    scenes = load_set("backchannel", "all")
    with tempfile.TemporaryDirectory() as tmp:
        r = Renderer("espeak", 16000, cache_dir=tmp)
        t = time.perf_counter()
        seconds = 0.0
        for sc in scenes:
            voices = voice_map(sc, r)
            for turn in sc.turns:  # one utterance per turn, as the env renders it
                pieces = r.turn([p.text for p in turn.pieces], voices[turn.speaker])
                seconds += sum(len(p.audio) for p in pieces) / 16000
            if seconds >= speech_s:
                break
        return (time.perf_counter() - t) * 60.0 / seconds


def warm_reset(env_id: str, n: int = 20) -> float:
    import gymnasium as gym

    env = gym.make(env_id)
    for s in range(n):
        env.reset(seed=s)  # fills the clip cache
    t = time.perf_counter()
    for s in range(n):
        env.reset(seed=s)
    return (time.perf_counter() - t) / n


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fdenv-bench", description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=None,
                    help=f"timed steps per measurement (default {FULL['steps']}; {QUICK['steps']} with --quick)")
    ap.add_argument("--room", default='{"preset": "office", "mics": "circular4", "echo_gain": 0.5}',
                    help="room for the second measurement (JSON dict or preset name); 'none' to skip")
    ap.add_argument("--quick", action="store_true",
                    help="few steps, resets and clips: checks that every measurement runs; the ratios are rough")
    return ap


@contextlib.contextmanager
def _clip_cache():
    """``$FDENV_CACHE_DIR`` as given, else a temporary one for this run."""
    if os.environ.get("FDENV_CACHE_DIR"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="fdenv-bench-") as tmp:
        os.environ["FDENV_CACHE_DIR"] = tmp
        try:
            yield
        finally:
            os.environ.pop("FDENV_CACHE_DIR", None)


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    plan = dict(QUICK if args.quick else FULL)
    if args.steps is not None:
        if args.steps < 1:
            ap.error(f"--steps must be at least 1, got {args.steps}")
        plan["steps"] = args.steps
    room = None
    if args.room.lower() != "none":
        try:
            room = json.loads(args.room) if args.room.strip().startswith("{") else args.room
        except json.JSONDecodeError as e:
            ap.error(f"--room: not a JSON dict ({e})")
    with _clip_cache():
        _measure(plan, args.room, room, quick=args.quick)
    return 0


def _measure(plan: dict, room_text: str, room, quick: bool) -> None:
    import gymnasium as gym

    import fdenv  # noqa: F401  (registers the fdenv/ env ids)

    steps, warmup = plan["steps"], plan["warmup"]
    if quick:
        print(f"(quick: {steps} steps per measurement; the ratios are rough)")
    steppers = {"cart": _Stepper(gym.make("CartPole-v1")), "fd": _Stepper(gym.make("fdenv/TurnTaking-v0"))}
    if room is not None:
        steppers["silent"] = _Stepper(gym.make("fdenv/TurnTaking-v0", room=room))
        steppers["speaking"] = _Stepper(gym.make("fdenv/TurnTaking-v0", room=room), speaking=True)
    for st in steppers.values():  # warm up (clip cache, room, allocations)
        st.run(warmup)
    cost = interleaved_costs(steppers, steps)
    c, f = cost["cart"], cost["fd"]
    print(f"CartPole-v1 step                 {c * 1e6:8.1f} us")
    print(f"fdenv/TurnTaking-v0 step          {f * 1e6:8.1f} us   ratio {f / c:5.2f}x  (target <= 2x)")
    if room is not None:
        r, rs = cost["silent"], cost["speaking"]
        print(f"  with room {room_text}")
        print(f"    silent agent                  {r * 1e6:8.1f} us   ratio {r / c:5.2f}x  (target <= 4x)")
        print(f"    speaking agent (echo each step){rs * 1e6:7.1f} us   ratio {rs / c:5.2f}x  (target <= 8x)")
    wr = warm_reset("fdenv/TurnTaking-v0", plan["resets"])
    print(f"reset, warm clip cache            {wr * 1e3:8.2f} ms  (target < 20 ms)")
    cold = cold_60s_render(plan["render_s"])
    print(f"render a cold 60 s scene (espeak) {cold:8.3f} s   (target < 1 s)")


if __name__ == "__main__":
    sys.exit(main())
