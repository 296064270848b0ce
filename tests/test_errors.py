"""Bad input found by fuzzing: each case raises a documented fdenv exception that names the field
and the fix, at construction or load time, instead of a raw error (or a hang) much later."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fdenv import errors
from fdenv.errors import ActionError, ConfigError, EnvStateError, FdenvError, OptionsError, SceneError
from fdenv.scene.load import load_scene, scene_from_dict
from fdenv.sim.env import RoomEnv
from fdenv.sim.scheduler import SchedulerConfig

TURNS = [{"speaker": "Ann", "text": "Hello there, how are you?", "label": "final"}]


def _scene(**over):
    return {"id": "t", "kind": "turn_taking", "speakers": ["Ann"], "turns": TURNS, **over}


def test_every_error_is_an_fdenv_error_and_keeps_its_builtin_base():
    for name in ("ConfigError", "SceneError", "FDBImportError", "ActionError", "OptionsError", "RunFolderError",
                 "RunLockedError"):
        cls = getattr(errors, name)
        assert issubclass(cls, FdenvError) and issubclass(cls, ValueError), name
    for name in ("AgentError", "TTSError", "EnvStateError"):
        cls = getattr(errors, name)
        assert issubclass(cls, FdenvError) and issubclass(cls, RuntimeError), name
    from fdenv.render.base import TTSError
    from fdenv_agents import RemoteAgentError

    assert TTSError is errors.TTSError and issubclass(RemoteAgentError, errors.AgentError)


# ---- scheduler settings ---------------------------------------------------------------------


@pytest.mark.parametrize("value", [1e9, -1.0, math.nan, math.inf, "2", True, None, [2]])
def test_scheduler_settings_checked_at_construction(value):
    with pytest.raises(ConfigError, match=r"scheduler\.tail_s=.*seconds"):
        SchedulerConfig(tail_s=value)
    with pytest.raises(ConfigError, match=r"scheduler\.tail_s"):
        RoomEnv(scene=scene_from_dict(_scene()), scheduler={"tail_s": value})


def test_scheduler_accepts_ints_and_refuses_unknown_keys():
    assert SchedulerConfig(tail_s=3).tail_s == 3.0 and isinstance(SchedulerConfig(tail_s=3).tail_s, float)
    with pytest.raises(ConfigError, match=r"scheduler\.tail: unknown setting; did you mean 'tail_s'"):
        RoomEnv(scene=scene_from_dict(_scene()), scheduler={"tail": 1.0})
    with pytest.raises(ConfigError, match="expected a dict"):
        RoomEnv(scene=scene_from_dict(_scene()), scheduler=[1.0])


# ---- scene checks -----------------------------------------------------------------------------


def test_overflowing_bc_distribution_is_refused():
    data = {"id": "b", "kind": "backchannel", "speakers": ["Ann"],
            "turns": [{"speaker": "Ann", "text": "one two [trp] three four", "label": "monologue"}]}
    scene_from_dict({**data, "bc_distribution": [0.2, 0.8]})
    with pytest.raises(SceneError, match="bc_distribution.*finite sum"):
        scene_from_dict({**data, "bc_distribution": [1e308, 1e308]})


@pytest.mark.parametrize("text", ["Hello\x00 there", "Hi \x07 bell"])
def test_control_characters_in_text_are_refused(text):
    with pytest.raises(SceneError, match=r"turns\[0\]\.text.*control character.*remove it"):
        scene_from_dict(_scene(turns=[{"speaker": "Ann", "text": text, "label": "final"}]))


@pytest.mark.parametrize("text", ["...", "?!", "- -"])
def test_text_with_nothing_to_say_is_refused(text):
    with pytest.raises(SceneError, match=r"turns\[0\]\.text.*nothing to say"):
        scene_from_dict(_scene(turns=[{"speaker": "Ann", "text": text, "label": "final"}]))


def test_unknown_voice_fails_when_the_env_is_made():
    sc = scene_from_dict(_scene(speakers=[{"name": "Ann", "voice": "no_such_voice"}]))
    with pytest.raises(SceneError, match=r"speakers\[0\]\.voice.*unknown voice 'no_such_voice'.*valid voices"):
        RoomEnv(scene=sc)


def test_yaml_merge_keys_work(tmp_path):
    p = tmp_path / "merge.yaml"
    p.write_text("id: m\nkind: turn_taking\nspeakers: [Ann]\nattributes: {base: &b {speaker: Ann, label: final}}\n"
                 "turns:\n  - {<<: *b, text: Hello there}\n  - {<<: *b, text: And again, label: final}\n")
    sc = load_scene(p)
    assert [t.speaker for t in sc.turns] == ["Ann", "Ann"] and sc.turns[1].text == "And again"


def test_duplicate_keys_still_refused_next_to_merge_keys(tmp_path):
    p = tmp_path / "dup.yaml"
    p.write_text("id: m\nkind: turn_taking\nspeakers: [Ann]\nattributes: {base: &b {speaker: Ann}}\n"
                 "turns:\n  - {<<: *b, text: Hi, text: Hello, label: final}\n")
    with pytest.raises(SceneError, match="duplicate key 'text'"):
        load_scene(p)


def _bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "{" + ", ".join(lines) + "}"  # 10**9 values in well under 1 kB


@pytest.mark.parametrize("attributes, match", [(_bomb(), "expands to more than"),
                                               ("{loop: &l [*l]}", "self-reference")])
def test_yaml_alias_bomb_and_self_reference_refused_at_load(tmp_path, attributes, match):
    p = tmp_path / "scene.yaml"
    p.write_text(f"id: b\nkind: turn_taking\nspeakers: [Ann]\nattributes: {attributes}\n"
                 "turns: [{speaker: Ann, text: hello there, label: final}]\n")
    assert p.stat().st_size < 1000
    with pytest.raises(SceneError, match=match):
        load_scene(p)


def test_self_referencing_attributes_from_python_refused():
    loop: dict = {}
    loop["me"] = loop
    with pytest.raises(SceneError, match="attributes.*refers to itself"):
        scene_from_dict(_scene(attributes=loop))


# ---- API misuse --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env():
    e = RoomEnv(scene=scene_from_dict(_scene()))
    yield e
    e.close()


@pytest.mark.parametrize("options, match", [
    ([1], r"options=\[1\]: expected a dict"),
    ({"scen": 0}, r"options\['scen'\]: unknown option; did you mean 'scene'"),
    ({"scene": [0]}, r"options\['scene'\]=\[0\]: expected a scene index"),
    ({"scene": "x" * 5000}, r"5002 characters.*not a scene of this env"),
])
def test_reset_options_misuse(env, options, match):
    with pytest.raises(OptionsError, match=match) as e:
        env.reset(options=options)
    assert len(str(e.value)) < 300


@pytest.mark.parametrize("kwargs, match", [
    ({"scene": []}, r"scene=\[\]: an empty list"),
    ({"tts": None}, r"tts=None: expected the name of a TTS back end"),
    ({"sample_rate": 8000}, r"sample_rate=8000"),
])
def test_constructor_misuse(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        RoomEnv(**kwargs)


def test_long_scene_id_does_not_reach_the_file_system():
    with pytest.raises(FdenvError):
        RoomEnv(scene="x" * 5000)


def test_torch_actions_any_float_dtype_with_grad(env):
    torch = pytest.importorskip("torch")
    env.reset(seed=0)
    N = env.frame_samples
    for t in (torch.zeros(N, requires_grad=True), torch.zeros(N, dtype=torch.bfloat16),
              torch.full((N,), 0.5, dtype=torch.float16, requires_grad=True)):
        env.step(t)
    with pytest.raises(ActionError, match="dtype int"):
        env.step(torch.zeros(N, dtype=torch.int16))


def test_unreadable_actions(env):
    env.reset(seed=0)
    with pytest.raises(ActionError, match="action: expected"):
        env.step([[0.0], [0.0, 0.0]])
    with pytest.raises(ActionError, match="shape"):
        env.step(np.zeros(3, np.float32))


def test_step_before_reset_is_a_documented_error():
    e = RoomEnv(scene=scene_from_dict(_scene()))
    with pytest.raises(EnvStateError, match="call reset"):
        e.step(np.zeros(e.frame_samples, np.float32))


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_reset_seed_must_be_a_non_negative_int(env, seed):
    with pytest.raises(OptionsError, match=r"seed=.*non-negative integer"):
        env.reset(seed=seed)


@pytest.mark.parametrize("kwargs, match", [({"room": "attic"}, "room: preset"), ({"room": {"echo_gain": "x"}}, "room"),
                                           ({"scene_set": "x" * 5000, "scene": None}, "unknown scene set"),
                                           ({"scene_set": "pause", "split": "later", "scene": None}, "unknown split")])
def test_room_and_set_errors_are_config_errors(kwargs, match):
    kwargs.setdefault("scene", scene_from_dict(_scene()))
    with pytest.raises(ConfigError, match=match) as e:
        RoomEnv(**kwargs)
    assert len(str(e.value)) < 700


def test_validate_names_unknown_voices(tmp_path, capsys):
    from fdenv.cli.scenes import main as scenes_cli

    p = tmp_path / "v.yaml"
    p.write_text("id: v\nkind: turn_taking\nspeakers: [{name: Ann, voice: robot9}]\n"
                 "turns: [{speaker: Ann, text: hello there, label: final}]\n")
    assert scenes_cli(["validate", str(p)]) == 1
    assert "speakers[0].voice: unknown voice 'robot9'" in capsys.readouterr().out
