"""Training throughput of fdenv-train in environment frames per second (1 frame = 80 ms of audio),
with full domain randomisation (a room, noise, echo and the voices' TTS back end drawn per
episode, as ``fdenv-train`` trains), for each worker setting: ``0`` = all envs in one process
(one core; ``--envs`` of them), ``N`` = N env processes (``gymnasium.vector.AsyncVectorEnv``).

    python benchmarks/bench_train.py [--workers 0 2] [--envs 8] [--frames 8192] [--cold] [--tts espeak]
                                     [--json out.json]

Three numbers per setting:
- ``env``: the vector env alone (room, rewards, TurnActions, log-mel features), random actions;
- ``rollout``: plus the streaming GRU policy deciding every frame (one GRU step per decision);
- ``train``: PPO as ``fdenv-train`` runs it (rollouts and updates, up to 8 epochs with the KL
  stop), measured between its first and last update, episode resets (room building) included.
All scenes of the five train sets; the start-up and the first resets are not timed. The clips
come from the clip cache that ``fdenv-train`` uses (the user's): the script first renders every
train scene into it with each back end (``fdenv-scenes render <set> --split train --tts ...``:
seconds once it is warm; Kokoro's 8,300 clips about 2.3 hours on this machine when cold), as a
training run finds them after its first episodes; ``--cold`` measures with an empty cache instead,
every episode's speech synthesised anew. ``--tts espeak``: the voices drawn from espeak's back end
alone (fdenv-train draws espeak and Kokoro): on a machine whose Kokoro clips are not cached yet,
the rates of the same work without the hours of synthesis first; a cached clip costs the same
whichever back end made it, so only the clips' lengths (hence the episodes') differ. The rooms'
impulse responses are cached per geometry (``randomize.geometries`` placements per preset) within
the process, as in training, where the first few hundred episodes fill that cache: the script
fills it first (every preset, placement and talker count; with workers, each worker process
fills its own while timed), so that the numbers are a training run's after its start. The last
line prints the one-process training rate against the 1,500 frames/s target as a ratio. On a
machine with fewer free cores than processes, they share the cores: say so with the result.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np


TARGET = 1500.0


def with_voices(tts: list[str] | None) -> dict:
    """fdenv-train's settings, the voices' back ends drawn from ``tts`` (None: its own)."""
    import copy

    from fdenv.train.ppo import DEFAULTS

    cfg = copy.deepcopy(DEFAULTS)
    if tts:
        cfg["env"]["randomize"]["tts"] = list(tts)
    return cfg


def env_rate(workers: int, envs_n: int, frames: int, with_policy: bool, tts: list[str] | None = None) -> float:
    import torch

    from fdenv.train.envs import make_vec
    from fdenv.train.features import one_thread
    from fdenv.train.policy import TurnPolicy
    from fdenv.train.ppo import env_kwargs

    E = workers or envs_n
    envs = make_vec(E, processes=workers > 0, **env_kwargs(with_voices(tts), teacher=None))
    try:
        obs, _ = envs.reset(seed=0)
        pol = TurnPolicy(envs.single_observation_space.shape[-1], recurrent=True) if with_policy else None
        state = pol.initial_state(E) if with_policy else None
        rng = np.random.default_rng(0)
        gen = torch.Generator().manual_seed(0)
        for _ in range(50):  # warm up: clip caches, first resets
            obs, *_ = envs.step(rng.integers(0, 3, E))
        n, t = 0, time.perf_counter()
        while n < frames:
            if pol is not None:
                with one_thread():
                    a, state = pol.act_stream(obs, state, deterministic=False, generator=gen)
            else:
                a = rng.integers(0, 3, E)
            obs, _, term, trunc, _ = envs.step(a)
            if pol is not None:
                state = state * torch.as_tensor(~(term | trunc), dtype=torch.float32)[None, :, None]
            n += E
        return n / (time.perf_counter() - t)
    finally:
        envs.close()


def warm_rooms(tts: list[str] | None = None) -> int:
    """Simulate every room a one-process training run draws (preset x placement x talker
    count) into this process's impulse-response cache, as its first episodes do."""
    from fdenv.train.envs import RANDOMIZE, TurnTakingEnv, load_scenes
    from fdenv.train.ppo import env_kwargs

    kw = env_kwargs(with_voices(tts), teacher=None)
    by_count = {}
    for sc in load_scenes(kw.pop("scene_sets"), kw.pop("split")):
        by_count.setdefault(len(sc.speakers), sc)
    env = TurnTakingEnv(scenes=list(by_count.values()), **kw)
    n = 0
    for preset in RANDOMIZE["rooms"]:
        for k in range(RANDOMIZE["geometries"]):
            for sc in by_count.values():
                env.reset(seed=0, options={"scene": sc.id, "room": {"preset": preset}, "room_seed": k})
                n += 1
    env.close()
    return n


def train_rate(workers: int, envs_n: int, frames: int, tts: list[str] | None = None) -> tuple[float, float]:
    """Frames per wall-clock second, and per second of the main process's CPU time (with
    workers 0 that is all the work: the rate on a core of its own, whatever else runs)."""
    from fdenv.train.ppo import train

    out = tempfile.mkdtemp(prefix="fdenv-bench-train-")
    cfg = {"workers": workers, "envs": envs_n, "bc": {"frames": 0}, "ppo": {"frames": frames, "critic_warmup": 0},
           "eval": {"per_set": 1, "every_s": 1e9}, "time_limit_min": 30, "env": with_voices(tts)["env"]}
    train(cfg, out=out, log=lambda s: None)
    rows = [json.loads(x) for x in open(os.path.join(out, "metrics.jsonl"))]
    rows = [r for r in rows if r.get("kind") == "update"]
    if len(rows) < 2:
        return float("nan"), float("nan")
    frames = rows[-1]["frames"] - rows[0]["frames"]
    wall = frames / max(1e-9, rows[-1]["time_s"] - rows[0]["time_s"])
    cpu = frames / max(1e-9, rows[-1]["cpu_s"] - rows[0]["cpu_s"])  # this process's CPU time only
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[0, 2], help="0: envs in this process")
    ap.add_argument("--envs", type=int, default=8, help="envs in the one process (workers 0)")
    ap.add_argument("--frames", type=int, default=8192, help="frames per measurement")
    ap.add_argument("--cold", action="store_true", help="an empty clip cache: synthesise every clip while timing")
    ap.add_argument("--tts", nargs="+", default=None, choices=["espeak", "kokoro"],
                    help="the voices' back ends the envs draw from (default: fdenv-train's, espeak and kokoro)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    voices = with_voices(args.tts)["env"]["randomize"]["tts"]
    if args.cold:
        os.environ["FDENV_CACHE_DIR"] = tempfile.mkdtemp(prefix="fdenv-bench-")
    else:
        from fdenv.cli.scenes import main as scenes_main
        from fdenv.train.envs import SETS
        for tts in voices:  # each voices' back end the envs draw
            for name in SETS:  # what fdenv-train's envs will play, into the clip cache it reads
                if scenes_main(["render", name, "--split", "train", "--tts", tts]) != 0:
                    raise SystemExit(f"could not render the {name} train scenes with {tts}; see the message above")
    print(f"cores: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}  (torch: 1 thread per process; "
          f"clip cache {'empty' if args.cold else 'warm'})")
    print(f"voices: {', '.join(voices)}")
    print(f"rooms simulated ahead: {warm_rooms(args.tts)} (preset x placement x talker count)")
    print(f"{'workers':>8} {'envs':>5} {'env fps':>10} {'rollout fps':>12} {'train fps':>10} {'train fps/cpu':>14}")
    results = []
    for w in args.workers:
        n = w or args.envs
        e = env_rate(w, args.envs, args.frames, with_policy=False, tts=args.tts)
        r = env_rate(w, args.envs, args.frames, with_policy=True, tts=args.tts)
        tr, cpu = train_rate(w, args.envs, args.frames, tts=args.tts)
        results.append({"workers": w, "envs": n, "env_fps": round(e), "rollout_fps": round(r), "train_fps": round(tr),
                        "train_fps_per_cpu_s": round(cpu) if w == 0 else None})
        print(f"{w:>8} {n:>5} {e:>10.0f} {r:>12.0f} {tr:>10.0f} {cpu if w == 0 else float('nan'):>14.0f}")
    one = [x for x in results if x["workers"] == 0]
    if one:
        x = one[0]
        print(f"one process, training: {x['train_fps']} frames/s wall = {x['train_fps'] / TARGET:.2f} x the "
              f"{TARGET:.0f} frames/s target; {x['train_fps_per_cpu_s']} frames per CPU-second = "
              f"{x['train_fps_per_cpu_s'] / TARGET:.2f} x (the rate on a free core; load average now "
              f"{os.getloadavg()[0]:.1f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": os.cpu_count(), "frames": args.frames, "cold": args.cold,
                       "voices": voices, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
