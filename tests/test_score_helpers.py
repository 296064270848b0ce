"""Building blocks for the scoring tests (no tests here): speech-like audio that Silero detects
with a precise onset, hand-built EpisodeRecords, and a scripted stand-in for the recogniser."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from scipy.signal import lfilter

from fdenv.record import EpisodeRecord, PlayedClip, PlayedTurn
from fdenv.scene.load import scene_from_dict
from fdenv.score.asr import Word

SR = 16000


def _formant(y, fc, bw):
    r = np.exp(-np.pi * bw / SR)
    th = 2 * np.pi * fc / SR
    return lfilter([1 - r], [1, -2 * r * np.cos(th), r * r], y)


def _ramp(d, r):
    w = np.ones(d)
    k = min(d // 2, int(r * SR))
    if k:
        h = 0.5 - 0.5 * np.cos(np.pi * np.arange(k) / k)
        w[:k] = h
        w[d - k:] = h[::-1]
    return w


def babble(seconds: float, seed: int = 0, level: float = 0.3) -> np.ndarray:
    """Speech-like audio: voiced syllables (random pitch contour and three formants) with
    consonant-like noise bursts, starting abruptly with a voiced syllable. The paper profile finds
    its onset within ~10 ms (the first syllable fades in) and its end within ~5 ms, and keeps long
    stretches as one segment."""
    rng = np.random.default_rng(seed)
    n = int(round(seconds * SR))
    out = np.zeros(n)
    pos, first = 0, True
    f0 = rng.uniform(100, 140)
    while pos < n:
        d = int(rng.uniform(0.12, 0.28) * SR)
        k = np.arange(d)
        f = f0 * (1 + 0.15 * np.sin(2 * np.pi * rng.uniform(0.5, 3) * k / SR + rng.uniform(0, 6))) * rng.uniform(0.85, 1.2)
        src = (np.diff(np.floor(np.cumsum(f / SR)), prepend=0) > 0).astype(float)
        src = lfilter([1.0], [1.0, -0.9], src)
        formants = ((rng.uniform(300, 800), 1.0), (rng.uniform(900, 2200), 0.6), (rng.uniform(2300, 3200), 0.3))
        y = sum(_formant(src, F, 80 + 40 * i) * g for i, (F, g) in enumerate(formants))
        y = y / (np.abs(y).max() + 1e-9) * _ramp(d, 0.03)
        if not first and rng.random() < 0.4:
            c = int(rng.uniform(0.03, 0.08) * SR)
            nb = _formant(rng.standard_normal(c), rng.uniform(2500, 5000), 1500)
            y = np.concatenate([nb / (np.abs(nb).max() + 1e-9) * 0.3 * _ramp(c, 0.01), y])
        first = False
        e = min(n, pos + len(y))
        out[pos:e] += y[: e - pos]
        pos = e
    return (out * _ramp(n, 0.005) * level).astype(np.float32)


def track(duration: float, bursts=(), seed: int = 0) -> np.ndarray:
    """A 16 kHz track of ``duration`` s with babble bursts ``[(start_s, length_s), ...]``."""
    x = np.zeros(int(round(duration * SR)), dtype=np.float32)
    for i, (t, d) in enumerate(bursts):
        a = int(round(t * SR))
        b = babble(d, seed=seed * 100 + i)
        x[a:a + len(b)] += b[: max(0, len(x) - a)]
    return x


class ScriptedASR:
    """Stands in for the recogniser: returns the scripted words whose start lies in the audio
    it is given (times on the track's axis, like ``transcribe(..., offset=...)``)."""

    name = "scripted"

    def __init__(self, words=()):
        self.words = [w if isinstance(w, Word) else Word(*w) for w in words]
        self.calls = 0

    def __call__(self, audio, offset):
        self.calls += 1
        end = offset + len(audio) / SR
        return [w for w in self.words if offset <= w.start < end]


TEXT = {"pause": "so I was thinking [pause=1.0] that we could go", "monologue": "first part [trp] second part",
        "final": "what time is it", "interrupt": "wait, what about dinner plans", "ctx": "hello there"}


def make_record(kind: str, turns, assistant: np.ndarray, mic0: np.ndarray | None = None,
                bc_distribution=None, scene_id: str | None = None, seed: int = 0) -> EpisodeRecord:
    """A record with hand-placed turns ``[(label, start, end), ...]`` (a ``pause`` turn's pause is its
    middle second; a ``monologue`` turn gets one TRP in its middle) and the given assistant track."""
    scene_turns, played, clips = [], [], []
    for i, spec in enumerate(turns):
        label, start, end = spec[:3]
        text = spec[3] if len(spec) > 3 else TEXT[label]
        tid = f"t{i}"
        scene_turns.append({"id": tid, "speaker": "Ann", "text": text, "label": label})
        spoken = text.replace(" [pause=1.0]", "").replace(" [trp]", "")
        trps = ()
        if label == "pause":
            mid = (start + end) / 2
            clips += [PlayedClip(tid, 0, "Ann", start, mid - 0.5, "a"), PlayedClip(tid, 1, "Ann", mid + 0.5, end, "b")]
        elif label == "monologue":
            mid = (start + end) / 2
            trps = (mid,)
            clips += [PlayedClip(tid, 0, "Ann", start, mid, "a"), PlayedClip(tid, 1, "Ann", mid + 0.25, end, "b")]
        else:
            clips.append(PlayedClip(tid, 0, "Ann", start, end, spoken))
        played.append(PlayedTurn(tid, "Ann", label, start, end, spoken, trps=trps))
    data = {"id": scene_id or f"test-{kind}", "kind": kind, "speakers": ["Ann"], "turns": scene_turns}
    if bc_distribution is not None:
        data["bc_distribution"] = list(bc_distribution)
    scene = scene_from_dict(data, source="test")
    n = len(assistant)
    return EpisodeRecord(scene=scene, sample_rate=SR, frame_samples=1280, assistant=np.asarray(assistant, np.float32),
                         turns=played, clips=clips, n_frames=n // 1280, seed=seed, mic0=mic0)


# One hand-built scene per dimension: (kind, turns, episode duration)
SCENES = {
    "pause_handling": ("pause", [("pause", 1.0, 5.0)], 10.0),
    "backchannel": ("backchannel", [("monologue", 1.0, 9.0)], 12.0),
    "turn_taking": ("turn_taking", [("final", 1.0, 3.0)], 14.0),
    "interruption": ("interruption", [("final", 1.0, 3.0), ("interrupt", 5.0, 6.5)], 20.0),
}


class RecordEnv(gym.Env):
    """A minimal env that ends after ``steps`` steps and puts ``record`` in the final info, as the
    fdenv env does: for testing the scoring wrappers on hand-built records."""

    observation_space = gym.spaces.Box(-1, 1, (1, 1280), np.float32)
    action_space = gym.spaces.Box(-1, 1, (1280,), np.float32)

    def __init__(self, record, steps: int = 3):
        self.record, self.steps, self.k = record, steps, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.k = 0
        return np.zeros((1, 1280), np.float32), {}

    def step(self, action):
        self.k += 1
        done = self.k >= self.steps
        return np.zeros((1, 1280), np.float32), 0.0, done, False, ({"record": self.record} if done else {})
