"""Malformed actions get a clear ValueError (SPEC 1); out-of-range samples are clipped and counted."""

import numpy as np
import pytest

from fdenv.sim.env import RoomEnv

from .helpers import scene

SC = scene([{"speaker": "Ann", "text": "Hello, can you hear me?", "label": "final"}], kind="turn_taking")


@pytest.fixture
def env():
    e = RoomEnv(scene=SC)
    e.reset(seed=0)
    return e


@pytest.mark.parametrize("action,match", [
    (np.zeros(1279, np.float32), r"shape \(1280,\)"),
    (np.zeros((1, 1280), np.float32), r"shape \(1280,\)"),
    (np.zeros(2560, np.float32), r"shape \(1280,\)"),
    (np.zeros(1280, np.int16), "scale by 1/32768"),
    (np.zeros(1280, np.int32), "scale by 1/32768"),
    (np.zeros(1280, bool), "floating-point"),
    (np.full(1280, np.nan, np.float32), "NaN or inf"),
    (np.r_[np.zeros(1279), np.inf].astype(np.float32), "NaN or inf"),
    (np.r_[np.zeros(1279), -np.inf], "NaN or inf"),
    ([0.0] * 10, r"shape \(1280,\)"),
], ids=["short", "2d", "long", "int16", "int32", "bool", "nan", "inf", "-inf64", "list"])
def test_bad_actions(env, action, match):
    with pytest.raises(ValueError, match=match):
        env.step(action)
    # The env is still usable after a rejected action.
    obs, *_ = env.step(np.zeros(1280, np.float32))
    assert obs.shape == (1, 1280)


def test_clipping_is_counted_and_applied(env):
    a = np.zeros(1280, np.float64)
    a[:10] = 1.5
    a[10:13] = -2.0
    obs, _, _, _, info = env.step(a)
    assert info["clipped_samples"] == 13
    assert env.episode.assistant[1280:1293].tolist() == [1.0] * 10 + [-1.0] * 3


def test_clipping_is_judged_in_the_callers_precision(env):
    a = np.zeros(1280, np.float64)
    a[0] = 1e39  # finite in float64 (inf in float32): clipped, not rejected as inf
    a[1:6] = 1.00000001  # > 1 in float64 (1.0 in float32): counted
    _, _, _, _, info = env.step(a)
    assert info["clipped_samples"] == 6 and env.episode.assistant[1280:1286].tolist() == [1.0] * 6


def test_a_float32_sample_just_over_full_scale_alone_in_a_quiet_frame_is_clipped(env):
    # The frame's energy is just over 1: the least a frame with a sample over 1 can have.
    a = np.full(1280, 1e-6, np.float32)
    a[7] = np.nextafter(np.float32(1), np.float32(2))
    _, _, _, _, info = env.step(a)
    assert info["clipped_samples"] == 1 and env.episode.assistant[1280 + 7] == 1.0
    a[7] = 0.999  # energy 0.998: over the quick check's 0.99, so looked at sample by sample; nothing clipped
    _, _, _, _, info = env.step(a)
    assert info["clipped_samples"] == 0 and env.episode.assistant[2 * 1280 + 7] == np.float32(0.999)


def test_float64_and_float16_accepted(env):
    for dtype in (np.float64, np.float16):
        obs, _, _, _, info = env.step(np.full(1280, 0.25, dtype))
        assert info["clipped_samples"] == 0


def test_step_before_reset_and_after_end():
    e = RoomEnv(scene=SC)
    with pytest.raises(RuntimeError, match="reset"):
        e.step(np.zeros(1280, np.float32))
    e.reset(seed=0)
    while not e.step(np.zeros(1280, np.float32))[2]:
        pass
    with pytest.raises(RuntimeError, match="reset"):
        e.step(np.zeros(1280, np.float32))


@pytest.mark.parametrize("kwargs,match", [
    ({"sample_rate": 22050}, "16000, 24000"),
    ({"render_mode": "human"}, "valid render modes"),
    ({"scheduler": {"max_respons_s": 3}}, "valid fields"),
    ({"scene": 3.5}, "expected a Scene"),
])
def test_bad_constructor_arguments(kwargs, match):
    kwargs.setdefault("scene", SC)
    with pytest.raises(ValueError, match=match):
        RoomEnv(**kwargs)


def test_bad_reset_scene_option():
    e = RoomEnv(scene=SC)
    with pytest.raises(ValueError, match="out of range"):
        e.reset(options={"scene": 4})
    with pytest.raises(ValueError, match="did you mean"):
        e.reset(options={"scene": "tesst"})
