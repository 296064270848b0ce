"""The ``policy`` agent: a turn-taking policy trained with ``fdenv-train``, for ``fdenv-run``.

It hears the microphones like any agent, computes the same log-mel history as the training env
(``fdenv.train.features``), asks the checkpoint's GRU policy for silent / backchannel / speak, and
turns that into audio with the same ``TurnVoice`` as ``TurnActions``: an utterance plays until it
ends or the policy chooses silent.

``content``: ``"fitting"`` (default; not privileged: every utterance is the same fitting sentence,
since the policy only decides when to speak) or ``"gold"`` (the scene's gold answers, as in
training; privileged: the runner then passes the scene and labels and marks the scores).
``threshold``: speak when the policy's P(speak) reaches it (else the likeliest action); null:
the checkpoint's own (``fdenv.train.ppo.calibrate_threshold`` picks it on the validation split),
or the likeliest action when it has none. ``checkpoint``: a path (relative to where you start); default the shipped
``fdenv/train/checkpoints/turn_policy.pt``. Its hash is part of ``config()``, so a retrained
checkpoint gets its own run folder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .base import Agent

CONTENTS = ("fitting", "gold")


def default_checkpoint() -> Path:
    import fdenv.train

    return Path(fdenv.train.__file__).parent / "checkpoints" / "turn_policy.pt"


class PolicyAgent(Agent):
    name = "policy"

    def __init__(self, checkpoint: str | None = None, content: str = "fitting", deterministic: bool = True,
                 seed: int = 0, tts: str = "espeak", voice: str | None = None, threshold: float | None = None):
        if content not in CONTENTS:
            raise ValueError(f"policy: content={content!r}; valid choices: {list(CONTENTS)}")
        self.checkpoint = Path(checkpoint) if checkpoint else default_checkpoint()
        self.checkpoint_knob = checkpoint
        self.content, self.deterministic, self.seed = content, bool(deterministic), int(seed)
        self.tts, self.voice_knob = tts, voice
        if threshold is not None and not 0.0 < float(threshold) <= 1.0:
            raise ValueError(f"policy: threshold={threshold!r}; a probability in (0, 1], or null for the likeliest action")
        self.threshold_knob = threshold
        from fdenv.train.policy import load

        self.policy, self.meta = load(self.checkpoint)
        # null: the threshold the checkpoint was calibrated with on validation (else argmax)
        chosen = threshold if threshold is not None else self.meta.get("actions", {}).get("threshold")
        self.threshold = None if chosen is None else float(chosen)
        self._sha = hashlib.sha256(self.checkpoint.read_bytes()).hexdigest()[:12]
        self._renderers: dict = {}

    @property
    def privileged(self) -> bool:
        return self.content == "gold"

    def config(self) -> dict:
        return {"checkpoint": self.checkpoint_knob or "shipped:turn_policy.pt", "checkpoint_sha": self._sha,
                "content": self.content, "deterministic": self.deterministic, "seed": self.seed, "tts": self.tts,
                "voice": self.voice_knob, **({"threshold": self.threshold} if self.threshold is not None else {})}

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        import torch

        from fdenv.render import Renderer, voice_map
        from fdenv.train.actions import OWN_DIM, TurnVoice
        from fdenv.train.features import FeatureHistory, LogMel

        if self.privileged and scene is None:
            raise ValueError("policy with content='gold' is privileged: the runner must pass the scene at reset")
        if sample_rate not in self._renderers:
            self._renderers[sample_rate] = Renderer(backend=self.tts, sample_rate=sample_rate)
        renderer = self._renderers[sample_rate]
        if self.voice_knob:
            voice = self.voice_knob
        elif scene is not None:
            voice = voice_map(scene, renderer)["__assistant__"]
        else:
            voice = renderer.voices[-1]
        words = self.meta.get("actions", {}).get("backchannels")
        kwargs = {"backchannels": tuple(words)} if words else {}
        self.voice = TurnVoice(renderer, voice, frame_samples, **kwargs)
        f = self.meta["features"]
        logmel = LogMel(sample_rate, frame_samples, int(f.get("n_mels", 32)), int(f.get("sub_frames", 4)),
                        float(f.get("fmin", 50.0)), float(f.get("fmax", 8000.0)))
        self.history = FeatureHistory(logmel, int(f.get("history", 24)), OWN_DIM, int(f.get("channel", 0)),
                                      tuple(f.get("context") or ()), normalise=f.get("normalise", "silence"),
                                      playback=bool(f.get("playback", False)))
        if self.history.n_features != self.policy.n_features:
            raise ValueError(f"{self.checkpoint}: the policy expects {self.policy.n_features} features per frame, "
                             f"the feature settings give {self.history.n_features}")
        self.scene = scene
        self._own = np.zeros(OWN_DIM, np.float32)
        self._played = np.zeros(frame_samples, np.float32)  # what the microphones' next frame carries the echo of
        self._state = None  # the GRU's hidden state (streaming checkpoints)
        from fdenv.train.actions import GoldContent

        self._gold = GoldContent(scene) if self.privileged else None
        self._gen = torch.Generator().manual_seed(self.seed)
        self.decisions = np.zeros(3, np.int64)

    def act(self, observation, labels=None):
        from fdenv.train.features import one_thread

        obs = observation if observation.ndim == 2 else observation[None]
        feats = self.history.push(obs, self._own, self._played)
        if self.privileged:
            self._track(labels)
        with one_thread():
            a, self._state = self.policy.act_stream(feats, self._state, deterministic=self.deterministic,
                                                    generator=self._gen, threshold=self.threshold)
        a = int(a)
        self.decisions[a] += 1
        frame = self.voice.frame(a)
        self._own = self.voice.own.copy()
        self._played = frame
        return frame

    def _track(self, labels) -> None:
        text = self._gold.update(labels)
        if text is not None:
            self.voice.set_text(text)

    def stats(self) -> dict:
        return {"decisions": dict(zip(("silent", "backchannel", "speak"), self.decisions.tolist())),
                "utterances": self.voice.utterances, "backchannels": self.voice.backchannels_said}
