"""The room inside the env (issue 3): echo timing, SNR, gold times at microphone 0, DoA labels,
and the foundation's API checks with a reverberant multi-microphone room."""

import math
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import fdenv  # noqa: F401
from fdenv.room import ASSISTANT, RoomSpec, active_speech_level_dba, rms_dba
from fdenv.sim.env import RoomEnv
from fdenv_agents import SilentAgent, make_agent

from .helpers import rollout, scene

SR, N = 16000, 1280
ROOM = {"preset": "office", "mics": "circular4", "echo_gain": 0.5}
SC = scene([
    {"speaker": "Ann", "text": "Good morning, did you sleep well?", "label": "ctx"},
    {"speaker": "Bob", "text": "Not really, the neighbours were loud.", "label": "ctx", "gap": 0.6},
    {"speaker": "Ann", "text": "Aria, what is the weather today?", "label": "final", "gap": 0.6},
], kind="turn_taking")


def run_actions(env, actions, seed=0):
    """Observations of an episode driven by a fixed list of actions (zeros after the list)."""
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for k in range(len(actions)):
        obs, *_ = env.step(actions[k])
        out.append(obs)
    return np.stack(out)


@pytest.mark.parametrize("k,j", [(3, 0), (5, 700), (9, 1279)])
def test_echo_click_lands_at_delay_and_never_earlier(k, j):
    env = RoomEnv(scene=SC, room=ROOM)
    quiet = [np.zeros(N, np.float32)] * 20
    clicked = list(quiet)
    clicked[k] = np.zeros(N, np.float32)
    clicked[k][j] = 0.9
    diff = run_actions(env, clicked) - run_actions(env, quiet)  # same seed: only the echo differs
    room = env.episode.room
    geometric = np.linalg.norm(room.positions[ASSISTANT] - room.mic_positions[:, 0]) / 343.0
    expected = (k + 1) * N + j + geometric * SR + room.filter_delay
    mic0 = diff[:, 0, :].reshape(-1)
    assert np.all(diff[: k + 1] == 0), "the echo of a_k appears before frame k+1"
    peak = int(np.argmax(np.abs(mic0)))
    assert abs(peak - expected) <= 0.001 * SR, f"echo peak at {peak}, expected {expected:.1f}"


def test_no_echo_without_echo_gain():
    env = RoomEnv(scene=SC, room={**ROOM, "echo_gain": 0.0})
    loud = [np.full(N, 0.5, np.float32)] * 10
    assert np.array_equal(run_actions(env, loud), run_actions(env, [np.zeros(N, np.float32)] * 10))


def episode_snr(room: dict) -> float:
    """A-weighted SNR at microphone 0 of a real episode: the same episode with and without noise."""
    noisy = RoomEnv(scene=SC, room=room)
    clean = RoomEnv(scene=SC, room={**room, "noise": "none", "noise_sources": []})
    rec_noisy, _ = rollout(noisy, SilentAgent())
    rec_clean, _ = rollout(clean, SilentAgent())
    # the noise's peak lowers the episode's headroom gain: the clean speech at the noisy run's gain
    speech = rec_clean.mic0 * (noisy.episode.mic_gain / clean.episode.mic_gain)
    noise_part = rec_noisy.mic0[: len(speech)] - speech
    return active_speech_level_dba(speech, SR) - rms_dba(noise_part, SR)


@pytest.mark.parametrize("noise", ["white", "pink", "babble"])
def test_snr_of_a_rendered_episode(noise):
    snr = episode_snr({"preset": "office", "noise": noise, "snr_db": 12.0})
    print(f"{noise}: configured 12.0 dB(A), measured {snr:.2f} dB(A)")
    assert abs(snr - 12.0) <= 1.0


@pytest.mark.parametrize("preset", ["office", "meeting_room", "living_room", "kitchen", "car_cabin"])
def test_each_preset_meets_its_a_weighted_snr_on_a_real_episode(preset):
    """The preset's own noise (NC-curve or road noise, the kitchen's hood) at microphone 0: A-weighted
    active speech level over A-weighted noise level = the preset's snr_db, within 1 dB as above:
    the SNR is set on the talkers' clips one after another, while in the episode a turn's
    reverberant tail (and here a turn that starts before the previous one ends) adds to the track's
    active level (measured 0.2-0.6 dB; the microphones' self-noise adds under 0.01 dB)."""
    want = RoomSpec.from_config(preset).snr_db
    snr = episode_snr({"preset": preset})
    print(f"{preset}: configured {want} dB(A), measured {snr:.2f} dB(A)")
    assert abs(snr - want) <= 1.0


@pytest.mark.parametrize("preset", ["office", "living_room", "meeting_room", "car_cabin", "kitchen"])
@pytest.mark.parametrize("seed", [0, 1])
def test_gold_start_at_mic0_matches_the_convolved_onset(preset, seed):
    env = RoomEnv(scene=SC, room={"preset": preset, "mics": "pair", "noise": "none", "noise_sources": []})
    rec, _ = rollout(env, SilentAgent(), seed=seed)
    first = rec.clips[0]
    mic0 = rec.mic0
    onset = np.flatnonzero(np.abs(mic0) > 0.02 * np.abs(mic0).max())[0] / SR
    assert abs(onset - first.start) <= 0.010, f"{preset}: onset {onset:.4f} s, gold {first.start:.4f} s"
    # The gold time is the source time plus the speaker's delay to microphone 0.
    assert first.start == pytest.approx(0.3 + env.episode.delays[first.speaker] / SR, abs=1 / SR)


def test_doa_labels_match_the_geometry():
    env = RoomEnv(scene=SC, room=ROOM)
    _, info = env.reset(seed=3)
    room = env.episode.room
    for name, (az, el, dist) in info["labels"]["doa"].items():
        v = room.positions[name] - room.array_center
        assert dist == pytest.approx(np.linalg.norm(v), rel=1e-6)
        assert az == pytest.approx(math.degrees(math.atan2(v[1], v[0])), abs=1e-6)
        assert el == pytest.approx(math.degrees(math.asin(v[2] / np.linalg.norm(v))), abs=1e-6)
    azimuths = sorted(a for a, _, _ in info["labels"]["doa"].values())
    assert azimuths[1] - azimuths[0] > 10, "speakers share a direction"


def test_check_env_with_a_room():
    env = RoomEnv(scene=SC, room=ROOM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (4, N)


def test_room_rollout_is_bit_identical_and_seed_dependent():
    def roll(seed):
        env = gym.make("fdenv/TurnTaking-v0", room=ROOM)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        out = [obs]
        for _ in range(50):
            out.append(env.step(rng.uniform(-0.3, 0.3, N).astype(np.float32))[0])
        return np.stack(out)

    a, b, c = roll(0), roll(0), roll(1)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()


def test_room_env_pickles_mid_episode():
    env = gym.make("fdenv/TurnTaking-v0", room=ROOM)
    env.reset(seed=2)
    for _ in range(10):
        env.step(np.full(N, 0.1, np.float32))
    clone = pickle.loads(pickle.dumps(env))
    a = np.full(N, 0.2, np.float32)
    assert env.step(a)[0].tobytes() == clone.step(a)[0].tobytes()


def test_room_async_vector_env():
    envs = gym.make_vec("fdenv/TurnTaking-v0", num_envs=4, vectorization_mode="async", room=ROOM)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (4, 4, N)
    for _ in range(100):
        obs, *_ = envs.step(np.full((4, N), 0.05, np.float32))
    assert np.isfinite(obs).all()
    envs.close()


def test_reused_buffers_leave_no_trace_of_the_last_episode():
    """The env keeps its microphone and assistant buffers between episodes (zeroing what was
    written): an episode after a speaking one equals the same episode in a fresh env, and a
    finished episode's record is not touched by the next one."""
    room = {"preset": "office", "mics": "circular4", "echo_gain": 0.5}
    loud = (0.2 * np.random.default_rng(0).standard_normal(1280)).astype(np.float32)

    def episode(env, seed, action, steps=None):
        obs, _ = env.reset(seed=seed)
        out = [obs]
        while True:
            obs, _, term, trunc, info = env.step(action)
            out.append(obs)
            if term or trunc or (steps is not None and len(out) > steps):
                return np.concatenate(out, axis=1), info.get("record")

    used = gym.make("fdenv/TurnTaking-v0", room=room)
    _, rec = episode(used, 1, loud)
    kept = (rec.assistant.copy(), rec.mic0.copy())
    again, _ = episode(used, 2, np.zeros(1280, np.float32), steps=300)
    fresh, _ = episode(gym.make("fdenv/TurnTaking-v0", room=room), 2, np.zeros(1280, np.float32), steps=300)
    np.testing.assert_array_equal(again, fresh)
    np.testing.assert_array_equal(rec.assistant, kept[0])
    np.testing.assert_array_equal(rec.mic0, kept[1])
    assert np.abs(rec.assistant).max() > 0.1


def test_every_scene_gets_its_own_geometry_for_one_seed():
    # the runner resets every scene with the run's seed: the scene id must still move the room
    other = scene([
        {"speaker": "Ann", "text": "Good morning, did you sleep well?", "label": "ctx"},
        {"speaker": "Bob", "text": "Not really, the neighbours were loud.", "label": "final"},
    ], kind="turn_taking", id="other")
    env = RoomEnv(scene=[SC, other], room=ROOM)
    doa = lambda sc, seed=0: env.reset(seed=seed, options={"scene": sc})[1]["labels"]["doa"]  # noqa: E731
    first, second, again = doa("test"), doa("other"), doa("test")
    assert first == again
    assert first["Ann"] != second["Ann"] and first["Bob"] != second["Bob"]
    assert doa("test", seed=1)["Ann"] != first["Ann"]


def test_the_microphone_hisses_in_every_preset_unless_noise_none():
    from fdenv.room.noise import SELF_NOISE_DB

    def mic0(room):
        rec, _ = rollout(RoomEnv(scene=SC, room=room), SilentAgent())
        return rec, rec.mic0.astype(np.float64)

    rec, x = mic0("anechoic")
    speech = active_speech_level_dba(np.concatenate([x[round(c.start * SR):round(c.end * SR)] for c in rec.clips]), SR)
    gaps = [(a.end, b.start) for a, b in zip(rec.clips, rec.clips[1:]) if b.start - a.end > 0.1]
    gaps.append((rec.clips[-1].end + 0.05, rec.duration))
    floor = rms_dba(np.concatenate([x[round(a * SR):round(b * SR)] for a, b in gaps]), SR)
    assert abs(speech - floor - SELF_NOISE_DB) < 1.5  # no digital silence between turns
    _, exact = mic0({"preset": "anechoic", "noise": "none"})
    assert not exact[: round(rec.clips[0].start * SR) - 1].any()  # opted out: exact zeros
    _, default = mic0(None)  # no room at all: the clips as rendered (tests, FDB replays)
    assert not default[: round(rec.clips[0].start * SR) - 1].any()


def no_clipping(preset, scene_set, scene, agent, seed):
    """One natural episode: (mic peak, clipped samples, most humans audible in one frame)."""
    from fdenv.sim.episode import MIC_PEAK

    env = RoomEnv(scene_set=scene_set, split="test", room=preset)
    rec, frames = rollout(env, make_agent(agent), seed=seed, scene=scene)
    ep = env.episode
    assert ep.mic_gain * (sum(ep.talker_peaks.values()) + ep.noise_peak) <= MIC_PEAK * (1 + 1e-6)
    return float(np.abs(rec.mic0).max()), ep.mic_clipped, max(len(lab["speaking"]) for _, lab in frames)


def test_the_car_cabin_never_clips_when_three_natural_talkers_overlap():
    from fdenv.sim.episode import MIC_PEAK

    peak, clipped, most = no_clipping("car_cabin", "mpe", 0, "silent", 0)
    assert most >= 3  # three humans talk at once here (about 26 s in)
    assert clipped == 0 and peak <= MIC_PEAK


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["anechoic", "office", "living_room", "meeting_room", "car_cabin", "kitchen"])
def test_no_preset_clips_with_natural_overlapping_humans(preset):
    """Every preset, multi-party and backchannel scenes, a silent agent and one that talks all the
    time (natural humans react to it: they talk over it, repair, re-ask)."""
    from fdenv.sim.episode import MIC_PEAK

    overlaps = 0
    for scene_set, scene in (("mpe", 0), ("mpe", 1), ("mpe", 2), ("backchannel", 0), ("backchannel", 1)):
        for agent, seed in (("silent", scene), ("talker", 10 + scene)):
            peak, clipped, most = no_clipping(preset, scene_set, scene, agent, seed)
            assert clipped == 0 and peak <= MIC_PEAK, (preset, scene_set, scene, agent, peak, clipped)
            overlaps += most >= 2
    assert overlaps >= 5  # the humans did overlap


def test_without_a_room_a_mix_over_full_scale_is_still_clipped_and_counted():
    """The full-scale check runs only where a mix may go over 1 (noted when mixed) or there is
    echo: such frames still come out clipped and counted; the others are untouched."""
    env = RoomEnv(scene_set="turn_taking", split="test")
    env.reset(seed=0)
    N = env.frame_samples
    env.episode._mix(3 * N, np.full((1, N // 2), 1.5, np.float32))  # frame 3, first half: over full scale
    quiet = np.zeros(N, np.float32)
    obs = [env.step(quiet)[0] for _ in range(4)]
    assert obs[2].max() == 1.0 and np.count_nonzero(obs[2] == 1.0) >= N // 2
    assert np.abs(obs[1]).max() < 1.0
    while True:
        _, _, term, _, info = env.step(quiet)
        if term:
            break
    assert info["mic_clipped_samples"] >= N // 2
    np.testing.assert_array_equal(info["record"].mic0[3 * N : 4 * N], obs[2][0])  # the record holds what was heard


def test_in_a_room_clipping_is_checked_where_echo_or_a_loud_mix_can_cause_it():
    room = {"preset": "office", "mics": "circular4", "echo_gain": 3.0}
    env = RoomEnv(scene_set="turn_taking", split="test", room=room)
    env.reset(seed=0)
    N = env.frame_samples
    env.episode._mix(3 * N, np.full((env.n_mics, N // 2), 1.5, np.float32))
    quiet = np.zeros(N, np.float32)
    obs = [env.step(quiet)[0] for _ in range(4)]
    assert obs[2].max() == 1.0 and np.abs(obs[1]).max() < 1.0
    loud = np.ones(N, np.float32)  # a full-scale action, echoed at 3x: it clips at the microphones
    peaks = [np.abs(env.step(loud)[0]).max() for _ in range(3)]
    assert max(peaks) == 1.0


@pytest.mark.parametrize("echo_gain,level", [(0.5, 0.05), (0.0, 0.05), (4.0, 0.9)])
def test_recorded_microphone_0_is_what_the_observations_gave(echo_gain, level):
    # The step writes only microphone 0 back into its buffer (echo, gain and clipping are applied
    # to the observation): the record's track must still be the observations' row 0, bit for bit.
    # Pink noise at 10 dB puts the episode's gain below 1 (about 0.59).
    env = RoomEnv(scene=SC, room={**ROOM, "echo_gain": echo_gain, "noise": "pink", "snr_db": 10})
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=5)
    rows, done = [obs[0]], False
    while not done:
        obs, _, done, _, info = env.step((level * rng.standard_normal(N)).astype(np.float32))
        rows.append(obs[0])
    rec = info["record"]
    assert np.array_equal(rec.mic0, np.concatenate(rows))
    if echo_gain == 4.0:  # a loud action through a large echo gain clips, and the record shows it
        assert info["mic_clipped_samples"] > 0 and np.abs(rec.mic0).max() == 1.0
