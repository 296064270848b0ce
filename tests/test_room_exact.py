"""The room's shortcuts against the exact computation: impulse responses cut where their decay
curves are 60 dB down and everything in single precision, versus double precision over the
untruncated impulse responses (``RoomSim.exact_irs``). The talkers' and the echo's signals at the
microphones must stay within -50 dB of the signal (error energy over signal energy)."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.room import ASSISTANT, build_room, preset_names

from .test_room import speech_like

SR = 16000
N = 1280
BOUND_DB = -50.0


def error_db(y: np.ndarray, ref: np.ndarray) -> float:
    """Energy of ``y - ref`` relative to the energy of ``ref``, over all microphones, in dB."""
    ref = np.asarray(ref, np.float64)
    err = np.asarray(y, np.float64) - ref
    return float(10 * np.log10(np.sum(err * err) / np.sum(ref * ref)))


def exact_convolution(x: np.ndarray, irs: np.ndarray) -> np.ndarray:
    from scipy.signal import fftconvolve

    return np.stack([fftconvolve(np.asarray(x, np.float64), h) for h in irs])


# office (the benchmark's room) in the fast tier; every preset in the slow one
ROOMS = [pytest.param(p, marks=() if p == "office" else pytest.mark.slow)
         for p in preset_names() if p != "anechoic"]


@pytest.mark.parametrize("preset", ROOMS)
def test_talkers_within_50db_of_the_exact_convolution(preset):
    room = build_room({"preset": preset, "mics": "circular4"}, ["a", "b"], 7, SR)
    exact = room.exact_irs()
    assert exact["a"].dtype == np.float64 and exact["a"].shape[1] >= room.ir_length
    clip = speech_like(SR, 3.0, np.random.default_rng(1)).astype(np.float32)
    for name in ("a", "b"):
        y = room.convolve(name, clip)
        ref = exact_convolution(clip, exact[name])
        # what the room drops past its impulse responses' end counts as error (and so would
        # anything it adds past the exact ones' end)
        n = max(y.shape[1], ref.shape[1])
        y_full, ref_full = (np.pad(a, ((0, 0), (0, n - a.shape[1]))) for a in (y, ref))
        assert error_db(y_full, ref_full) < BOUND_DB, (preset, name, error_db(y_full, ref_full))


@pytest.mark.parametrize("preset", ROOMS)
def test_echo_within_50db_of_the_exact_convolution(preset):
    gain = 0.5
    room = build_room({"preset": preset, "mics": "circular4", "echo_gain": gain}, ["a"], 11, SR)
    rng = np.random.default_rng(2)
    # speech, a pause (the tail rings on), then full-band noise: what a speaking agent plays
    x = np.concatenate([speech_like(SR, 2.0, rng), np.zeros(SR // 2), 0.05 * rng.standard_normal(SR)])
    frames = -(-len(x) // N) + 8
    x = np.pad(x, (0, frames * N - len(x))).astype(np.float32)
    echo = room.echo_path(N)
    y = np.concatenate([echo.push(x[i * N : (i + 1) * N]) for i in range(frames)], axis=1)
    ref = exact_convolution(x, room.exact_irs()[ASSISTANT] * gain)[:, : frames * N]
    assert error_db(y, ref) < BOUND_DB, (preset, error_db(y, ref))
    assert error_db(y, ref) > -200  # the cut is real: the exact tail is longer than the echo path's
    assert room.exact_irs()[ASSISTANT].shape[1] > echo.ir_length


def test_env_observations_within_50db_of_the_exact_computation():
    """The env's microphone frames (clips mixed as scheduled, the echo added frame by frame, the
    noises added ahead in blocks, the gain) against the same episode computed at once in double
    precision: every clip and the whole assistant track through the untruncated impulse
    responses, plus the noises. What differs is the human and echo paths' error."""
    import gymnasium as gym

    import fdenv  # noqa: F401

    gain = 0.5
    env = gym.make("fdenv/TurnTaking-v0", room={"preset": "office", "mics": "circular4", "echo_gain": gain},
                   behaviour="paper")
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(4)
    # the assistant answers: speech, then (after the humans' reaction) full-band noise bursts
    speech = np.concatenate([np.zeros(3 * SR), 0.3 * speech_like(SR, 4.0, rng), np.zeros(SR),
                             0.05 * rng.standard_normal(2 * SR)]).astype(np.float32)
    frames, terminated = [obs], False
    for k in range(200):
        a = speech[k * N : (k + 1) * N]
        a = np.pad(a, (0, N - len(a)))
        obs, _, terminated, _, _ = env.step(a)
        frames.append(obs)
        if terminated:
            break
    ep = env.unwrapped.episode
    assert ep.mic_clipped == 0 and ep.echo.partitions > 1 and ep.sched.clips
    y = np.concatenate(frames, axis=1).astype(np.float64)
    n = y.shape[1]
    exact = ep.room.exact_irs()
    signal = np.zeros((y.shape[0], n))
    for c in ep.sched.clips:  # each clip through its talker's exact impulse responses
        speaker = ep.scene.turns[c.turn].speaker
        wet = exact_convolution(ep.clips_audio[c.turn][c.piece], exact[speaker])[:, : max(0, n - c.start)]
        signal[:, c.start : c.start + wet.shape[1]] += wet
    signal += exact_convolution(ep.assistant[:n], exact[ASSISTANT] * gain)[:, :n]
    noise = np.zeros_like(signal)
    for x in (ep.noise, ep.self_noise):
        if x is not None:
            noise += x[:, np.arange(n) % x.shape[1]]
    ref = (signal + noise) * float(ep.mic_gain)
    err = y - ref
    db = float(10 * np.log10(np.sum(err * err) / np.sum((signal * float(ep.mic_gain)) ** 2)))
    assert db < BOUND_DB, db
    # the echo is a real part of what is heard here (not lost under the talkers)
    echo = exact_convolution(ep.assistant[:n], exact[ASSISTANT] * gain)[:, :n]
    assert np.sum(echo * echo) > 0.05 * np.sum(signal * signal)
