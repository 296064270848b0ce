"""Speech enhancement before the cascade's recogniser (DeepFilterNet3 through its C runtime)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv_agents.cascade import CascadeAgent, FixedTranscriber  # noqa: E402
from fdenv_agents.cascade.enhance import SpeechEnhancer  # noqa: E402

SR = 16000


def voiced_bursts(seconds: float = 3.0, snr_db: float = 5.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(noisy, clean, mask of the gaps): a voiced-speech-like signal (a 140 Hz harmonic series,
    formant-shaped, in 300 ms bursts) in white noise at ``snr_db`` over the bursts."""
    t = np.arange(int(seconds * SR)) / SR
    clean = sum(np.sin(2 * np.pi * 140 * k * t) / k for k in range(1, 25) if 140 * k < 4000)
    on = (t % 0.6) < 0.3
    clean = (0.2 * clean / np.abs(clean).max() * on).astype(np.float32)
    noise = np.random.default_rng(seed).standard_normal(len(t)).astype(np.float32)
    speech_power = np.mean(clean[on] ** 2)
    noise *= np.sqrt(speech_power / 10 ** (snr_db / 10))
    gaps = ~on & (t > 0.5)  # after the model's first half second, away from the bursts' edges
    gaps &= ((t % 0.6) > 0.35) & ((t % 0.6) < 0.55)
    return clean + noise, clean, gaps


def level_db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.asarray(x, np.float64) ** 2) + 1e-20))


@pytest.mark.parametrize("attenuation_db", [6.0, 12.0])
def test_noise_is_suppressed_by_at_most_the_limit_and_the_speech_kept_in_time(attenuation_db):
    noisy, clean, gaps = voiced_bursts()
    out = SpeechEnhancer(attenuation_db)(noisy)
    assert out.shape == noisy.shape and out.dtype == np.float32
    drop = level_db(noisy[gaps]) - level_db(out[gaps])
    assert attenuation_db - 4 < drop < attenuation_db + 2, drop  # the limit holds, and is reached
    # time-aligned: the output follows the clean bursts at no lag (the model's 30 ms delay removed)
    lags = np.arange(-800, 801, 16)
    env_in, env_out = np.abs(clean), np.abs(out)
    corr = [np.dot(env_in[800:-800], env_out[800 + k:len(out) - 800 + k]) for k in lags]
    assert abs(lags[int(np.argmax(corr))]) <= 16
    # the bursts keep their level within a few dB of the clean signal's
    bursts = np.abs(clean) > 0
    assert abs(level_db(out[bursts]) - level_db(clean[bursts])) < 3


def test_enhancement_is_deterministic_and_depends_on_the_audio_alone():
    noisy, _, _ = voiced_bursts(seconds=1.5)
    other, _, _ = voiced_bursts(seconds=2.0, seed=3)
    enhancer = SpeechEnhancer(12)
    first = enhancer(noisy)
    enhancer(other)  # a fresh model state per call: what came before does not matter
    assert np.array_equal(first, enhancer(noisy))
    assert enhancer(np.zeros(0, np.float32)).shape == (0,)


@pytest.mark.parametrize("bad", [0, -3, 101, True, "12"])
def test_a_bad_attenuation_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="attenuation_db"):
        SpeechEnhancer(bad)


def test_the_cascade_knob_reaches_the_recogniser_and_its_config():
    from fdenv_agents.cascade.asr import WhisperTranscriber

    agent = CascadeAgent(enhance_db=12)
    assert agent.config()["enhance_db"] == 12.0
    assert isinstance(agent.transcriber, WhisperTranscriber) and agent.transcriber.enhancer.attenuation_db == 12.0
    assert agent.config()["asr"].startswith("faster-whisper:tiny.en") and \
        agent.config()["asr"].endswith("+deepfilternet3:12dB")
    for off in (None, 0):
        plain = CascadeAgent(enhance_db=off)
        assert plain.config()["enhance_db"] is None and plain.transcriber.enhancer is None
        assert "deepfilternet" not in plain.config()["asr"]
    with pytest.raises(ValueError, match="enhance_db"):
        CascadeAgent(transcriber=FixedTranscriber(), enhance_db=-1)


def test_both_decodes_of_a_turn_share_one_enhancement():
    """``transcribe`` and ``transcribe_words`` of the same audio enhance it once; other audio anew;
    the decoder hears the enhanced audio, not the microphone's."""
    from types import SimpleNamespace

    from fdenv_agents.cascade.asr import WhisperTranscriber

    class Counting:
        name = "counting"

        def __init__(self):
            self.calls = 0

        def __call__(self, audio):
            self.calls += 1
            return audio * 0.5

    heard = []

    class Decoder:
        def transcribe(self, audio, **options):
            heard.append(audio.copy())
            return iter([SimpleNamespace(text=" Hello.", compression_ratio=1.0,
                                         words=[SimpleNamespace(word=" Hello.", probability=0.9)])]), None

    recogniser = WhisperTranscriber()
    recogniser._model, recogniser.enhancer = Decoder(), Counting()
    audio = np.full(SR, 0.1, np.float32)
    assert recogniser.transcribe(audio) == "Hello."
    assert recogniser.transcribe_words(audio) == [("Hello.", 0.9)]
    assert recogniser.enhancer.calls == 1
    recogniser.transcribe(audio * 2)
    assert recogniser.enhancer.calls == 2
    assert all(np.allclose(h, a * 0.5) for h, a in zip(heard, (audio, audio, audio * 2)))


def test_the_turn_detector_enhances_as_its_checkpoint_was_collected():
    from fdenv.train.turn_end import N_FEATURES, TurnEndModel
    from fdenv_agents.cascade import TurnDetectorAgent

    collected = TurnEndModel(np.zeros(N_FEATURES), 0.0, meta={"enhance_db": 12.0})
    assert TurnDetectorAgent(turn_end_model=collected).config()["enhance_db"] == 12.0
    assert TurnDetectorAgent(turn_end_model=collected, enhance_db=0).config()["enhance_db"] is None
    plain = TurnEndModel(np.zeros(N_FEATURES), 0.0)
    assert TurnDetectorAgent(turn_end_model=plain).config()["enhance_db"] is None


def test_each_turn_end_model_hears_its_episodes_as_its_transcripts_were_made():
    """With a single-user model collected on enhanced turns and a group model on plain ones, the
    recogniser enhances in the single user's episodes and not in the group's; the knob sets both."""
    from fdenv.train.turn_end import N_FEATURES, TurnEndModel
    from fdenv_agents.cascade import TurnDetectorAgent

    single = TurnEndModel(np.zeros(N_FEATURES), 0.0, meta={"enhance_db": 12.0})
    group = TurnEndModel(np.zeros(N_FEATURES), 0.0)
    agent = TurnDetectorAgent(turn_end_model=single, group_turn_end_model=group)
    assert agent.config()["enhance_db"] == 12.0 and agent.config()["group_enhance_db"] is None
    for duty, enhanced in (("People near you are talking to each other, and sometimes to you.", False), ("", True),
                           ("You are Aria.", False)):
        agent.reset(duty, 16000, 1280)
        assert agent.in_group is not enhanced
        assert (agent.transcriber.enhancer is not None) is enhanced
    both = TurnDetectorAgent(turn_end_model=single, group_turn_end_model=group, enhance_db=6)
    assert both.config()["group_enhance_db"] == 6.0
    both.reset("You are Aria.", 16000, 1280)
    assert both.transcriber.enhancer.attenuation_db == 6.0


@pytest.fixture
def enhancement_cache(tmp_path, monkeypatch):
    """The enhancer's cache in a fresh folder, its memory tier empty, and a count of the model's runs."""
    from fdenv.render.cache import ClipCache
    from fdenv_agents.cascade import enhance

    monkeypatch.setattr(enhance, "CACHE_DIR", tmp_path)
    ClipCache.clear_memory()
    runs = []
    real = SpeechEnhancer._enhance
    monkeypatch.setattr(SpeechEnhancer, "_enhance", lambda self, x: runs.append(len(x)) or real(self, x))
    yield tmp_path, runs
    ClipCache.clear_memory()


def test_a_turn_heard_again_is_read_from_the_cache_byte_for_byte(enhancement_cache):
    from fdenv.render.cache import ClipCache

    folder, runs = enhancement_cache
    noisy, _, _ = voiced_bursts(seconds=1.5)
    fresh = SpeechEnhancer(12, cache=False)(noisy)
    assert runs == [len(noisy)] and not list(folder.rglob("*.enhanced"))  # cache=False writes nothing
    first = SpeechEnhancer(12)(noisy)
    assert len(runs) == 2 and len(list(folder.rglob("*.enhanced"))) == 1
    ClipCache.clear_memory()  # as another process would: from the disk
    again = SpeechEnhancer(12)(noisy)
    assert len(runs) == 2, "the second hearing ran the model again"
    assert again.tobytes() == first.tobytes() == fresh.tobytes() and again.flags.writeable
    again[:] = 0  # the caller's copy: the cache keeps its own
    assert SpeechEnhancer(12)(noisy).tobytes() == fresh.tobytes()


def test_the_cache_key_follows_the_samples_and_the_limit(enhancement_cache):
    _, runs = enhancement_cache
    noisy, _, _ = voiced_bursts(seconds=1.0)
    nudged = noisy.copy()
    nudged[-1] = np.nextafter(nudged[-1], np.float32(1))  # one sample, one ulp
    out = [SpeechEnhancer(db)(x) for db, x in ((12, noisy), (6, noisy), (12, nudged), (12, noisy[:-160]))]
    assert len(runs) == 4, "a different limit, sample or length read another input's enhancement"
    assert not np.array_equal(out[0], out[1])
    assert len(out[3]) == len(noisy) - 160


def test_a_changed_cache_file_is_discarded_and_the_turn_enhanced_again(enhancement_cache):
    from fdenv.errors import CacheWarning
    from fdenv.render.cache import ClipCache

    folder, runs = enhancement_cache
    noisy, _, _ = voiced_bursts(seconds=1.0)
    first = SpeechEnhancer(12)(noisy)
    (path,) = folder.rglob("*.enhanced")
    blob = bytearray(path.read_bytes())
    blob[-4:] = b"\x00\x00\xc0\x7f"  # the last sample made NaN
    path.write_bytes(bytes(blob))
    ClipCache.clear_memory()
    with pytest.warns(CacheWarning, match="discarded"):
        again = SpeechEnhancer(12)(noisy)
    assert len(runs) == 2 and again.tobytes() == first.tobytes()
