"""The oracle: a privileged agent that does what each label asks, with human-like timing.

It answers ``T`` and ``final`` 0.5 s after their end (the gold answer, or a fitting sentence),
backchannels at TRPs only where ``expect`` is ``may_backchannel``, stops within 0.3 s of an
``interrupt`` and answers it 0.5 s after it ends, goes on with its answer through a user's
backchannel, a side conversation or background speech (``hold``, the overlap set), answers ``N4Q`` in the gap with an answer long
enough to be speaking when ``N4R`` starts and stops 0.3-0.4 s after that start (MPE's yield
needs speech under way at the start of ``N4R``, and silence from 2 s after it), and is silent
otherwise. The upper bound every metric should reach; its scores are marked privileged.

MPE answers (``T``) are delivered for a small recogniser: a short lead-in, the gold answer, then
the words of its first sentence once more one at a time ("Okay, here is the answer. Each person
pays 35 euros. That is 35 euros each. Each, person, pays, 35, euros."). espeak voices through
Whisper tiny.en lose many words of a plain sentence; this delivery keeps the answer-accuracy
check about the pipeline, not the recogniser.
"""

from __future__ import annotations

import re

from .base import Agent, TrackPlayer

ANSWER_DELAY_S = 0.5
BACKCHANNEL_DELAY_S = 0.2  # FDB's target: backchannels centred 0.2 s after a TRP
BACKCHANNELS = ("yeah", "right", "okay", "sure")  # one word each: SPEC 5.2 needs fewer than 2
FITTING = "That is a good question, and here is my answer to it."
LONG_FILLER = "Let me walk you through it step by step, starting with the basics and then the details that matter most."
# No pause in its first seconds: still speaking, in one segment, when N4R starts 3 s after N4Q.
N4_ANSWER = "I think the best way to answer that question is to look at all of the details very carefully before deciding anything."
N4R_STOP_S = 0.3  # stop this long after the frame in which N4R starts (0.3-0.38 s after its start)


class OracleAgent(Agent):
    name = "oracle"
    privileged = True

    def __init__(self, tts: str = "espeak"):
        self.tts = tts
        self._renderer = None

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        if scene is None:
            raise ValueError("the oracle is privileged: the runner must pass the scene at reset")
        from fdenv.render import Renderer, voice_map

        if self._renderer is None or self._renderer.sample_rate != sample_rate:
            self._renderer = Renderer(backend=self.tts, sample_rate=sample_rate)
        self.scene = scene
        self._voice = voice_map(scene, self._renderer)["__assistant__"]
        self.player = TrackPlayer(frame_samples)
        self._prev = None  # the turn label dict of the previous frame
        self._bc = 0
        self._interrupted = set()

    def _say(self, text: str, at: int) -> None:
        self.player.put(self._renderer.clip(text, self._voice), at)

    def act(self, observation, labels=None):
        if labels is None:
            raise ValueError("the oracle is privileged: the runner must pass labels to act()")
        k, N, sr = labels["frame"], self.frame_samples, self.sample_rate
        now = k * N  # start of the observed frame
        nxt = (k + 1) * N  # where this action starts playing
        cur, prev = labels["turn"], self._prev
        if cur["id"] is None:
            cur = None
        if prev is not None and (cur is None or cur["id"] != prev["id"]):
            self._turn_ended(prev, now)
        if cur is not None and (prev is None or cur["id"] != prev["id"]):
            if cur["label"] == "interrupt":
                self.player.stop(nxt)  # barge-in: release the floor
            elif cur["label"] == "N4R":  # a human resolves the question: release the floor, just after its start
                self.player.stop(max(nxt, now + int(N4R_STOP_S * sr)))
        if labels["trp"] and labels["expect"] == "may_backchannel" and not self.player.busy(nxt):
            self._say(BACKCHANNELS[self._bc % len(BACKCHANNELS)], max(nxt, now + int(BACKCHANNEL_DELAY_S * sr)))
            self._bc += 1
        self._prev = cur
        return self.player.frame(k + 1)

    def _turn_ended(self, turn: dict, at: int) -> None:
        label = turn["label"]
        start = at + int(ANSWER_DELAY_S * self.sample_rate)
        scene_turn = self.scene.turn(turn["id"])
        if label == "T":
            self._say(clear_speech(scene_turn.gold_answer or FITTING), start)
        elif label == "final":
            text = scene_turn.gold_answer or FITTING
            labels_after = [t.label for t in self.scene.turns]
            idx = labels_after.index("final") if "final" in labels_after else -1
            if idx >= 0 and idx + 1 < len(labels_after) and labels_after[idx + 1] == "interrupt":
                text = f"{text} {LONG_FILLER}"  # long enough to be interrupted
            self._say(text, start)
        elif label == "interrupt":
            answer = scene_turn.gold_answer or f"Understood, {scene_turn.spoken_text}"
            # overlap set: the new request's answer, delivered for a small recogniser (as for T)
            self._say(clear_speech(answer) if self.scene.kind == "overlap" else answer, start)
        elif label == "N4Q":
            self._say(N4_ANSWER, start)

    def config(self):
        return {"tts": self.tts}


ANSWER_LEAD = "Okay, here is the answer."


def clear_speech(text: str) -> str:
    """An answer delivered for a small recogniser: the lead-in, ``text``, then the words of its
    first sentence one at a time with a short pause after each ("Okay, here is the answer. It
    comes to 31 euros. The total is 31 euros. It, comes, to, 31, euros.")."""
    first = re.split(r"(?<=[.?!])\s", text.strip(), maxsplit=1)[0]
    words = re.sub(r"[,.?!;]", " ", first).split()
    if not words:
        return text
    return f"{ANSWER_LEAD} {text.strip()} {', '.join(words)}."
