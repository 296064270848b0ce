"""The fdenv room environment."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .. import __version__
from ..errors import ActionError, ConfigError, EnvStateError, OptionsError, short, suggest
from ..record import EpisodeRecord, PlayedClip, PlayedTurn
from ..scene.schema import Scene
from .detector import ActivityDetector
from .behaviour import DEFAULT_PROFILE, check_profile, keyed_seed, make_behaviour
from .labels import Labeler
from .scheduler import Scheduler, SchedulerConfig

try:  # the ufunc itself: np.clip's Python wrapper costs twice a frame's clipping
    from numpy._core.umath import clip as _clip
except ImportError:  # pragma: no cover - numpy < 2
    _clip = np.clip

FRAME_S = 0.08
BABBLE_TEXTS = (
    "The meeting moved to Thursday because half of the team was travelling.",
    "Could you pass me the salt and the pepper, please?",
    "I think the bus leaves from the other side of the square.",
    "She told me the film was much longer than the book.",
    "We should really paint the fence before the winter comes.",
    "My brother just started learning to play the violin.",
    "There is a new bakery on the corner that opens at six.",
    "The printer on the second floor has been jammed all week.",
    "Did anyone see where I left my blue umbrella?",
    "They are planning a long walk along the river on Sunday.",
)
SAMPLE_RATES = (16000, 24000)
MIC_PEAK = 0.9  # the loudest scripted moment at the microphones, at most (headroom below full scale)


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
        if sample_rate not in SAMPLE_RATES:
            raise ConfigError(f"sample_rate={short(sample_rate)}: fdenv steps in 80 ms frames at one of {SAMPLE_RATES} Hz")
        if render_mode not in (None, "rgb_array"):
            raise ConfigError(f"render_mode={short(render_mode)}: valid render modes are None and 'rgb_array'")
        if not isinstance(tts, str):
            raise ConfigError(f"tts={short(tts)}: expected the name of a TTS back end, 'espeak' (default) or 'kokoro'")
        self._sched_cfg = _scheduler_config(scheduler)
        self.behaviour = check_profile(behaviour)
        self.render_mode = render_mode
        self.sample_rate = sample_rate
        self.frame_samples = int(round(FRAME_S * sample_rate))
        self.scenes, self._replays = _resolve_scenes(scene, scene_set, split)
        self.tts = tts
        self.room_config = room
        self._room_spec = _room_spec(room)
        from ..render import Renderer

        self._renderer = Renderer(backend=tts, sample_rate=sample_rate)
        _check_voices(self.scenes, self._replays, self._renderer)
        if self._room_spec is None:
            self.n_mics = 1
        else:
            from ..room import mic_layout

            self.n_mics = mic_layout(self._room_spec.mics).shape[1]
        N = self.frame_samples
        self.observation_space = spaces.Box(-1.0, 1.0, (self.n_mics, N), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (N,), np.float32)
        self._scene: Scene | None = None
        self._done = True

    # ---- episode set-up ----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise OptionsError(f"seed={short(seed)}: expected a non-negative integer or None")
        options = _reset_options(options)
        super().reset(seed=None if seed is None else int(seed))
        self._scene = self._pick_scene(options.get("scene"))
        self._episode_seed = int(self.np_random.integers(2**31 - 1))
        scene, N, sr = self._scene, self.frame_samples, self.sample_rate
        replay = self._replays.get(scene.id)
        if replay is not None:
            return self._reset_replay(scene, *replay)
        self._clips_audio = self._render_clips(scene)
        self._room = None
        self._doa = None
        self._delays = {s.name: 0 for s in scene.speakers}
        if self._room_spec is not None:
            self._prepare_room()
        durations = [[len(c) for c in turn] for turn in self._clips_audio]
        self._behaviour = make_behaviour(self.behaviour, self._sched_cfg, self._episode_seed, scene.id)
        self._extra_audio = self._render_extras(scene) if self.behaviour == "natural" else {}
        self._sched = Scheduler(scene, durations, sr, N, self._sched_cfg, self._delays, self._behaviour,
                                {k: len(v[0]) for k, v in self._extra_audio.items()})
        self._labeler = Labeler(scene, sr, N, self._sched_cfg, self._behaviour)
        self._detector = ActivityDetector(N, sr)
        expected = sum(map(sum, durations)) + int(sr * (30 + 25 * len(scene.turns)))
        self._cap = int(math.ceil(expected / N) + 2) * N
        self._clear_buffers(self.n_mics)
        self._placed = 0  # scheduler clips already mixed into the microphone buffer
        self._extras_placed = 0  # ... and unscripted events (backchannels, competing starts)
        self._turns_seen = 0
        self._played_turns: list[PlayedTurn] = []
        self._played_clips: list[PlayedClip] = []
        self._start_episode()
        labels = self._advance(0, self._assistant[:N])
        return self._mic[:, :N].copy(), self._reset_info(labels)

    def _clear_buffers(self, n_mics: int) -> None:
        """Zeroed microphone and assistant buffers of at least ``self._cap`` samples. The last
        episode's are reused, zeroing only what it wrote: fresh ``np.zeros`` pages are faulted in
        one frame at a time during ``step``, which cost more than the rest of a room step."""
        mic = getattr(self, "_mic", None)
        if mic is not None and mic.shape[0] == n_mics and mic.shape[1] >= self._cap:
            used = min(mic.shape[1], max(self._used, (self._k + 2) * self.frame_samples))
            mic[:, :used] = 0
            self._assistant[:used] = 0
            self._cap = mic.shape[1]
        else:
            self._mic = np.zeros((n_mics, self._cap), np.float32)
            self._assistant = np.zeros(self._cap, np.float32)
        self._used = 0  # samples of the buffers written beyond the current frame (clips)
        self._k = 0

    def _start_episode(self) -> None:
        self._k = 0
        self._clipped = 0
        self._mic_clipped = 0  # microphone samples clipped at full scale (reported at the end)
        self._done = False
        self._is_replay = False

    def _reset_info(self, labels: dict) -> dict:
        scene, N, sr = self._scene, self.frame_samples, self.sample_rate
        return {
            "scene_id": scene.id,
            "duty": scene.duty,
            "assistant_name": scene.assistant_name,
            "sample_rate": sr,
            "frame_samples": N,
            "labels": labels,
        }

    def _reset_replay(self, scene: Scene, audio16k: np.ndarray, gold: dict):
        """Replay mode (SPEC 3): a fixed recording at the microphone, fixed gold times, no reactions."""
        from ..audio import resample
        from ..windows import close_of
        from .replay import FixedSchedule
        from .scheduler import in_samples

        if self._room_spec is not None:
            raise ConfigError(f"scene {short(scene.id)} replays a fixed FDB recording: use room=None (anechoic)")
        N, sr = self.frame_samples, self.sample_rate
        audio = resample(audio16k, 16000, sr)
        index = {t.id: i for i, t in enumerate(scene.turns)}
        self._played_turns, self._played_clips = list(gold["turns"]), list(gold["clips"])
        s = in_samples(sr)
        ends = [len(audio)] + [close_of(t.label, s(t.start), s(t.end), self._sched_cfg, s) for t in self._played_turns]
        end = max(ends) + int(round(self._sched_cfg.tail_s * sr))
        self._sched = FixedSchedule(math.ceil(end / N))
        self._cap = (self._sched.n_frames + 2) * N
        self._clear_buffers(1)
        self._mic[0, : len(audio)] = audio
        self._used = len(audio)
        self._labeler = Labeler(scene, sr, N, self._sched_cfg)
        for t in self._played_turns:
            self._labeler.add_turn(index[t.id], int(round(t.start * sr)), int(round(t.end * sr)),
                                   [int(round(x * sr)) for x in t.trps])
        for c in self._played_clips:
            self._labeler.add_clip(int(round(c.start * sr)), int(round(c.end * sr)), c.speaker)
        self._detector = ActivityDetector(N, sr)
        self._delays = {s.name: 0 for s in scene.speakers}
        self._room, self._doa = None, None
        self._placed = self._turns_seen = self._extras_placed = 0
        self._start_episode()
        self._is_replay = True
        labels = self._advance(0, self._assistant[:N])
        return self._mic[:, :N].copy(), self._reset_info(labels)
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

    def _render_extras(self, scene: Scene) -> dict:
        """(speaker, text) -> (clip, cache key) for every unscripted phrase a human may say."""
        from ..render import voice_map
        from .behaviour import unscripted_clips

        return {(sp, text): (self._renderer.clip(text, voice), self._renderer.key(text, voice))
                for sp, text, voice in unscripted_clips(scene, voice_map(scene, self._renderer))}

    def _render_clips(self, scene: Scene) -> list[list[np.ndarray]]:
        from ..render import turn_clips, voice_map

        out, keys = [], []
        for pieces in turn_clips(scene, voice_map(scene, self._renderer)):
            out.append([self._renderer.clip(text, voice) for text, voice in pieces])
            keys.append([self._renderer.key(text, voice) for text, voice in pieces])
        self._clip_keys = keys
        return out

    # ---- room ---------------------------------------------------------------------------
    def _prepare_room(self) -> None:
        """Impulse responses, convolved clips, echo path and noise for this episode (cached per
        scene, room and seed). Gold times move to microphone 0's axis by each speaker's delay."""
        from ..room import active_speech_level_db, build_room

        scene, sr, N = self._scene, self.sample_rate, self.frame_samples
        # A new geometry for every (seed, scene): the runner resets every scene with the run's seed.
        seed = keyed_seed(self._episode_seed, scene.id, "room")
        room = build_room(self._room_spec, [s.name for s in scene.speakers], seed=seed, sample_rate=sr)
        self._room = room
        self._delays = {name: int(round(room.delay_s(name) * sr)) for name in self._delays}
        self._echo = room.echo_path(N)
        self._doa = {name: room.doa(name) for name in self._delays} if room.simulated else None
        wet = [room.convolve(t.speaker, clip, key=self._clip_keys[i][p])[0]
               for i, t in enumerate(scene.turns) for p, clip in enumerate(self._clips_audio[i])]
        self._noise = self._self_noise = None
        spec = self._room_spec
        level = active_speech_level_db(np.concatenate(wet), sr) if spec.noise != "none" or spec.noise_sources else None
        if spec.noise not in ("none", "self") or spec.noise_sources:
            # Noise for the scene's nominal length, looped past it (reactive episodes can run long).
            nominal = sum(len(w) for w in wet) + int(sr * (10 + 6 * len(scene.turns)))
            self._noise = room.noise(-(-nominal // N) * N, level, babble=self._babble_clips)
        if spec.noise != "none" and np.isfinite(level):  # every microphone hisses a little
            from ..room.noise import SELF_NOISE_DB, self_noise

            self._self_noise = self_noise(self.n_mics, 10 * sr // N * N, level - SELF_NOISE_DB, seed)
        # Levels calibrated so that the microphones never clip on the scene's speech and noise:
        # a fixed gain for the episode (a recording engineer's headroom), below 1 only when needed.
        peak = max((float(np.abs(w).max()) for w in wet if w.size), default=0.0)
        for x in (self._noise, self._self_noise):
            peak += 0.0 if x is None else float(np.abs(x[0]).max())
        self._mic_gain = np.float32(min(1.0, MIC_PEAK / peak)) if peak > 0 else np.float32(1.0)

    def _babble_clips(self, n: int, seed: int) -> list[np.ndarray]:
        """Babble talkers: extra TTS voices reading unrelated sentences (DESIGN: noise)."""
        rng = np.random.default_rng(seed)
        voices = self._renderer.voices
        order = rng.permutation(len(BABBLE_TEXTS))
        return [self._renderer.clip(BABBLE_TEXTS[order[i % len(order)]], voices[(i + int(order[0])) % len(voices)])
                for i in range(n)]

    def _room_clip(self, speaker: str, turn: int, piece: int, audio: np.ndarray) -> np.ndarray:
        return self._room.convolve(speaker, audio, key=self._clip_keys[turn][piece])

    def _room_frame(self, j: int, frame: np.ndarray) -> None:
        """Echo of the assistant's frame j, and noise, into the microphones during frame j."""
        N = self.frame_samples
        mic = self._mic[:, j * N : (j + 1) * N]
        self._echo.add_to(frame, mic)
        for noise in (self._noise, self._self_noise):
            if noise is not None:
                lo = (j * N) % noise.shape[1]
                mic += noise[:, lo : lo + N]
        if self._mic_gain != 1.0:
            mic *= self._mic_gain

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
        k = self._k + 1  # the frame this action plays in, and the frame returned
        lo = k * N
        if lo + 2 * N > self._cap:
            self._grow()
        # Checked in the caller's precision, before the float32 track sees it: 1e39 is a finite
        # float64 (clipped and counted), and 1 + 1e-8 is over 1 though float32 rounds it to 1.
        n = 0
        if not max(a.max(), -a.min()) <= 1.0:  # also catches NaN
            if not np.isfinite(a).all():
                raise ActionError("action: contains NaN or inf; expected finite samples in [-1, 1]")
            n = int(np.count_nonzero(np.abs(a) > 1.0))
            a = np.clip(a, -1.0, 1.0)
            self._clipped += n
        frame = self._assistant[lo : lo + N]
        frame[:] = a
        labels = self._advance(k, frame)
        self._k = k
        obs = self._mic[:, lo : lo + N].copy()
        info = {"labels": labels, "clipped_samples": n}
        n_frames = self._sched.n_frames
        terminated = n_frames is not None and k + 1 >= n_frames
        if terminated:
            self._done = True
            info["record"] = self._record(k + 1)
            info["mic_clipped_samples"] = self._mic_clipped
        return obs, 0.0, terminated, False, info

    def _advance(self, j: int, frame: np.ndarray) -> dict:
        """Everything that happens in frame j, once the assistant's frame j is known."""
        det = self._detector
        active = det.update(frame)
        onset = bool(det.onsets) and det.onsets[-1] == j
        sched = self._sched
        sched.advance(j, det.loud, active, onset)
        if len(sched.clips) > self._placed or len(sched.extras) > self._extras_placed:
            self._place_new()
        N = self.frame_samples
        lo = j * N
        if self._room is not None:
            self._room_frame(j, frame)
        mic = self._mic[:, lo : lo + N]
        if not max(mic.max(), -mic.min()) <= 1.0:  # counted: levels are meant never to clip
            self._mic_clipped += int(np.count_nonzero(np.abs(mic) > 1.0))
            _clip(mic, -1.0, 1.0, out=mic)
        labels = self._labeler.frame(j, active, onset)
        if self._doa is not None:
            labels["doa"] = dict(self._doa)  # fresh per step: users keep what they get
        return labels

    def _place_new(self) -> None:
        sched, scene = self._sched, self._scene
        sr = self.sample_rate
        while self._turns_seen < len(sched.turns):
            st = sched.turns[self._turns_seen]
            turn = scene.turns[st.index]
            d = self._delays[turn.speaker]
            self._labeler.add_turn(st.index, st.start + d, st.end + d, [x + d for x in st.trps])
            self._played_turns.append(PlayedTurn(
                id=turn.id, speaker=turn.speaker, label=turn.label, start=(st.start + d) / sr,
                end=(st.end + d) / sr, text=turn.spoken_text, addressee=turn.addressee,
                gold_answer=turn.gold_answer, resolves=turn.resolves, trps=tuple((x + d) / sr for x in st.trps),
            ))
            self._turns_seen += 1
        for c in sched.clips[self._placed :]:
            turn = scene.turns[c.turn]
            audio = self._clips_audio[c.turn][c.piece]
            d = self._delays[turn.speaker]
            if self._room is not None:
                audio = self._room_clip(turn.speaker, c.turn, c.piece, audio)
            else:
                audio = audio[None, :]
            end = c.start + audio.shape[1]
            while end > self._cap:
                self._grow()
            self._mic[:, c.start : end] += audio
            self._used = max(self._used, end)
            self._labeler.add_clip(c.start + d, c.start + d + c.length, turn.speaker)
            self._played_clips.append(PlayedClip(turn.id, c.piece, turn.speaker, (c.start + d) / sr,
                                                 (c.start + d + c.length) / sr, turn.pieces[c.piece].text))
        self._placed = len(sched.clips)
        for x in sched.extras[self._extras_placed :]:
            self._place_extra(x)
        self._extras_placed = len(sched.extras)

    def _place_extra(self, x) -> None:
        """A backchannel or a competing start (cut where its speaker drops out, with a 30 ms fade)."""
        sr = self.sample_rate
        audio, key = self._extra_audio[(x.speaker, x.text)]
        if x.length < len(audio):
            fade = min(int(0.03 * sr), x.length)
            audio = audio[: x.length].copy()
            audio[x.length - fade :] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
            key = f"{key}:cut{x.length}"
        audio = self._room.convolve(x.speaker, audio, key=key) if self._room is not None else audio[None, :]
        end = x.start + audio.shape[1]
        while end > self._cap:
            self._grow()
        self._mic[:, x.start : end] += audio
        self._used = max(self._used, end)
        d = self._delays[x.speaker]
        start, stop = (x.start + d) / sr, (x.start + d + x.length) / sr
        self._labeler.add_extra(x.id, x.speaker, x.label, x.start + d, x.start + d + x.length)
        self._played_turns.append(PlayedTurn(id=x.id, speaker=x.speaker, label=x.label, start=start, end=stop,
                                             text=x.text, resolves=x.resolves))
        self._played_clips.append(PlayedClip(x.id, 0, x.speaker, start, stop, x.text))

    def _grow(self) -> None:
        extra = self._cap
        self._mic = np.concatenate([self._mic, np.zeros((self.n_mics, extra), np.float32)], axis=1)
        self._assistant = np.concatenate([self._assistant, np.zeros(extra, np.float32)])
        self._cap += extra

    def _record(self, n_frames: int) -> EpisodeRecord:
        n = n_frames * self.frame_samples
        return EpisodeRecord(
            scene=self._scene,
            sample_rate=self.sample_rate,
            frame_samples=self.frame_samples,
            assistant=self._assistant[:n].copy(),  # the buffers are reused by the next episode
            turns=self._played_turns,
            clips=self._played_clips,
            n_frames=n_frames,
            seed=self._episode_seed,
            config=self.result_config(),
            versions={"fdenv": __version__, "tts": self._renderer.version},
            mic0=self._mic[0, :n].copy(),
            replay=self._is_replay,
            reactions=self._reactions(),
        )

    def _reactions(self) -> list[dict]:
        """The natural humans' reactions to an intruding assistant, on microphone 0's axis."""
        out = []
        sr = self.sample_rate
        for r in getattr(self._sched, "reactions", []):
            turn = self._scene.turns[r.turn]
            d = self._delays[turn.speaker]
            out.append({"kind": r.kind, "turn_id": turn.id, "due": (r.at + d) / sr,
                        "start": None if r.start is None else (r.start + d) / sr})
        return out

    def render(self):
        """``rgb_array``: the episode so far as a timeline picture (humans, assistant, windows)."""
        if self.render_mode != "rgb_array" or self._scene is None:
            return None
        from ..timeline import episode_rgb

        return episode_rgb(self._record(self._k + 1))

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
        return self._scene


def _resolve_scenes(scene, scene_set, split) -> tuple[list[Scene], dict]:
    """The env's scenes, and the replay data (fixed input, gold times) of imported FDB samples."""
    if scene is not None and scene_set is not None:
        raise ConfigError("give either scene= or scene_set=, not both")
    if scene_set is not None:
        from ..scene import load_set

        scenes = load_set(scene_set, split)
        if not scenes:
            raise ConfigError(f"scene_set={short(scene_set)}, split={short(split)}: no scenes")
        return scenes, {}
    if scene is None:  # the first shipped turn-taking scene of the split
        from ..scene import load_set

        return load_set("turn_taking", split)[:1], {}
    items = scene if isinstance(scene, (list, tuple)) else [scene]
    if not items:
        raise ConfigError("scene=[]: an empty list; give a scene, a scene id, a path, a list of them, or use scene_set=")
    out, replays = [], {}
    for item in items:
        if isinstance(item, str) and item.startswith("fdb:"):
            from .replay import load_fdb

            for sc, audio, gold in load_fdb(item[4:]):
                out.append(sc)
                replays[sc.id] = (audio, gold)
            continue
        if isinstance(item, Scene):
            out.append(item)
        elif isinstance(item, dict):
            from ..scene.load import scene_from_dict

            out.append(scene_from_dict(item, source="scene= argument"))
        elif isinstance(item, str):
            from ..scene import find_scene

            out.append(find_scene(item))
        else:
            raise ConfigError(f"scene: expected a Scene, a scene id or a path to a scene file, got {type(item).__name__}")
    return out, replays


def _check_voices(scenes, replays, renderer) -> None:
    """Pinned voices checked when the env is made, not at the first reset that meets the scene."""
    from ..errors import SceneError

    voices = None
    for sc in scenes:
        if sc.id in replays:
            continue
        pinned = [(f"speakers[{i}].voice", s.voice) for i, s in enumerate(sc.speakers) if s.voice is not None]
        pinned += [("duty_voice", sc.duty_voice)] if getattr(sc, "duty_voice", None) is not None else []
        for field, voice in pinned:
            voices = renderer.voices if voices is None else voices
            if voice not in voices:
                raise SceneError(f"scene {short(sc.id)}", field, f"unknown voice {short(voice)} for TTS back end "
                                 f"{short(renderer.backend_name)}{suggest(voice, voices)}; valid voices: {', '.join(voices)}")


RESET_OPTIONS = ("scene",)  # the keys reset(options=...) understands


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


def _scheduler_config(scheduler) -> SchedulerConfig:
    from collections.abc import Mapping

    valid = list(SchedulerConfig.__dataclass_fields__)
    if scheduler is None:
        return SchedulerConfig()
    if not isinstance(scheduler, Mapping):
        raise ConfigError(f"scheduler={short(scheduler)}: expected a dict of settings (seconds), keys among {valid}")
    for key in scheduler:
        if key not in valid:
            raise ConfigError(f"scheduler.{key}: unknown setting{suggest(key, valid)} (valid fields are {valid})")
    return SchedulerConfig(**scheduler)


def _room_spec(room):
    """The validated room, or None when nothing needs simulating (the fast path)."""
    if room is None:
        return None
    from ..room import RoomSpec

    try:
        spec = RoomSpec.from_config(room)
    except (ValueError, TypeError) as e:  # the room's own checks name the field; one documented type
        msg = str(e)
        raise ConfigError((msg if msg.startswith("room") else f"room: {msg}")[:600]) from None
    if spec.preset == "anechoic" and spec.noise == "none" and spec.echo_gain == 0:
        return None
    return spec
