"""One episode's state and its frame loop, built by a live or a replay constructor.

``Episode.live`` renders the scene's clips, places them in the room (impulse responses, echo,
noise) and lets the reactive scheduler (SPEC 3) decide when each plays; ``Episode.replay`` plays a
fixed FDB recording with fixed gold times (``fdenv.sim.replay``). Both then run the same loop:
``start()`` gives frame 0, ``play(action)`` places the assistant's frame, advances the scheduler,
the microphones and the labels by one frame. ``record()`` is the EpisodeRecord. The env
(``fdenv.sim.env``) keeps only the Gymnasium surface around it.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft as sfft

from ..record import EpisodeRecord, PlayedClip, PlayedTurn
from ..scene.schema import Scene
from .behaviour import keyed_seed, make_behaviour
from .detector import ActivityDetector, frame_energy
from .labels import Labeler
from .scheduler import Scheduler, SchedulerConfig, in_samples

try:  # the ufunc itself: np.clip's Python wrapper costs twice a frame's clipping
    from numpy._core.umath import clip as _clip
except ImportError:  # pragma: no cover - numpy < 2
    _clip = np.clip

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
NOISE_BLOCK = 16  # frames of noise added to the microphone buffer at a time
# The room's noise is made once per episode for this long and looped. Its length is an FFT length,
# so the diffuse noise, synthesised circularly, joins itself without a seam; 30 s is longer than
# most episodes, and making noise for the whole of a long one cost more than the rest of its reset.
NOISE_LOOP_S = 30.0
MIC_PEAK = 0.9  # what all talkers together plus the noises can reach at the microphones, at most


def abs_peak(x: np.ndarray) -> float:
    """max |x| (NaN if any is NaN): one reduction, cheaper than max() and min() on a frame."""
    return np.maximum.reduce(np.abs(x), axis=None)


class Episode:
    """The state of one episode (see the module docstring). ``meta``: what the record carries
    besides the audio and the timeline (``config``, ``versions``). ``previous``: the env's last
    episode, whose buffers this one reuses (zeroing only what it wrote: fresh ``np.zeros`` pages
    are faulted in one frame at a time during ``step``, which cost more than the rest of a room step)."""

    def __init__(self, scene: Scene, sample_rate: int, frame_samples: int, n_mics: int, seed: int,
                 sched, labeler: Labeler, cap: int, meta: dict, replay: bool, previous: "Episode | None" = None):
        self.scene, self.sample_rate, self.frame_samples, self.seed = scene, sample_rate, frame_samples, seed
        self.sched, self.labeler, self.meta, self.replay = sched, labeler, meta, replay
        self.detector = ActivityDetector(frame_samples, sample_rate)
        old = None if previous is None else previous.mic
        if old is not None and old.shape[0] == n_mics and old.shape[1] >= cap:
            used = min(old.shape[1], max(previous.used, (previous.k + 2) * previous.frame_samples))
            old[:, :used] = 0
            previous.assistant[:used] = 0
            self.mic, self.assistant, self.cap = old, previous.assistant, old.shape[1]
            previous.mic = previous.assistant = None  # this episode owns them now
        else:
            self.cap = cap
            self.mic = np.zeros((n_mics, cap), np.float32)
            self.assistant = np.zeros(cap, np.float32)
        self.used = 0  # samples of the buffers written beyond the current frame (clips, replayed input)
        self.delays = {s.name: 0 for s in scene.speakers}  # source -> microphone 0, in samples
        self.played_turns: list[PlayedTurn] = []
        self.played_clips: list[PlayedClip] = []
        self.k = 0  # the last frame returned
        self.clipped = 0  # samples of the actions clipped to [-1, 1]
        self.mic_clipped = 0  # microphone samples clipped at full scale (reported at the end)
        # live episodes only
        self.clips_audio: list[list[np.ndarray]] = []
        self.clip_keys: list[list[str]] = []
        self.room = None
        self.doa: dict | None = None
        self.echo = None
        self.noise: np.ndarray | None = None
        self.self_noise: np.ndarray | None = None
        self.mic_gain = np.float32(1.0)
        self.noise_peak = 0.0  # what the noises can add to a frame at most (see _mix)
        self.talker_peaks: dict[str, float] = {}  # each talker's loudest sample at the microphones
        self._hot: list[tuple[int, int]] = []  # where a mix may go over full scale (see _mix)
        self._noise_to = 0  # the noises are in the microphone buffer up to this sample (see _add_noise)
        self.extra_audio: dict = {}  # (speaker, text) -> (clip, cache key): unscripted phrases
        self._placed = 0  # scheduler clips already mixed into the microphone buffer
        self._extras_placed = 0  # ... and unscripted events (backchannels, competing starts)
        self._turns_seen = 0

    # ---- constructors ---------------------------------------------------------------------
    @classmethod
    def live(cls, scene: Scene, renderer, room_spec, sched_cfg: SchedulerConfig, sample_rate: int,
             frame_samples: int, n_mics: int, seed: int, meta: dict, previous: "Episode | None" = None,
             behaviour: str = "paper", room_seed: int | None = None) -> "Episode":
        """A reactive episode: the scene's clips through TTS (cached), the room when one is set
        (its geometry from ``room_seed`` when given, else from ``seed`` and the scene), the humans
        of the ``behaviour`` profile (``fdenv.sim.behaviour``)."""
        from ..render import turn_clips, voice_map
        from .behaviour import unscripted_clips

        sr, N = sample_rate, frame_samples
        clips, keys = [], []
        levels = {sp.name: sp.level_db for sp in scene.speakers if sp.level_db}
        for turn, pieces in zip(scene.turns, turn_clips(scene, voice_map(scene, renderer))):
            db = levels.get(turn.speaker) if turn.label != "duty" else None
            gain = None if db is None else np.float32(10 ** (db / 20))
            rendered = renderer.turn([text for text, _ in pieces], pieces[0][1])  # one utterance per turn
            clips.append([p.audio if gain is None else p.audio * gain for p in rendered])
            keys.append([p.key + ("" if db is None else f":level{db:g}") for p in rendered])
        durations = [[len(c) for c in turn] for turn in clips]
        expected = sum(map(sum, durations)) + int(sr * (30 + 25 * len(scene.turns)))
        cap = int(math.ceil(expected / N) + 2) * N
        humans = make_behaviour(behaviour, sched_cfg, seed, scene.id)
        ep = cls(scene, sr, N, n_mics, seed, None, Labeler(scene, sr, N, sched_cfg, humans), cap, meta, replay=False,
                 previous=previous)
        ep.clips_audio, ep.clip_keys = clips, keys
        if behaviour == "natural":
            ep.extra_audio = {(sp, text): (renderer.clip(text, voice), renderer.key(text, voice))
                              for sp, text, voice in unscripted_clips(scene, voice_map(scene, renderer))}
        if room_spec is not None:
            ep._prepare_room(room_spec, renderer, room_seed)
        ep.sched = Scheduler(scene, durations, sr, N, sched_cfg, ep.delays, humans,
                             {k: len(v[0]) for k, v in ep.extra_audio.items()})
        return ep

    @classmethod
    def replay(cls, scene: Scene, audio16k: np.ndarray, gold: dict, sched_cfg: SchedulerConfig, sample_rate: int,
               frame_samples: int, seed: int, meta: dict, previous: "Episode | None" = None) -> "Episode":
        """Replay mode (SPEC 3): a fixed recording at the microphone, fixed gold times, no reactions."""
        from ..audio import resample
        from ..windows import close_of
        from .replay import FixedSchedule

        N, sr = frame_samples, sample_rate
        s = in_samples(sr)
        audio = resample(audio16k, 16000, sr)
        turns, clips = list(gold["turns"]), list(gold["clips"])
        ends = [len(audio)] + [close_of(t.label, s(t.start), s(t.end), sched_cfg, s) for t in turns]
        end = max(ends) + s(sched_cfg.tail_s)
        sched = FixedSchedule(math.ceil(end / N))
        ep = cls(scene, sr, N, 1, seed, sched, Labeler(scene, sr, N, sched_cfg), (sched.n_frames + 2) * N, meta,
                 replay=True, previous=previous)
        ep.mic[0, : len(audio)] = audio
        ep.used = len(audio)
        if not abs_peak(audio) <= 1.0:
            ep._hot.append((0, len(audio)))
        ep.played_turns, ep.played_clips = turns, clips
        index = {t.id: i for i, t in enumerate(scene.turns)}
        for t in turns:
            ep.labeler.add_turn(index[t.id], s(t.start), s(t.end), [s(x) for x in t.trps])
        for c in clips:
            ep.labeler.add_clip(s(c.start), s(c.end), c.speaker)
        return ep

    # ---- room ---------------------------------------------------------------------------------
    def _prepare_room(self, spec, renderer, room_seed: int | None = None) -> None:
        """Impulse responses, convolved clips, echo path and noise for this episode (cached per
        scene, room and seed). Gold times move to microphone 0's axis by each speaker's delay."""
        from ..room import active_speech_level_dba, build_room

        scene, sr, N = self.scene, self.sample_rate, self.frame_samples
        # A new geometry for every (seed, scene): the runner resets every scene with the run's seed.
        seed = keyed_seed(self.seed, scene.id, "room") if room_seed is None else int(room_seed)
        room = build_room(spec, [s.name for s in scene.speakers], seed=seed, sample_rate=sr)
        self.room = room
        self.delays = {name: int(round(room.delay_s(name) * sr)) for name in self.delays}
        self.echo = room.echo_path(N)
        self.doa = {name: room.doa(name) for name in self.delays} if room.simulated else None
        wet = [room.convolve(t.speaker, clip, key=self.clip_keys[i][p])[0]
               for i, t in enumerate(scene.turns) for p, clip in enumerate(self.clips_audio[i])]
        level = active_speech_level_dba(np.concatenate(wet), sr) if spec.noise != "none" or spec.noise_sources else None
        if spec.noise not in ("none", "self") or spec.noise_sources:
            # One loop of noise, played round and round (see NOISE_LOOP_S).
            loop = sfft.next_fast_len(round(NOISE_LOOP_S * sr), real=True)
            self.noise = room.noise(loop, level, babble=lambda n, seed: _babble(renderer, n, seed))
        if spec.noise != "none" and np.isfinite(level):  # every microphone hisses a little
            from ..room.noise import SELF_NOISE_DB, self_noise

            self.self_noise = self_noise(self.mic.shape[0], 10 * sr // N * N, level - SELF_NOISE_DB, seed, sr)
        # Levels calibrated so that the microphones never clip on the humans and the noise: a fixed
        # gain for the episode (a recording engineer's headroom), below 1 only when needed. Which
        # humans overlap is decided while the episode plays (natural humans overlap, backchannel
        # and react to the assistant), so the bound is what any overlap could reach: the sum over
        # the talkers of each one's loudest sample at any microphone (scripted turns and every
        # unscripted phrase), plus the noises' peaks. MIC_PEAK's margin covers a talker's own
        # reverberant tail under their next clip.
        self.talker_peaks = talker_peaks(room, scene, self.clips_audio, self.clip_keys, self.extra_audio)
        self.noise_peak = sum(float(abs_peak(x)) for x in (self.noise, self.self_noise) if x is not None)
        peak = sum(self.talker_peaks.values()) + self.noise_peak
        self.mic_gain = np.float32(min(1.0, MIC_PEAK / peak)) if peak > 0 else np.float32(1.0)
        if self.noise is not None and self.self_noise is not None and self.noise.shape[1] % self.self_noise.shape[1] == 0:
            # One loop of both noises (the self-noise's loop tiles the room's): the steps then add
            # one noise block instead of two.
            merged = self.noise.copy()  # (the room's noise may be cached)
            merged.reshape(merged.shape[0], -1, self.self_noise.shape[1])[...] += self.self_noise[:, None, :]
            self.noise, self.self_noise = merged, None

    # ---- the frame loop ---------------------------------------------------------------------
    def start(self) -> tuple[np.ndarray, dict]:
        """Frame 0 at the microphones and its labels."""
        N = self.frame_samples
        return self._advance(0, self.assistant[:N])

    def stage(self, action: np.ndarray) -> float:
        """Write the action of the next ``play`` into the assistant track and return its frame's
        energy (``frame_energy``): the env's clip check reads it, then ``play(action, energy)``
        goes on from the staged frame (the detector's input, without a second pass)."""
        N = self.frame_samples
        lo = (self.k + 1) * N
        if lo + 2 * N > self.cap:
            self._grow()
        frame = self.assistant[lo : lo + N]
        frame[:] = action
        return frame_energy(frame)

    def play(self, action: np.ndarray, energy: float | None = None) -> tuple[np.ndarray, dict, bool]:
        """The k-th action plays during frame k+1 (SPEC 1): place it, advance one frame, return
        frame k+1 at the microphones, its labels, and whether the episode is over. ``energy``:
        ``stage(action)``'s result, when that action was staged (the frame is in place)."""
        N = self.frame_samples
        k = self.k + 1
        lo = k * N
        if energy is None:
            if lo + 2 * N > self.cap:
                self._grow()
            self.assistant[lo : lo + N] = action
        obs, labels = self._advance(k, self.assistant[lo : lo + N], energy)
        self.k = k
        n_frames = self.sched.n_frames
        return obs, labels, n_frames is not None and k + 1 >= n_frames

    def _advance(self, j: int, frame: np.ndarray, energy: float | None = None) -> tuple[np.ndarray, dict]:
        """Everything that happens in frame j, once the assistant's frame j is known: frame j at
        the microphones (a copy) and its labels."""
        det = self.detector
        active = det.update(frame, energy)
        onset = bool(det.onsets) and det.onsets[-1] == j
        sched = self.sched
        sched.advance(j, det.loud, active, onset)
        if len(sched.clips) > self._placed or len(sched.extras) > self._extras_placed:
            self._place_new()
        N = self.frame_samples
        mic = self.mic[:, j * N : (j + 1) * N]
        heard = None
        if self.room is not None:  # noise, then the echo of the assistant's frame j, then the gain
            if self._noise_to <= j * N and (self.noise is not None or self.self_noise is not None):
                self._add_noise(j * N)
            heard = self.echo.added(frame, mic, nonzero=det.energy > 0.0, gain=self.mic_gain)
        echo = heard is not None
        if echo:
            obs, peak = heard
        else:  # (contiguous: checked faster than the buffer's frame, whose rows lie apart)
            obs, peak = mic.copy(), None
            if self.mic_gain != 1.0:
                obs *= self.mic_gain
        check = echo
        if self._hot:
            self._hot = [h for h in self._hot if h[1] > j * N]
            check = check or any(a < (j + 1) * N for a, _ in self._hot)
        if check:
            if peak is None:
                peak = abs_peak(obs)
            if not peak <= 1.0:  # counted: levels are meant never to clip
                self.mic_clipped += int(np.count_nonzero(np.abs(obs) > 1.0))
                _clip(obs, -1.0, 1.0, out=obs)
        if echo or self.mic_gain != 1.0 or check:
            # Only microphone 0 is kept (the record's track); the other rows of the buffer are
            # never read again, so they keep the humans and noise alone.
            mic[0] = obs[0]
        labels = self.labeler.frame(j, active, onset)
        if self.doa is not None:
            labels["doa"] = dict(self.doa)  # fresh per step: users keep what they get
        return obs, labels

    def _add_noise(self, lo: int) -> None:
        """Add the noises (each looped over its own length) to the microphones for the next
        ``NOISE_BLOCK`` frames from sample ``lo``: a few large additions instead of two small ones
        every frame. Later frames get their clips, echo and gain on top (the same sum)."""
        hi = min(lo + NOISE_BLOCK * self.frame_samples, self.cap)
        for noise in (self.noise, self.self_noise):
            if noise is None:
                continue
            L, a = noise.shape[1], lo
            while a < hi:
                b = min(hi, a + L - a % L)  # up to the end of the block or of the noise's loop
                self.mic[:, a:b] += noise[:, a % L : a % L + (b - a)]
                a = b
        self._noise_to = hi
        self.used = max(self.used, hi)  # (a reused buffer is zeroed up to here)

    def _place_new(self) -> None:
        sched, scene = self.sched, self.scene
        sr = self.sample_rate
        while self._turns_seen < len(sched.turns):
            st = sched.turns[self._turns_seen]
            turn = scene.turns[st.index]
            d = self.delays[turn.speaker]
            self.labeler.add_turn(st.index, st.start + d, st.end + d, [x + d for x in st.trps])
            self.played_turns.append(PlayedTurn(
                id=turn.id, speaker=turn.speaker, label=turn.label, start=(st.start + d) / sr,
                end=(st.end + d) / sr, text=turn.spoken_text, addressee=turn.addressee,
                gold_answer=turn.gold_answer, resolves=turn.resolves, trps=tuple((x + d) / sr for x in st.trps),
            ))
            self._turns_seen += 1
        for c in sched.clips[self._placed :]:
            turn = scene.turns[c.turn]
            audio = self.clips_audio[c.turn][c.piece]
            d = self.delays[turn.speaker]
            if self.room is not None:
                audio = self.room.convolve(turn.speaker, audio, key=self.clip_keys[c.turn][c.piece])
            else:
                audio = audio[None, :]
            self._mix(c.start, audio)
            self.labeler.add_clip(c.start + d, c.start + d + c.length, turn.speaker)
            self.played_clips.append(PlayedClip(turn.id, c.piece, turn.speaker, (c.start + d) / sr,
                                                (c.start + d + c.length) / sr, turn.pieces[c.piece].text))
        self._placed = len(sched.clips)
        for x in sched.extras[self._extras_placed :]:
            self._place_extra(x)
        self._extras_placed = len(sched.extras)

    def _mix(self, start: int, audio: np.ndarray) -> None:
        """Add ``audio`` ``(n_mics, n)`` into the microphones from sample ``start``. Besides it only
        the noises (at most ``noise_peak``; some may be in already) and the echo are added, then the
        gain (at most 1) applies: so a frame without echo can only go over full scale where a mix
        plus the noises' peak does. Noted here once per clip, so that the other steps skip their full-scale check."""
        end = start + audio.shape[1]
        while end > self.cap:
            self._grow()
        region = self.mic[:, start:end]
        region += audio
        self.used = max(self.used, end)
        if not abs_peak(region) + self.noise_peak <= 1.0:
            self._hot.append((start, end))

    def _place_extra(self, x) -> None:
        """A backchannel or a competing start (cut where its speaker drops out, with a 30 ms fade)."""
        sr = self.sample_rate
        audio, key = self.extra_audio[(x.speaker, x.text)]
        if x.length < len(audio):
            fade = min(int(0.03 * sr), x.length)
            audio = audio[: x.length].copy()
            audio[x.length - fade :] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
            key = f"{key}:cut{x.length}"
        audio = self.room.convolve(x.speaker, audio, key=key) if self.room is not None else audio[None, :]
        self._mix(x.start, audio)
        d = self.delays[x.speaker]
        start, stop = (x.start + d) / sr, (x.start + d + x.length) / sr
        self.labeler.add_extra(x.id, x.speaker, x.label, x.start + d, x.start + d + x.length)
        self.played_turns.append(PlayedTurn(id=x.id, speaker=x.speaker, label=x.label, start=start, end=stop,
                                            text=x.text, resolves=x.resolves))
        self.played_clips.append(PlayedClip(x.id, 0, x.speaker, start, stop, x.text))

    def _grow(self) -> None:
        extra = self.cap
        self.mic = np.concatenate([self.mic, np.zeros((self.mic.shape[0], extra), np.float32)], axis=1)
        self.assistant = np.concatenate([self.assistant, np.zeros(extra, np.float32)])
        self.cap += extra

    def record(self, n_frames: int | None = None) -> EpisodeRecord:
        """The EpisodeRecord of the first ``n_frames`` frames (all returned so far by default);
        its tracks are copies (the buffers go on to the next episode)."""
        n_frames = self.k + 1 if n_frames is None else n_frames
        n = n_frames * self.frame_samples
        return EpisodeRecord(
            scene=self.scene,
            sample_rate=self.sample_rate,
            frame_samples=self.frame_samples,
            assistant=self.assistant[:n].copy(),
            turns=self.played_turns,
            clips=self.played_clips,
            n_frames=n_frames,
            seed=self.seed,
            config=self.meta["config"],
            versions=self.meta["versions"],
            mic0=self.mic[0, :n].copy(),
            replay=self.replay,
            reactions=self._reactions(),
        )

    def _reactions(self) -> list[dict]:
        """The natural humans' reactions to an intruding assistant, on microphone 0's axis."""
        out = []
        sr = self.sample_rate
        for r in getattr(self.sched, "reactions", []):
            turn = self.scene.turns[r.turn]
            d = self.delays[turn.speaker]
            out.append({"kind": r.kind, "turn_id": turn.id, "due": (r.at + d) / sr,
                        "start": None if r.start is None else (r.start + d) / sr})
        return out


def talker_peaks(room, scene: Scene, clips: list[list[np.ndarray]], keys: list[list[str]],
                 extra_audio: dict) -> dict[str, float]:
    """Each talker's loudest sample at any microphone of ``room``, over their scripted clips and
    the unscripted phrases they may say (``extra_audio``: (speaker, text) -> (clip, key))."""
    peaks = {sp.name: 0.0 for sp in scene.speakers}
    for i, turn in enumerate(scene.turns):
        for p, clip in enumerate(clips[i]):
            if clip.size:
                peaks[turn.speaker] = max(peaks[turn.speaker], float(abs_peak(room.convolve(turn.speaker, clip, key=keys[i][p]))))
    for (speaker, _), (clip, key) in extra_audio.items():
        if clip.size:
            peaks[speaker] = max(peaks[speaker], float(abs_peak(room.convolve(speaker, clip, key=key))))
    return peaks


def _babble(renderer, n: int, seed: int) -> list[np.ndarray]:
    """Babble talkers: extra TTS voices reading unrelated sentences (DESIGN: noise)."""
    rng = np.random.default_rng(seed)
    voices = renderer.voices
    order = rng.permutation(len(BABBLE_TEXTS))
    return [renderer.clip(BABBLE_TEXTS[order[i % len(order)]], voices[(i + int(order[0])) % len(voices)])
            for i in range(n)]
