"""The cascade's recogniser in noise: what faster-whisper's VAD filter keeps, at two thresholds.

    python benchmarks/bench_asr_filter.py [--rooms anechoic office_noise_echo car_cabin] [--limit 30]
                                          [--thresholds 0.5 0.15] [--tts kokoro]

The cascade transcribes each turn its own voice-activity detector endpointed, with faster-whisper's
VAD filter on (so silence does not hallucinate). That filter is another Silero model, run on the
whole turn; at its default threshold (0.5) it can drop every word of a turn that the cascade heard,
and the turn goes unanswered ("no words"). This plays the first ``--limit`` pause and turn-taking
test scenes in each room (the frontier's conditions, ``fdenv.train.frontier.CONDITIONS``; the
humans in ``--tts``'s voices, the agent answering in espeak's) with the cascade (endpoint 1000 ms)
once per filter threshold, and prints per room and threshold: the turns heard, those with no words,
the scenes never answered; then how many scenes' transcripts differ between the thresholds.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SETS = ("pause", "turn_taking")


def play(room, limit: int, tts: str, filter_threshold: float) -> dict:
    """{scene id: (the heard turns' texts, responses)} of the cascade over the sets' test scenes."""
    from fdenv.sim.env import RoomEnv
    from fdenv.train.envs import load_scenes
    from fdenv_agents.cascade import CascadeAgent
    from fdenv_agents.cascade.asr import WhisperTranscriber

    out = {}
    transcriber = WhisperTranscriber(filter_threshold=filter_threshold)
    for s in SETS:
        env = RoomEnv(scene_set=s, split="test", tts=tts, room=room)
        agent = CascadeAgent(endpoint_silence_ms=1000, tts="espeak", transcriber=transcriber)
        for sc in load_scenes([s], "test")[:limit]:
            obs, info = env.reset(seed=0, options={"scene": sc.id})
            agent.reset(info["duty"], info["sample_rate"], info["frame_samples"])
            done = False
            while not done:
                obs, _, term, trunc, info = env.step(agent.act(obs))
                done = term or trunc
            st = agent.stats()
            out[sc.id] = ([h["text"] for h in st["heard"]], st["responses"])
        env.close()
    return out


def main(argv=None) -> None:
    from fdenv.train.frontier import CONDITIONS
    from fdenv_agents.cascade.asr import FILTER_THRESHOLD

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rooms", nargs="+", default=list(CONDITIONS), choices=list(CONDITIONS))
    ap.add_argument("--limit", type=int, default=30, help="scenes per set")
    ap.add_argument("--thresholds", nargs=2, type=float, default=[0.5, FILTER_THRESHOLD])
    ap.add_argument("--tts", default="kokoro", choices=["espeak", "kokoro"])
    args = ap.parse_args(argv)
    for name in args.rooms:
        played = {}
        for thr in args.thresholds:
            played[thr] = play(CONDITIONS[name], args.limit, args.tts, thr)
            heard = [t for texts, _ in played[thr].values() for t in texts]
            print(f"{name}, filter threshold {thr}: {len(heard)} turns heard, "
                  f"{sum(not t for t in heard)} with no words, "
                  f"{sum(n == 0 for _, n in played[thr].values())} of {len(played[thr])} scenes never answered")
        a, b = (played[t] for t in args.thresholds)
        print(f"{name}: transcripts differ in {sum(a[k][0] != b[k][0] for k in a)} of {len(a)} scenes")


if __name__ == "__main__":
    main()
