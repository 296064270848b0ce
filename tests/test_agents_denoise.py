"""The cascade's noise suppression in front of its voice-activity detector (``denoise.py``):
overlap-add that returns its input, any chunking alike, stationary noise taken down, speech kept;
the benchmark's counts; and, slow, a real car-cabin episode whose talker the detector hears only
behind it."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv_agents.cascade import CascadeAgent, FixedTranscriber  # noqa: E402
from fdenv_agents.cascade.denoise import HOP, NFFT, NoiseSuppressor  # noqa: E402

from .helpers import benchmark  # noqa: E402

SR = 16000
DELAY = NFFT - HOP


def test_with_unit_gains_overlap_add_returns_the_input_late_by_its_delay(monkeypatch):
    monkeypatch.setattr(NoiseSuppressor, "_gain_applied", lambda self, spectrum: spectrum)
    x = np.random.default_rng(0).standard_normal(SR)
    y = NoiseSuppressor().process(x)
    assert len(y) == len(x)
    # past the first frame's fade-in, the output is the input DELAY samples later
    np.testing.assert_allclose(y[NFFT:], x[NFFT - DELAY : len(x) - DELAY], atol=1e-5)


def test_any_chunking_gives_the_same_output():
    x = np.random.default_rng(1).standard_normal(3 * SR).astype(np.float32)
    whole = NoiseSuppressor().process(x)
    s = NoiseSuppressor()
    cuts = np.cumsum(np.random.default_rng(2).integers(1, 700, size=200))
    parts = [s.process(c) for c in np.split(x, cuts[cuts < len(x)])]
    chunked = np.concatenate(parts)
    assert len(chunked) == len(whole) == (len(x) // HOP) * HOP
    np.testing.assert_array_equal(chunked, whole)


def test_stationary_noise_is_taken_down_after_its_noise_window():
    x = 0.05 * np.random.default_rng(3).standard_normal(4 * SR)
    y = NoiseSuppressor().process(x)
    ratio = np.mean(y[2 * SR :] ** 2) / np.mean(x[2 * SR :] ** 2)
    assert ratio < 0.2  # by 7 dB or more


def bursts(seconds: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Voiced-speech-like bursts (a 150 Hz pulse train's harmonics, 300 ms on, 500 ms off) and
    where they are on."""
    t = np.arange(int(seconds * SR)) / SR
    on = (t % 0.8) < 0.3
    voiced = sum(np.sin(2 * np.pi * 150 * k * t + rng.uniform(0, 2 * np.pi)) / k for k in range(2, 20))
    return 0.1 * voiced * on, on


def test_speech_is_kept_while_the_noise_between_it_is_suppressed():
    rng = np.random.default_rng(4)
    speech, on = bursts(6.0, rng)
    noise = 0.03 * rng.standard_normal(len(speech))
    s = NoiseSuppressor()
    y_mix = s.process(speech + noise)
    late = slice(2 * SR, len(speech) - DELAY)
    out_on, out_off = on[late.start - DELAY : late.stop - DELAY], ~on[late.start - DELAY : late.stop - DELAY]
    y = y_mix[late]
    x = (speech + noise)[late.start - DELAY : late.stop - DELAY]
    kept_gaps = np.mean(y[out_off] ** 2) / np.mean(x[out_off] ** 2)
    kept_bursts = np.mean(y[out_on] ** 2) / np.mean(x[out_on] ** 2)
    # the bursts within 3 dB, the gaps' noise down by 6 dB or more: the bursts stand out more
    assert kept_bursts > 0.5 and kept_gaps < 0.25, (kept_bursts, kept_gaps)
    assert kept_bursts / kept_gaps > 4.0


def test_the_knob_is_validated_and_in_config():
    with pytest.raises(ValueError, match="noise_suppression"):
        CascadeAgent(transcriber=FixedTranscriber(), noise_suppression="krisp")
    assert CascadeAgent(transcriber=FixedTranscriber(), noise_suppression="wiener").config()["noise_suppression"] == "wiener"


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_vad_front_end")


def test_the_benchmark_counts_windows_and_long_silences_inside_clips(bench):
    # 32 ms windows against 80 ms frames: a clip plays in frames 1-40 (0.08-3.28 s); the detector
    # hears speech but for 1.6 s inside it (windows 20-69) and 0.32 s after it (103-112)
    speaking = [False] + [True] * 40 + [False] * 20
    trace = [True] * 125
    trace[20:70] = [False] * 50
    trace[103:113] = [False] * 10
    hit, clip, fa, other, long = bench.measure(trace, speaking, 0.08, 0.032)
    truth = [speaking[int((i + 0.5) * 0.032 / 0.08)] for i in range(125)]
    assert clip == sum(truth) and other == 125 - sum(truth)
    assert hit == sum(t and h for t, h in zip(truth, trace)) and fa == sum(h and not t for t, h in zip(truth, trace))
    assert long == 1  # the 1.6 s inside the clip; the 0.32 s after it is neither long nor inside


def heard_speech(bench, setting: str, scene_id: str) -> float:
    """The share of the talker's clip windows the cascade's detector heard as speech, in the car
    cabin with Kokoro's voices (it listens with a 10 s endpoint and never answers)."""
    from fdenv.sim.env import RoomEnv

    env = RoomEnv(scene_set="turn_taking", split="test", tts="kokoro", room="car_cabin")
    hit, clip, *_ = bench.play_scene(env, bench.traced_agent(setting, transcriber=FixedTranscriber()), scene_id)
    return hit / clip


@pytest.mark.slow
def test_in_the_car_cabin_the_detector_hears_the_talker_only_behind_noise_suppression(bench):
    # Road noise 5 dB(A) under the speech: without suppression Silero hears 13 % of this talker's
    # clip time, with it 88 % (the quiet room's detector hears 90 %, benchmarks/bench_vad_front_end.py)
    pytest.importorskip("kokoro_onnx")
    off, on = (heard_speech(bench, setting, "turn_taking-0085") for setting in ("off", "wiener"))
    assert off < 0.3 and on > 0.7, (off, on)

