"""The fdenv room environment."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .. import __version__
from ..errors import ActionError, EnvStateError, OptionsError, short, suggest
from ..scene.schema import Scene
from . import options as opts
from .behaviour import DEFAULT_PROFILE
from .episode import Episode, abs_peak

FRAME_S = 0.08


class RoomEnv(gym.Env):
    """A room where people talk and one voice assistant listens and speaks at the same time.

    ## Description

    Scripted scenes (Full-Duplex-Bench's turn-taking situations, Duplex-MPE's multi-party
    duties) are rendered with text-to-speech and played by a scheduler that reacts to the
    assistant: after a question the humans wait for the answer, a user barges in once the
    assistant has talked long enough, a human resolves a question put to the assistant after
    about 3 s. The agent is the assistant. It hears the room in 80 ms frames and speaks 80 ms frames
    back. Scoring wrappers (``fdenv.wrappers``) grade the episode from its record.

    ## Time convention

    ``reset()`` returns frame 0 at the microphones. The k-th ``step(a_k)`` (k from 0) means "the
    assistant decided ``a_k`` after hearing frames 0..k": it plays during frame k+1, and ``step``
    returns frame k+1. Every frame-based live system has this one-frame algorithmic delay.

    ## Action Space

    ``Box(-1, 1, (N,), float32)``, N = 1280 at 16 kHz or 1920 at 24 kHz: the assistant's audio
    for the next frame. Any floating dtype (numpy, or a torch tensor of any float dtype, with or
    without grad) is accepted and cast to float32; samples outside [-1, 1] are clipped and counted
    in ``info["clipped_samples"]``. Integer PCM, other shapes, NaN or inf raise
    ``fdenv.errors.ActionError`` (a ``ValueError``).

    ## Observation Space

    ``Box(-1, 1, (n_mics, N), float32)``: the microphones during one frame (``n_mics`` = 1
    without a room): every human clip, plus room reverberation, noise and the assistant's echo
    when a room is configured.

    ## Rewards

    0 at every step. Scores come from ``FDBScore`` / ``MPEScore`` at the end of the episode;
    shaped rewards for training come from reward wrappers.

    ## Starting State

    A scene chosen by ``options={"scene": index_or_id}``, else by the seed among the env's
    scenes. The first clip starts after the first turn's gap (default 0.3 s).
    ``options={"room": ...}`` (anything ``room`` takes, with as many microphones) sets the room
    from this episode on (training envs draw one per episode). ``options={"room_seed": k}`` places
    this episode's talkers (and draws its noise) from seed ``k`` instead of from the episode's seed
    and scene, so that episodes share a room geometry and its cached impulse responses.
    ``options={"tts": "kokoro"}`` sets the humans' TTS back end from this episode on (training
    envs draw one per episode, so that a policy meets both back ends' voices).

    ## Episode End

    Terminated ``tail_s`` (2 s) after the latest of: the last human clip, every scoring window
    (SPEC 6, 7), and the assistant's current response (at most ``max_response_s``). The final
    step's ``info["record"]`` is the ``EpisodeRecord`` (references to the env's buffers).

    ## Info

    ``reset``: ``scene_id``, ``duty``, ``assistant_name``, ``sample_rate``, ``frame_samples``,
    ``labels``. ``step``: ``labels``, ``clipped_samples`` (and ``record`` and ``mic_clipped_samples``, the
    microphone samples clipped at full scale during the episode, at the end). Labels:
    ``t``, ``frame``, ``speaking``, ``turn``, ``trp``, ``expect``, ``assistant_active``
    (SPEC 2), plus ``doa`` with a room.

    ## Arguments

    ``scene``: a ``Scene``, a scene id, a path to a scene file, or a list of them.
    ``scene_set`` / ``split``: a shipped set (``pause``, ``backchannel``, ``turn_taking``,
    ``interruption``, ``mpe``) and split (``train``, ``val``, ``test``, ``all``).
    ``room``: ``None`` / ``"anechoic"``, a preset name, or a dict (SPEC 4).
    ``sample_rate``: 16000 or 24000. ``tts``: ``"espeak"`` or ``"kokoro"``.
    ``scheduler``: a dict of ``SchedulerConfig`` fields (``max_response_s``, ``tail_s``, ...).
    ``behaviour``: ``"natural"`` (default: human timings drawn per seed, scene and event, with
    overlaps) or ``"paper"`` (SPEC 3's exact constants and the scripts' gaps); docs/behaviour.md.

    ## Example

        >>> import gymnasium as gym, numpy as np, fdenv
        >>> env = gym.make("fdenv/TurnTaking-v0", split="test")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype, info["labels"]["expect"]
        ((1, 1280), dtype('float32'), 'free')
        >>> terminated = False
        >>> while not terminated:  # a silent assistant
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> record = info["record"]
        >>> [t.label for t in record.turns][-1], record.assistant_silent
        ('final', True)

    ## Version History

    * v0: initial release.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 1 / FRAME_S}

    def __init__(
        self,
        scene: Any = None,
        scene_set: str | None = None,
        split: str = "all",
        room: str | dict | None = None,
        sample_rate: int = 16000,
        tts: str = "espeak",
        scheduler: dict | None = None,
        render_mode: str | None = None,
        behaviour: str = DEFAULT_PROFILE,
    ):
        self.sample_rate = opts.sample_rate(sample_rate)
        self.render_mode = opts.render_mode(render_mode)
        self.tts = opts.tts(tts)
        self._sched_cfg = opts.scheduler(scheduler)
        self.behaviour = opts.behaviour(behaviour)
        self.frame_samples = int(round(FRAME_S * sample_rate))
        self.scenes, self._replays = opts.scenes(scene, scene_set, split)
        self.room_config = room
        self._room_spec = opts.room(room)
        from ..render import Renderer

        self._renderers = {self.tts: Renderer(backend=tts, sample_rate=sample_rate)}  # one per back end met
        opts.pinned_voices(self.scenes, self._replays, self._renderer)
        if self._room_spec is None:
            self.n_mics = 1
        else:
            from ..room import mic_layout

            self.n_mics = mic_layout(self._room_spec.mics).shape[1]
        N = self.frame_samples
        self.observation_space = spaces.Box(-1.0, 1.0, (self.n_mics, N), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (N,), np.float32)
        self.episode: Episode | None = None  # the current episode's state (tools and tests; not an observation)
        self._done = True

    # ---- episode set-up ----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise OptionsError(f"seed={short(seed)}: expected a non-negative integer or None")
        options = _reset_options(options)
        super().reset(seed=None if seed is None else int(seed))
        if "room" in options:
            self._set_room(options["room"])
        if "tts" in options:
            self._set_tts(options["tts"])
        scene = self._pick_scene(options.get("scene"))
        room_seed = options.get("room_seed")
        if room_seed is not None and (isinstance(room_seed, bool) or not isinstance(room_seed, (int, np.integer))
                                      or room_seed < 0):
            raise OptionsError(f"options['room_seed']={short(room_seed)}: expected a non-negative integer or None")
        episode_seed = int(self.np_random.integers(2**31 - 1))
        meta = {"config": self.result_config(), "versions": {"fdenv": __version__, "tts": self._renderer.version}}
        replay = self._replays.get(scene.id)
        if replay is not None:
            opts.replay_room(self._room_spec, f"scene {scene.id!r}")
            self.episode = Episode.replay(scene, *replay, self._sched_cfg, self.sample_rate, self.frame_samples,
                                          episode_seed, meta, previous=self.episode)
        else:
            self.episode = Episode.live(scene, self._renderer, self._room_spec, self._sched_cfg, self.sample_rate,
                                        self.frame_samples, self.n_mics, episode_seed, meta, previous=self.episode,
                                        behaviour=self.behaviour, room_seed=room_seed)
        self._done = False
        obs, labels = self.episode.start()
        return obs, {
            "scene_id": scene.id,
            "duty": scene.duty,
            "assistant_name": scene.assistant_name,
            "sample_rate": self.sample_rate,
            "frame_samples": self.frame_samples,
            "labels": labels,
        }

    def _pick_scene(self, choice) -> Scene:
        if choice is None:
            return self.scenes[int(self.np_random.integers(len(self.scenes)))] if len(self.scenes) > 1 else self.scenes[0]
        if isinstance(choice, (int, np.integer)) and not isinstance(choice, bool):
            if not 0 <= choice < len(self.scenes):
                raise OptionsError(f"options['scene']={choice}: index out of range; this env has {len(self.scenes)} scenes")
            return self.scenes[int(choice)]
        for s in self.scenes:
            if s.id == choice:
                return s
        if not isinstance(choice, str):
            raise OptionsError(f"options['scene']={short(choice)}: expected a scene index (int) or a scene id (str), "
                               f"got {type(choice).__name__}")
        hint = suggest(choice, [s.id for s in self.scenes]) if len(choice) <= 200 else ""
        raise OptionsError(f"options['scene']={short(choice)}: not a scene of this env ({len(self.scenes)} scenes){hint}")

    def _set_room(self, room) -> None:
        """``options["room"]``: this episode's room on, with the env's microphone count."""
        from ..room import mic_layout

        spec = opts.room(room)
        n = 1 if spec is None else mic_layout(spec.mics).shape[1]
        if n != self.n_mics:
            raise OptionsError(f"options['room']: {n} microphone(s), but this env was made with {self.n_mics}; "
                               "keep the microphone array of the env's room")
        self.room_config, self._room_spec = room, spec

    def _set_tts(self, tts) -> None:
        """``options["tts"]``: this episode's TTS back end on (its renderer kept for later episodes)."""
        from ..render import Renderer

        name = opts.tts(tts, "options['tts']")
        if name not in self._renderers:
            renderer = Renderer(backend=name, sample_rate=self.sample_rate)
            opts.pinned_voices(self.scenes, self._replays, renderer)
            self._renderers[name] = renderer
        self.tts = name

    @property
    def _renderer(self):
        """The renderer of the current back end (``tts``)."""
        return self._renderers[self.tts]

    # ---- stepping ----------------------------------------------------------------------
    def step(self, action):
        if self._done:
            raise EnvStateError("step() called on a finished episode (or before reset()): call reset() first")
        N = self.frame_samples
        a = action if type(action) is np.ndarray else _action_array(action)
        if a.shape != (N,):
            raise ActionError(
                f"action: expected shape ({N},) (one 80 ms frame at {self.sample_rate} Hz), got {a.shape}"
            )
        if a.dtype.kind != "f":
            hint = " (int16 PCM: scale by 1/32768 and cast to float32)" if a.dtype.kind in "iu" else ""
            raise ActionError(f"action: expected floating-point samples in [-1, 1], got dtype {a.dtype}{hint}")
        # Checked in the caller's precision, before the float32 track sees it: 1e39 is a finite
        # float64 (clipped and counted), and 1 + 1e-8 is over 1 though float32 rounds it to 1.
        # A float32 action is its frame bit for bit: staged first, its energy (the detector's
        # input) settles the check when under 1, as then no sample can be over 1 (0.99 leaves
        # room for the sum's rounding, under 1e-4 for a frame).
        n = 0
        energy = self.episode.stage(a) if a.dtype == np.float32 else None
        if not (energy is not None and energy < 0.99) and not abs_peak(a) <= 1.0:  # also catches NaN
            if not np.isfinite(a).all():
                raise ActionError("action: contains NaN or inf; expected finite samples in [-1, 1]")
            n = int(np.count_nonzero(np.abs(a) > 1.0))
            a = np.clip(a, -1.0, 1.0)
            self.episode.clipped += n
            energy = None
        obs, labels, terminated = self.episode.play(a, energy)
        info = {"labels": labels, "clipped_samples": n}
        if terminated:
            self._done = True
            info["record"] = self.episode.record()
            info["mic_clipped_samples"] = self.episode.mic_clipped
        return obs, 0.0, terminated, False, info

    def render(self):
        """``rgb_array``: the episode so far as a timeline picture (humans, assistant, windows)."""
        if self.render_mode != "rgb_array" or self.episode is None:
            return None
        from ..timeline import episode_rgb

        return episode_rgb(self.episode.record())

    def result_config(self) -> dict:
        """The configuration that affects results (it keys run folders)."""
        from dataclasses import asdict

        return {
            "sample_rate": self.sample_rate,
            "tts": self.tts,
            "room": self._room_spec.to_dict() if self._room_spec is not None else None,
            "scheduler": asdict(self._sched_cfg),
            "behaviour": self.behaviour,
        }

    @property
    def scene(self) -> Scene | None:
        """The current episode's scene (for privileged agents and tools; not an observation)."""
        return None if self.episode is None else self.episode.scene


RESET_OPTIONS = ("scene", "room", "room_seed", "tts")  # the keys reset(options=...) understands


def _reset_options(options) -> dict:
    from collections.abc import Mapping

    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise OptionsError(f"options={short(options)}: expected a dict such as {{'scene': 0}} or None")
    for key in options:
        if key not in RESET_OPTIONS:
            raise OptionsError(f"options[{short(key)}]: unknown option{suggest(key, RESET_OPTIONS)} "
                               f"(reset understands {list(RESET_OPTIONS)})")
    return dict(options)


def _action_array(action) -> np.ndarray:
    """An action given as something other than a numpy array (a list, a torch tensor)."""
    if hasattr(action, "detach") and hasattr(action, "numpy"):  # torch: no grad, on the CPU, a numpy dtype
        t = action.detach().cpu()
        if t.is_floating_point() and str(t.dtype) not in ("torch.float32", "torch.float64"):
            t = t.float()  # bfloat16 / float16 have no (or no safe) numpy twin; float32 holds them exactly
        return t.numpy()
    try:
        return np.asarray(action)
    except (TypeError, ValueError) as e:
        raise ActionError(f"action: expected an array of float samples in [-1, 1], got {type(action).__name__} "
                          f"that numpy cannot read ({e})") from None
