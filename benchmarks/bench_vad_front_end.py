"""What the cascade's voice-activity detector hears, with and without noise suppression in front.

    python benchmarks/bench_vad_front_end.py [--rooms anechoic office_noise_echo car_cabin] [--limit 10]
                                             [--tts kokoro]

Plays the first ``--limit`` pause and turn-taking test scenes in each room (the frontier's
conditions, ``fdenv.train.frontier.CONDITIONS``) to the cascade with a 10 s endpoint, so that it
listens and never answers, once per ``noise_suppression`` setting, and compares its detector's
decision in each 32 ms window with the env's labels (``labels["speaking"]``: a talker's clip is
playing, its pauses included). Prints per room and setting: the share of the clips' windows heard
as speech, the share of the other windows heard as speech (false alarms), and how many silences
of 1.5 s or more the detector heard while a clip played: at a 1.5 s endpoint the cascade takes
each as the end of a turn. A clip's time includes its pauses (0.6-1.48 s) and the quiet at its
edges, so a long silence between turns that reaches into a clip counts too: the quiet room's
numbers are the baseline to read the noisy rooms' against.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")
SETTINGS = ("off", "wiener")
LONG_SILENCE_S = 1.5


def traced_agent(noise_suppression: str, **knobs):
    """The cascade, recording its detector's speech state in each window (``trace``)."""
    from fdenv_agents.cascade import CascadeAgent

    class Traced(CascadeAgent):
        def _window(self, w, rw, mw, v):
            super()._window(w, rw, mw, v)
            self.trace.append(self._speech_state)

    agent = Traced(endpoint_silence_ms=10000, tts="espeak", noise_suppression=noise_suppression, **knobs)
    agent.trace = []
    return agent


def measure(trace: list[bool], speaking: list[bool], frame_s: float, window_s: float) -> tuple[int, int, int, int, int]:
    """(clip windows heard, clip windows, other windows heard, other windows, long silences heard
    while a clip played)."""
    heard = np.array(trace, bool)
    centre = (np.arange(len(heard)) + 0.5) * window_s
    # frame k (0 from reset) is the audio of [k frame_s, (k + 1) frame_s), with its labels
    truth = np.array(speaking, bool)[np.minimum((centre / frame_s).astype(int), len(speaking) - 1)]
    long, run, over_speech = 0, 0, False
    for h, t in zip(np.append(heard, True), np.append(truth, False)):
        if not h:
            run, over_speech = run + 1, over_speech or t
            continue
        long += run * window_s >= LONG_SILENCE_S and over_speech
        run, over_speech = 0, False
    return (int((heard & truth).sum()), int(truth.sum()), int((heard & ~truth).sum()), int((~truth).sum()), long)


def play_scene(env, agent, scene_id: str) -> tuple[int, int, int, int, int]:
    """``measure`` of one scene played to a ``traced_agent``."""
    from fdenv_agents.cascade.agent import WINDOW_MS

    obs, info = env.reset(seed=0, options={"scene": scene_id})
    agent.reset(info["duty"], info["sample_rate"], info["frame_samples"])
    frame_s = info["frame_samples"] / info["sample_rate"]
    agent.trace = []
    speaking, done = [bool(info["labels"]["speaking"])], False
    while not done:
        obs, _, term, trunc, info = env.step(agent.act(obs))
        speaking.append(bool(info["labels"]["speaking"]))
        done = term or trunc
    return measure(agent.trace, speaking, frame_s, WINDOW_MS / 1000)


def play(room, limit: int, tts: str, noise_suppression: str) -> np.ndarray:
    from fdenv.sim.env import RoomEnv
    from fdenv.train.envs import load_scenes

    total = np.zeros(5, int)
    agent = traced_agent(noise_suppression)
    for s in SETS:
        env = RoomEnv(scene_set=s, split="test", tts=tts, room=room)
        for sc in load_scenes([s], "test")[:limit]:
            total += play_scene(env, agent, sc.id)
        env.close()
    return total


def main(argv=None) -> None:
    from fdenv.train.frontier import CONDITIONS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rooms", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    ap.add_argument("--limit", type=int, default=10, help="scenes per set")
    ap.add_argument("--tts", default="kokoro", choices=["espeak", "kokoro"])
    args = ap.parse_args(argv)
    for name in args.rooms:
        for setting in SETTINGS:
            hit, speech, fa, other, long = play(CONDITIONS[name], args.limit, args.tts, setting)
            print(f"{name}, noise_suppression={setting}: clip windows heard {hit / max(speech, 1):.3f}, "
                  f"false alarms {fa / max(other, 1):.3f}, silences >= {LONG_SILENCE_S} s in a clip: {long} "
                  f"({2 * args.limit} scenes)", flush=True)


if __name__ == "__main__":
    main()
