"""A small agent of your own, run from the command line:

    fdenv-run agent=python agent.target=docs/examples/my_agent.py:EnergyAgent scene=turn_taking scene.limit=2
    fdenv-run agent=python agent.target=docs/examples/my_agent.py:EnergyAgent +agent.silence_ms=1200

It listens to microphone 0's level and, once someone has spoken and then been quiet for
``silence_ms``, says one sentence (espeak voice). It knows nothing of the labels: a fair model.
"""

import numpy as np

from fdenv_agents import Agent, TrackPlayer


class EnergyAgent(Agent):
    name = "energy"

    def __init__(self, silence_ms: int = 800, reply: str = "Sure, I can help with that.", level_db: float = -40.0):
        self.silence_ms, self.reply, self.level_db = silence_ms, reply, level_db

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        from fdenv.render import Renderer

        super().reset(duty, sample_rate, frame_samples, scene)
        renderer = Renderer(backend="espeak", sample_rate=sample_rate)
        self.clip = renderer.clip(self.reply, renderer.voices[-1])
        self.player, self.k, self.heard, self.quiet_ms, self.busy_until = TrackPlayer(frame_samples), 0, False, 0.0, 0

    def act(self, observation, labels=None):
        self.k += 1
        rms = float(np.sqrt(np.mean(observation[0].astype(np.float64) ** 2)))
        loud = rms > 10 ** (self.level_db / 20)
        frame_ms = 1000 * self.frame_samples / self.sample_rate
        self.heard |= loud
        self.quiet_ms = 0.0 if loud else self.quiet_ms + frame_ms
        start = self.k * self.frame_samples  # the frame this action plays in
        if self.heard and self.quiet_ms >= self.silence_ms and start >= self.busy_until:
            self.busy_until = self.player.put(self.clip, start)
            self.heard = False
        return self.player.frame(self.k)

    def config(self):  # what changes results: it keys the run folder
        return {"silence_ms": self.silence_ms, "reply": self.reply, "level_db": self.level_db}
