"""A when-to-speak action space: ``Discrete(3)`` = silent, backchannel, speak.

A policy decides *when* to speak; ``TurnVoice`` decides *what* it sounds like. Speaking starts a
whole utterance (the scene's gold answer to the last request, or a fitting sentence) rendered
with the assistant's TTS voice, and the utterance plays on, frame after frame, while the policy
keeps choosing a non-silent action, until it ends or the policy chooses *silent*, which stops it
at once (a barge-in decision). A backchannel plays one short word from a fixed set, and stops the
same way. A clip starts only on a decision that follows a *silent* one: holding *speak* after an
utterance has ended keeps the assistant quiet instead of starting the utterance over.

| action | nothing playing, last decision silent | nothing playing, last decision not silent | something playing |
|---|---|---|---|
| 0 silent | stay silent | stay silent | stop it |
| 1 backchannel | start a backchannel | stay silent | go on |
| 2 speak | start an utterance | stay silent | go on |

The assistant's own state is part of the observation (a policy knows what it is saying; without
a room the microphones do not hear it), for the frame of the observation: ``own = [an utterance
goes on after this frame, a backchannel goes on after this frame, this frame played a clip,
seconds into the clip / 4 (at most 1), the decision was not silent]``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

SILENT, BACKCHANNEL, SPEAK = 0, 1, 2
ACTION_NAMES = ("silent", "backchannel", "speak")
# One word each: SPEC 5.2's backchannel has fewer than 2 words (the oracle's set).
BACKCHANNELS = ("yeah", "right", "okay", "sure")
FITTING = "That is a good question, and here is my answer to it."
N4_ANSWER = "Let me think about that for a moment, I believe the best option would be to check it carefully first."
ANSWERABLE = ("T", "final", "interrupt", "N4Q")
CONTENTS = ("gold", "fitting")
OWN_DIM = 5
OWN_FULL_S = 4.0


class TurnVoice:
    """The audio of the three decisions, one frame per call: ``frame(action) -> (N,) float32``.

    ``renderer``: an ``fdenv.render.Renderer`` at the env's rate; ``voice``: the assistant's voice.
    ``text`` is what the next utterance says (``set_text``)."""

    def __init__(self, renderer, voice: str, frame_samples: int, backchannels=BACKCHANNELS, fitting: str = FITTING):
        if not backchannels:
            raise ValueError("TurnVoice: give at least one backchannel")
        self.renderer, self.voice, self.N = renderer, voice, int(frame_samples)
        self.backchannels, self.fitting = tuple(backchannels), fitting
        self.reset()

    def reset(self) -> None:
        self.text = self.fitting
        self.kind: str | None = None  # "utterance", "backchannel" or None
        self._clip = None
        self._pos = 0
        self._n_bc = 0
        self._held = False  # the last decision was not silent
        self.own = np.zeros(OWN_DIM, np.float32)
        self.utterances = 0
        self.backchannels_said = 0

    def set_text(self, text: str | None) -> None:
        self.text = text or self.fitting

    @property
    def playing(self) -> bool:
        return self.kind is not None

    @property
    def armed(self) -> bool:
        """Whether a non-silent decision now starts a clip (the last decision was silent)."""
        return not self._held

    def frame(self, action: int) -> np.ndarray:
        action = int(action)
        held, self._held = self._held, action != SILENT
        if action == SILENT:
            self.kind, self._clip = None, None
        elif self.kind is None and not held:
            if action == SPEAK:
                self._start(self.renderer.clip(self.text, self.voice), "utterance")
                self.utterances += 1
            elif action == BACKCHANNEL:
                word = self.backchannels[self._n_bc % len(self.backchannels)]
                self._n_bc += 1
                self._start(self.renderer.clip(word, self.voice), "backchannel")
                self.backchannels_said += 1
        out = np.zeros(self.N, np.float32)
        if self.kind is None:
            self.own = np.zeros(OWN_DIM, np.float32)
            self.own[4] = float(self._held)
            return out
        lo = self._pos
        piece = self._clip[lo : lo + self.N]
        out[: len(piece)] = piece
        self._pos += self.N
        elapsed = self._pos / (self.N / 0.08)
        if self._pos >= len(self._clip):
            self.kind, self._clip = None, None
        self.own = np.array([self.kind == "utterance", self.kind == "backchannel", 1.0, min(1.0, elapsed / OWN_FULL_S),
                             float(self._held)], np.float32)
        return out

    def _start(self, clip: np.ndarray, kind: str) -> None:
        self._clip, self._pos, self.kind = clip, 0, kind


def own_space() -> spaces.Box:
    return spaces.Box(0.0, 1.0, (OWN_DIM,), np.float32)


class TurnActions(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """``Discrete(3)`` actions (silent, backchannel, speak) mapped to audio frames by ``TurnVoice``.

    Observation: ``Dict({"audio": <the env's microphones>, "own": Box(0, 1, (5,)), "playback":
    Box(-1, 1, (N,))})``: the assistant's state (module docstring) and the samples it played in
    the frame (the reference of its own echo).

    Arguments:
        env: an fdenv audio env (``RoomEnv``, or reward / scoring wrappers of it).
        content: ``"gold"`` (default: the gold answer of the last ``T`` / ``final`` /
            ``interrupt`` heard, a stock answer after ``N4Q``, else ``FITTING``; the scene comes
            from ``env.unwrapped.scene`` at reset, the turn from the labels) or ``"fitting"``
            (always ``FITTING``: what a policy without the scene would say).
        backchannels: the backchannel words, said in turn.
        voice: a TTS voice name; default the scene's assistant voice (``voice_map``).

    ``info["turn_action"]``: ``{"action", "utterance", "backchannel"}`` (ints): the decision, and
    whether an utterance / a backchannel goes on after the played frame.
    """

    def __init__(self, env: gym.Env, content: str = "gold", backchannels=BACKCHANNELS, voice: str | None = None):
        gym.utils.RecordConstructorArgs.__init__(self, content=content, backchannels=tuple(backchannels), voice=voice)
        super().__init__(env)
        if content not in CONTENTS:
            raise ValueError(f"TurnActions: content={content!r}; valid: {list(CONTENTS)}")
        audio = env.action_space
        if not isinstance(audio, spaces.Box) or len(audio.shape) != 1:
            raise ValueError(f"TurnActions wraps an audio env (Box (N,) actions), got {audio}")
        self.content, self.voice_name = content, voice
        self.backchannel_words = tuple(backchannels)
        self.frame_samples = int(audio.shape[0])
        self.action_space = spaces.Discrete(3)
        self.observation_space = spaces.Dict({"audio": env.observation_space, "own": own_space(),
                                              "playback": spaces.Box(-1.0, 1.0, (self.frame_samples,), np.float32)})
        self._renderers: dict[tuple[str, int], object] = {}  # (back end, rate): kept across episodes
        self.voice: TurnVoice | None = None
        self._gold: GoldContent | None = None

    def _make_voice(self) -> TurnVoice:
        from ..render import Renderer, voice_map

        base = self.env.unwrapped
        sr = int(round(self.frame_samples / 0.08))
        key = (getattr(base, "tts", "espeak"), sr)  # the room's back end: it may change per episode
        if key not in self._renderers:
            self._renderers[key] = Renderer(backend=key[0], sample_rate=sr)
        renderer = self._renderers[key]
        scene = getattr(base, "scene", None)
        name = self.voice_name or (voice_map(scene, renderer)["__assistant__"] if scene is not None
                                   else renderer.voices[-1])
        if self.voice is None or self.voice.voice != name or self.voice.renderer is not renderer:
            self.voice = TurnVoice(renderer, name, self.frame_samples, self.backchannel_words)
        return self.voice

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self._make_voice().reset()
        self._gold = GoldContent(getattr(self.env.unwrapped, "scene", None)) if self.content == "gold" else None
        self._track(info.get("labels"))
        return {"audio": obs, "own": self.voice.own.copy(), "playback": np.zeros(self.frame_samples, np.float32)}, info

    def step(self, action):
        a = _as_action(action)
        frame = self.voice.frame(a)
        obs, reward, terminated, truncated, info = self.env.step(frame)
        self._track(info.get("labels"))
        info = dict(info)
        info["turn_action"] = {"action": a, "utterance": int(self.voice.own[0]), "backchannel": int(self.voice.own[1])}
        return {"audio": obs, "own": self.voice.own.copy(), "playback": frame}, reward, terminated, truncated, info

    def _track(self, labels) -> None:
        if self._gold is not None:
            text = self._gold.update(labels)
            if text is not None:
                self.voice.set_text(text)


class GoldContent:
    """Content ``gold``: the next utterance answers the last answerable turn heard (its gold
    answer; a stock answer after ``N4Q``; else ``FITTING``). ``update(labels)`` returns the new
    text when a new answerable turn shows up in the labels, else ``None``."""

    def __init__(self, scene):
        self.scene = scene
        self._seen: set = set()

    def update(self, labels) -> str | None:
        if not labels:
            return None
        turn = labels["turn"]
        tid = turn.get("id")
        if tid is None or tid in self._seen or turn.get("label") not in ANSWERABLE:
            return None
        self._seen.add(tid)
        gold = None
        if self.scene is not None:
            try:
                gold = self.scene.turn(tid).gold_answer
            except KeyError:
                gold = None
        return gold or (N4_ANSWER if turn["label"] == "N4Q" else FITTING)


def _as_action(action) -> int:
    a = np.asarray(action)
    if a.shape not in ((), (1,)) or a.dtype.kind not in "iu":
        raise ValueError(f"TurnActions: expected an integer action in {{0, 1, 2}} (silent, backchannel, speak), got {action!r}")
    a = int(a.reshape(()))
    if not 0 <= a <= 2:
        raise ValueError(f"TurnActions: action {a} out of range; 0 silent, 1 backchannel, 2 speak")
    return a
