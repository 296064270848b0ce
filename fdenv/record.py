"""EpisodeRecord: what happened in one episode, the one contract between simulation and scoring.

The env builds a record at the final step from references to its own buffers (constant time).
Scoring reads records only, so a saved run can be re-scored without simulating again.

Times are seconds on microphone 0's axis (SPEC 1): source time plus the direct-path delay plus
the simulator's filter delay. Without a room the two axes coincide. The assistant track is on
the source axis of the loudspeaker, which is the axis the scoring uses (SPEC 1: scoring runs on
the assistant track).

File format (``save``/``load``): ``<stem>.json`` (everything but audio) and ``<stem>.flac``
(assistant track, 16 kHz); ``<stem>.mic0.flac`` (microphone 0, 16 kHz) when kept.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .audio import resample
from .scene.load import scene_from_dict
from .scene.schema import Scene

RECORD_VERSION = 1
SCORING_RATE = 16000


@dataclass(frozen=True)
class PlayedClip:
    """One rendered text piece as it was played."""

    turn_id: str
    piece: int
    speaker: str
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class PlayedTurn:
    """A scene turn as it was played: first clip start to last clip end, and its TRP times."""

    id: str
    speaker: str
    label: str
    start: float
    end: float
    text: str
    addressee: str | None = None
    gold_answer: str | None = None
    resolves: str | None = None
    trps: tuple[float, ...] = ()


@dataclass
class EpisodeRecord:
    """One episode as scoring sees it: the scene, the played timeline (turns and clips on
    microphone 0's axis), the assistant track and the configuration that affects results.

    Example:
        >>> import tempfile, pathlib, numpy as np
        >>> from fdenv.sim.env import RoomEnv
        >>> env = RoomEnv(scene_set="turn_taking", split="test")
        >>> obs, info = env.reset(seed=0)
        >>> while "record" not in info:
        ...     obs, reward, terminated, truncated, info = env.step(np.zeros(1280, np.float32))
        >>> record = info["record"]
        >>> stem = record.save(pathlib.Path(tempfile.mkdtemp()) / "ep")
        >>> back = EpisodeRecord.load(stem)
        >>> back.turns == record.turns, np.array_equal(back.assistant_16k(), record.assistant_16k())
        (True, True)
    """

    scene: Scene
    sample_rate: int
    frame_samples: int
    assistant: np.ndarray  # float32 (n,), the actions placed per SPEC 1, at sample_rate
    turns: list[PlayedTurn]
    clips: list[PlayedClip]
    n_frames: int
    seed: int | None = None
    config: dict = field(default_factory=dict)  # room, tts, scheduler knobs: what affects results
    versions: dict = field(default_factory=dict)
    privileged: bool = False  # scored with an agent that saw labels (oracle, scripted)
    mic0: np.ndarray | None = None  # microphone 0, for export (FDB's input.wav)
    replay: bool = False  # imported FDB data: fixed input, fixed gold times
    # natural humans' reactions to an intruding assistant: {"kind", "turn_id", "due", "start"}
    reactions: list = field(default_factory=list)

    @property
    def duration(self) -> float:
        return self.n_frames * self.frame_samples / self.sample_rate

    def assistant_16k(self) -> np.ndarray:
        """The assistant track as scoring sees it: 16 kHz, on the 16-bit grid of the saved FLAC,
        so that scoring a live record and re-scoring its saved copy see the same samples.
        Computed once per record (read-only; records do not change after their episode)."""
        return self._scoring_track()[0]

    @property
    def assistant_silent(self) -> bool:
        """The agent never made a sound: scoring has nothing to find (and skips its models)."""
        return self._scoring_track()[1]

    def _scoring_track(self) -> tuple[np.ndarray, bool]:
        memo = self.__dict__.get("_scoring_memo")
        if memo is None or memo[0] is not self.assistant:  # a replaced track is computed anew
            x = resample(self.assistant, self.sample_rate, SCORING_RATE)
            silent = not x.any()
            if not silent:
                x = _to_pcm16(x).astype(np.float32) / np.float32(32768.0)
            x = x.view()  # a read-only view: callers share it, and the track itself stays writable
            x.flags.writeable = False
            memo = (self.assistant, x, silent)
            self.__dict__["_scoring_memo"] = memo
        return memo[1], memo[2]

    # ---- files -------------------------------------------------------------------------
    def meta(self) -> dict:
        """Everything but the audio, as JSON-ready data."""
        return {
            "record_version": RECORD_VERSION,
            "scene_id": self.scene.id,
            "pair_id": self.scene.pair_id,
            "condition": self.scene.condition,
            "seed": self.seed,
            "sample_rate": self.sample_rate,
            "frame_samples": self.frame_samples,
            "n_frames": self.n_frames,
            "privileged": self.privileged,
            "replay": self.replay,
            "config": self.config,
            "versions": self.versions,
            "turns": [asdict(t) for t in self.turns],
            "clips": [asdict(c) for c in self.clips],
            "reactions": self.reactions,
            "scene": self.scene.to_dict(),
        }

    def save(self, stem: str | Path, keep_mic0: bool = True) -> Path:
        import soundfile as sf

        stem = Path(stem)
        stem.parent.mkdir(parents=True, exist_ok=True)
        track = self.assistant_16k()
        # exact; a silent agent's track (the common case) is encoded once per length
        data = _silent_flac(len(track)) if self.assistant_silent else _flac(_to_pcm16(track))
        Path(str(stem) + ".flac").write_bytes(data)
        if keep_mic0 and self.mic0 is not None:
            Path(str(stem) + ".mic0.flac").write_bytes(_flac(_to_pcm16(resample(self.mic0, self.sample_rate, SCORING_RATE))))
        path = Path(str(stem) + ".json")
        path.write_text(json.dumps(self.meta()))
        return path

    @classmethod
    def from_meta(cls, meta: dict, assistant: np.ndarray, mic0: np.ndarray | None = None, rate: int | None = None) -> "EpisodeRecord":
        """Rebuild a record from ``meta()`` data and audio at ``rate`` (default: 16 kHz)."""
        rate = rate or SCORING_RATE
        sr = meta["sample_rate"]
        if rate != sr:
            # Saved audio is 16 kHz; the record's own axis stays in seconds, so only the
            # sample grid changes. Keep frame bookkeeping consistent with the new rate.
            frame = int(round(meta["frame_samples"] * rate / sr))
        else:
            frame = meta["frame_samples"]
        return cls(
            scene=scene_from_dict(meta["scene"], source=f"record {meta['scene_id']}"),
            sample_rate=rate,
            frame_samples=frame,
            assistant=np.asarray(assistant, dtype=np.float32),
            turns=[PlayedTurn(**{**t, "trps": tuple(t.get("trps", ()))}) for t in meta["turns"]],
            clips=[PlayedClip(**c) for c in meta["clips"]],
            n_frames=meta["n_frames"],
            seed=meta.get("seed"),
            config=meta.get("config", {}),
            versions=meta.get("versions", {}),
            privileged=meta.get("privileged", False),
            mic0=None if mic0 is None else np.asarray(mic0, dtype=np.float32),
            replay=meta.get("replay", False),
            reactions=list(meta.get("reactions", [])),
        )

    @classmethod
    def load(cls, stem: str | Path) -> "EpisodeRecord":
        import soundfile as sf

        stem = Path(str(stem).removesuffix(".json"))
        meta_path = Path(str(stem) + ".json")
        if not meta_path.is_file():
            raise FileNotFoundError(f"{meta_path}: no episode record here (expected <stem>.json and <stem>.flac)")
        meta = json.loads(meta_path.read_text())
        audio_path = Path(str(stem) + ".flac")
        if not audio_path.is_file():
            raise FileNotFoundError(f"{audio_path}: the assistant track of {meta_path.name} is missing")
        assistant, _ = sf.read(str(audio_path), dtype="float32")
        mic_path = Path(str(stem) + ".mic0.flac")
        mic0 = sf.read(str(mic_path), dtype="float32")[0] if mic_path.is_file() else None
        return cls.from_meta(meta, assistant, mic0)


def _flac(pcm16: np.ndarray) -> bytes:
    """16 kHz FLAC bytes (encoded in memory, written in one call)."""
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, pcm16, SCORING_RATE, format="FLAC")
    return buf.getvalue()


@functools.lru_cache(maxsize=512)  # a few kB each: the same scenes recur across a sweep
def _silent_flac(n: int) -> bytes:
    return _flac(np.zeros(n, np.int16))


def _to_pcm16(x: np.ndarray) -> np.ndarray:
    # soundfile reads int16 k back as k / 32768: write with the same scale so save/load round-trips.
    return np.clip(np.round(np.asarray(x) * 32768.0), -32768, 32767).astype(np.int16)
