"""Scoring cost against simulation cost, and VAD / ASR cost per minute of assistant speech.

    python benchmarks/bench_score.py

Prints, measured in one run:
- a silent agent's episodes of each FDB test set: simulating them vs scoring them (both profiles);
- Silero segmentation (paper profile) and Whisper tiny.en words, seconds per minute of speech.
"""

from __future__ import annotations

import os
import tempfile
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("FDENV_CACHE_DIR", tempfile.mkdtemp(prefix="fdenv-bench-"))


PASSES = 5


def main() -> None:
    from fdenv.run import run_episode
    from fdenv.score import vad
    from fdenv.score.asr import transcribe
    from fdenv.score.fdb import FDBScorer
    from fdenv.sim.env import RoomEnv
    from fdenv_agents import SilentAgent, TalkerAgent

    scorer = FDBScorer()
    for dim in ("pause", "backchannel", "turn_taking", "interruption"):
        env = RoomEnv(scene_set=dim, split="test")
        scorer.score(run_episode(env, SilentAgent(), seed=0, scene=0).record)  # first call: imports
        for i in range(len(env.scenes)):
            env.reset(seed=0, options={"scene": i})  # warm the clip cache: rendering is not simulation
        sim = score = 0.0
        for _ in range(PASSES):  # the times are milliseconds: several passes, interleaved
            for i in range(len(env.scenes)):
                t = time.perf_counter()
                record = run_episode(env, SilentAgent(), seed=0, scene=i).record
                sim += time.perf_counter() - t
                t = time.perf_counter()
                scorer.score(record)
                score += time.perf_counter() - t
        n = PASSES * len(env.scenes)
        print(f"silent agent, {dim:12s} ({n} episodes): simulate {1000 * sim / n:6.2f} ms, score {1000 * score / n:5.3f} ms "
              f"-> scoring is {100 * score / sim:.2f}% of simulating (target < 5%)")

    talker = TalkerAgent()
    talker.reset("", 16000, 1280)
    speech = np.concatenate([talker.act(None) for _ in range(750)])  # 60 s of continuous speech
    vad.segments(speech[:16000], "paper")  # load the model
    t = time.perf_counter()
    vad.segments(speech, "paper")
    v = time.perf_counter() - t
    transcribe(speech[:16000 * 5], model="tiny.en")  # load the model
    t = time.perf_counter()
    transcribe(speech + np.float32(1e-7), model="tiny.en")  # a new hash: no cache hit
    a = time.perf_counter() - t
    print(f"per minute of assistant speech: Silero VAD {v:.2f} s, Whisper tiny.en words {a:.2f} s")


if __name__ == "__main__":
    main()
