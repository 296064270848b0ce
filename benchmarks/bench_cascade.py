"""Real-time factor of the cascade agent: its compute seconds over the audio seconds it handled.

    python benchmarks/bench_cascade.py [--per-set 2] [--room office] [--model tiny.en]

Runs the cascade (default knobs: Silero endpointing, faster-whisper tiny.en once per turn, the
offline responder, espeak TTS, echo canceller + double-talk gate) over the first scenes of every
shipped set's test split, without a room and in a room with echo (``echo_gain`` 0.5), and prints
per set: audio seconds, the agent's compute seconds (everything inside ``act()``: resampling,
echo handling, VAD, Whisper, responder, TTS), the share spent in Whisper, and the real-time
factor. The env's own cost is not counted (``bench_env.py`` measures it). RTF below 1 means the
agent keeps up with live audio on this machine.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "backchannel", "turn_taking", "interruption", "mpe")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-set", type=int, default=2, help="scenes per shipped set (test split)")
    ap.add_argument("--room", default="office", help="room preset for the echo runs ('none' to skip)")
    ap.add_argument("--model", default="tiny.en", help="faster-whisper model (name or local directory)")
    args = ap.parse_args(argv)

    from fdenv.run import run_episode
    from fdenv.scene import load_set
    from fdenv.sim.env import RoomEnv
    from fdenv_agents import CascadeAgent

    agent = CascadeAgent(model=args.model)
    # warm-up: load Whisper (and run its decoder once) outside the measurement
    from fdenv.render import Renderer

    r = Renderer("espeak", 16000)
    agent.transcriber.transcribe(r.clip("Hello there, how are you today?", r.voices[0]))

    rooms = [("anechoic", None)]
    if args.room != "none":
        rooms.append((f"{args.room}, echo 0.5", {"preset": args.room, "mics": "circular4", "echo_gain": 0.5}))
    print(f"cascade real-time factor on {os.cpu_count()} cores, model {args.model}, {args.per_set} test scenes per set")
    print(f"{'room':<20} {'set':<13} {'audio s':>8} {'agent s':>8} {'asr s':>7} {'turns':>6} {'RTF':>7} {'wall s':>7}")
    grand_audio = grand_agent = grand_asr = 0.0
    for room_name, room in rooms:
        for name in SETS:
            scenes = load_set(name, "test")[: args.per_set]
            env = RoomEnv(scene=scenes, room=room)
            audio = compute = asr = 0.0
            turns = 0
            t0 = time.perf_counter()
            for i, sc in enumerate(scenes):
                run_episode(env, agent, seed=i, scene=sc.id)
                st = agent.stats()
                audio += st["frames"] * 0.08
                compute += st["compute_s"]
                asr += st["asr_s"]
                turns += st["turns"]
            wall = time.perf_counter() - t0
            print(f"{room_name:<20} {name:<13} {audio:8.1f} {compute:8.2f} {asr:7.2f} {turns:6d} {compute / audio:7.3f} {wall:7.1f}")
            grand_audio += audio
            grand_agent += compute
            grand_asr += asr
    print(f"{'all':<34} {grand_audio:8.1f} {grand_agent:8.2f} {grand_asr:7.2f} {'':>6} {grand_agent / grand_audio:7.3f}")
    print(f"RTF {grand_agent / grand_audio:.3f} (Whisper {grand_asr / grand_audio:.3f}, "
          f"per-frame work {(grand_agent - grand_asr) / grand_audio:.3f})")


if __name__ == "__main__":
    main()
