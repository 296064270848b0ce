"""The training env: the room, turn-taking rewards, ``TurnActions`` and log-mel features as one
``gymnasium.Env`` (registered as ``fdenv/WhenToSpeak-v0``).

    env = gym.make("fdenv/WhenToSpeak-v0", scene_sets=["pause", "turn_taking"], split="train")
    envs = gym.make_vec("fdenv/WhenToSpeak-v0", num_envs=4, vectorization_mode="async")

It is one class rather than a stack of wrappers so that ``gymnasium.utils.env_checker.check_env``
and ``gym.make`` treat it as a plain environment; ``env.inner`` is the stack
(``LogMelFeatures(TurnActions(TurnTakingReward(RoomEnv)))``) and ``env.room`` the ``RoomEnv``.

Info: ``reward_terms`` (each behaviour's term, unweighted), ``turn_action``, ``teacher`` (the
oracle's decision for the next frame, ``OracleTeacher``, when ``teacher`` is on), the room's
``labels``, and at the final step ``turn_episode``: ``{"return", "length", "kind", "terms":
{name: sum}}`` and the room's ``record``. ``lean_info`` keeps only ``teacher`` and ``turn_episode``
(a vector env merges every info key of every env at every step: per-step terms cost more than
the features). The
key ``episode`` is left to ``gymnasium.wrappers.RecordEpisodeStatistics``, which asserts that
the env does not write it.

``render_mode="rgb_array"`` (what Stable-Baselines3's ``make_vec_env`` asks for) renders the
feature window as an image: time left to right, one grey row per feature (the own-state and
context columns on top), so a video recorder shows what the policy hears.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from .actions import TurnActions
from .features import LogMelFeatures
from .rewards import TurnTakingReward
from .teacher import OracleTeacher

ENV_ID = "fdenv/WhenToSpeak-v0"
SETS = ("pause", "backchannel", "turn_taking", "interruption", "mpe")
# Domain randomisation (``randomize=True``): each episode draws a room preset, a noise type and SNR,
# and an echo gain (fields as SPEC 4's room), and one of ``geometries`` talker placements per preset
# (``RoomEnv``'s ``room_seed``): simulated impulse responses are cached by geometry, so after the
# first episodes in each a reset no longer pays the image-source simulation (0.1 s, a fifth of
# one-process training time). 4 placements x 5 simulated presets x 4 talker counts (1, 2, 4, 5 in
# the train sets) are 80 simulations per process, done within the first few hundred episodes.
# ``geometries: null`` places the talkers anew every episode. Noise ``preset``: the preset's own
# noise (its sourced spectrum and A-weighted SNR, docs/rooms.md) instead of a drawn type and SNR.
# ``tts``: the back ends whose voices the humans speak with, one drawn per episode (``null``: the
# env's ``tts`` only); drawn last, so that a run without it draws its rooms as before.
RANDOMIZE = {"rooms": ["anechoic", "office", "living_room", "kitchen", "meeting_room", "car_cabin"],
             "noise": ["preset", "none", "white", "pink", "babble"], "snr_db": [5.0, 40.0],
             "echo_gain": [0.0, 1.0], "geometries": 4, "tts": None}


def draw_room(rng, randomize: dict) -> dict:
    """One episode's room from ``randomize`` (``RANDOMIZE``'s keys; lists to draw from, ranges
    ``[lo, hi]`` drawn uniformly; ``geometries`` is drawn by ``draw_room_seed``)."""
    r = {**RANDOMIZE, **randomize}
    unknown = set(randomize) - set(RANDOMIZE)
    if unknown:
        raise ValueError(f"randomize: unknown keys {sorted(unknown)}; valid: {sorted(RANDOMIZE)}")
    room = {"preset": str(r["rooms"][int(rng.integers(len(r["rooms"])))]),
            "noise": str(r["noise"][int(rng.integers(len(r["noise"])))])}
    room["snr_db"] = float(rng.uniform(*r["snr_db"]))
    room["echo_gain"] = float(rng.uniform(*r["echo_gain"]))
    if room["noise"] == "preset":  # (the SNR is drawn all the same: the later draws stay where they were)
        del room["noise"], room["snr_db"]
    return room


def draw_room_seed(rng, randomize: dict) -> int | None:
    """The episode's talker placement: one of ``geometries`` seeds, or None (a new one)."""
    n = {**RANDOMIZE, **randomize}["geometries"]
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"randomize: geometries={n!r}: expected a positive integer (placements per preset) or null")
    return int(rng.integers(n))


def draw_tts(rng, randomize: dict) -> str | None:
    """The episode's TTS back end: one of ``tts``, or None (the env's own)."""
    choices = {**RANDOMIZE, **randomize}["tts"]
    if choices is None:
        return None
    from ..render.registry import BACKENDS

    if isinstance(choices, str) or not choices or any(c not in BACKENDS for c in choices):
        raise ValueError(f"randomize: tts={choices!r}: expected a non-empty list of TTS back ends among "
                         f"{list(BACKENDS)}, or null (the env's tts)")
    return str(choices[int(rng.integers(len(choices)))])


def load_scenes(scene_sets, split: str = "train") -> list:
    from ..scene import load_set

    if isinstance(scene_sets, str):
        scene_sets = [scene_sets]
    out = []
    for name in scene_sets:
        if name not in SETS:
            raise ValueError(f"scene set {name!r}: valid sets are {list(SETS)}")
        out.extend(load_set(name, split))
    if not out:
        raise ValueError(f"no scenes in sets {list(scene_sets)}, split {split!r}")
    return out


class TurnTakingEnv(gym.Env):
    """Room + ``TurnTakingReward`` + ``TurnActions`` + ``LogMelFeatures``.

    Arguments: ``scene_sets`` (names of shipped sets, default all five) and ``split``, or
    ``scenes`` (anything ``RoomEnv(scene=...)`` takes); ``room``, ``tts``, ``sample_rate``,
    ``scheduler``, ``behaviour`` (as ``RoomEnv``); ``rewards`` (weights), ``reward_params`` (per-term parameters),
    ``takeover_s``; ``content`` and ``backchannels`` (``TurnActions``); ``features`` (kwargs of
    ``LogMelFeatures``: ``history``, ``n_mels``, ``sub_frames``, ...); ``teacher`` (``True``, a
    dict of ``OracleTeacher`` kwargs, or ``False``); ``lean_info`` (infos with only ``teacher`` and
    the final ``turn_episode``: what vectorised training wants); ``balance``: how a reset without
    ``options["scene"]`` picks the scene: ``"kind"`` (default: a scene kind uniformly, then one of
    its scenes, so that 280 multi-party scenes do not drown 70 of each FDB kind) or ``"scene"``;
    ``randomize``: ``True`` (``RANDOMIZE``) or a dict overriding some of its keys: a room drawn per
    episode (``info["room"]`` at reset says which), and with ``tts`` a TTS back end
    (``info["tts"]``); ``room`` and ``tts`` are then only the first ones.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 12.5}

    def __init__(self, scene_sets=SETS, split: str = "train", scenes=None, room=None, tts: str = "espeak",
                 sample_rate: int = 16000, scheduler: dict | None = None, rewards: dict | None = None,
                 reward_params: dict | None = None, takeover_s: float = 0.72, content: str = "gold",
                 backchannels=None, features: dict | None = None, teacher=True, lean_info: bool = False,
                 balance: str = "kind", render_mode: str | None = None, behaviour: str = "natural",
                 randomize=None):
        from ..sim.env import RoomEnv

        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode={render_mode!r}: valid are None and {self.metadata['render_modes']}")
        self.render_mode = render_mode
        self._obs = None
        scene_list = scenes if scenes is not None else load_scenes(scene_sets, split)
        self.room = RoomEnv(scene=scene_list, room=room, sample_rate=sample_rate, tts=tts, scheduler=scheduler,
                            behaviour=behaviour)
        if balance not in ("scene", "kind"):
            raise ValueError(f"balance={balance!r}: 'scene' (every scene as likely) or 'kind' (every scene kind as likely)")
        self.balance = balance
        self.randomize = dict(RANDOMIZE) if randomize is True else (dict(randomize) if randomize else None)
        if self.randomize is not None:
            draw_room(np.random.default_rng(0), self.randomize)  # check the keys now, not at the first reset
            draw_room_seed(np.random.default_rng(0), self.randomize)
            draw_tts(np.random.default_rng(0), self.randomize)
        self._by_kind: dict[str, list[str]] = {}
        for sc in self.room.scenes:
            self._by_kind.setdefault(sc.kind, []).append(sc.id)
        env = TurnTakingReward(self.room, weights=rewards, params=reward_params, takeover_s=takeover_s)
        kwargs = {} if backchannels is None else {"backchannels": tuple(backchannels)}
        self.actions = TurnActions(env, content=content, **kwargs)
        self.inner = LogMelFeatures(self.actions, **dict(features or {}))
        self.observation_space = self.inner.observation_space
        self.action_space = self.inner.action_space
        if teacher is True:
            teacher = {}
        self.teacher = OracleTeacher(**teacher) if isinstance(teacher, dict) else None
        self.lean_info = bool(lean_info)
        self._return, self._length, self._terms = 0.0, 0, {}

    @property
    def scene(self):
        return self.room.scene

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        options = dict(options or {})
        if options.get("scene") is None and self.balance == "kind" and len(self._by_kind) > 1:
            kinds = sorted(self._by_kind)
            ids = self._by_kind[kinds[int(self.np_random.integers(len(kinds)))]]
            options["scene"] = ids[int(self.np_random.integers(len(ids)))]
        if self.randomize is not None and "room" not in options:
            options["room"] = draw_room(self.np_random, self.randomize)
            room_seed = draw_room_seed(self.np_random, self.randomize)
            if room_seed is not None:
                options.setdefault("room_seed", room_seed)
            tts = draw_tts(self.np_random, self.randomize)
            if tts is not None:
                options.setdefault("tts", tts)
        obs, info = self.inner.reset(seed=seed, options=options)
        self._obs = obs
        self._return, self._length = 0.0, 0
        self._terms = {}
        if self.teacher is not None:
            self.teacher.reset()
        return obs, self._info(info)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.inner.step(action)
        self._obs = obs
        self._return += float(reward)
        self._length += 1
        for k, v in info.get("reward_terms", {}).items():
            self._terms[k] = self._terms.get(k, 0.0) + v
        info = self._info(info)
        if terminated or truncated:
            info["turn_episode"] = {"return": self._return, "length": self._length, "kind": self.room.scene.kind,
                               "terms": dict(self._terms)}
        return obs, float(reward), terminated, truncated, info

    def render(self):
        """``rgb_array``: the observation window as a ``(n_features * 4, history * 4, 3)`` uint8 image."""
        if self.render_mode != "rgb_array" or self._obs is None:
            return None
        x = np.asarray(self._obs, np.float32).T[::-1]  # (features, history), last columns on top
        lo, hi = self.observation_space.low.T[::-1], self.observation_space.high.T[::-1]
        grey = np.clip((x - lo) / np.maximum(hi - lo, 1e-6) * 255.0, 0, 255).astype(np.uint8)
        grey = np.repeat(np.repeat(grey, 4, axis=0), 4, axis=1)
        return np.ascontiguousarray(np.stack([grey] * 3, axis=-1))

    def _info(self, info: dict) -> dict:
        labels = info.get("labels")
        out = dict(info)
        if self.teacher is not None and labels is not None:
            voice = self.actions.voice
            out["teacher"] = self.teacher(labels, voice.kind, voice.armed)
        if self.lean_info:
            out = {"teacher": out["teacher"]} if "teacher" in out else {}
        elif "scene_id" in info:  # reset
            out["room"], out["tts"] = self.room.room_config, self.room.tts
        return out

    def close(self):
        self.inner.close()
        super().close()


def register() -> None:
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point="fdenv.train.envs:TurnTakingEnv")


def make_env_fn(**kwargs):
    """A picklable zero-argument constructor for ``gym.vector.AsyncVectorEnv``."""
    from functools import partial

    return partial(TurnTakingEnv, **kwargs)


def make_vec(num_envs: int, context: str | None = None, processes: bool = True, **kwargs) -> gym.vector.VectorEnv:
    """``num_envs`` training envs, same-step autoreset (the observation after a final step is the
    next episode's first one): each in its own worker process (``AsyncVectorEnv``), or all in
    this process one after the other (``processes=False``, ``SyncVectorEnv``: one core, no
    inter-process round trips)."""
    from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

    fns = [make_env_fn(**kwargs) for _ in range(num_envs)]
    if not processes:
        return SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
    return AsyncVectorEnv(fns, context=context, autoreset_mode=AutoresetMode.SAME_STEP, shared_memory=True)
