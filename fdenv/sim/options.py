"""The env's arguments, checked in one place: ``RoomEnv`` and the command line (``fdenv-run``) call
the same functions, so a value is valid for both or for neither. Each error names the argument,
the value and the valid choices."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError, SceneError, short, suggest
from ..render.registry import BACKENDS
from ..scene.schema import Scene
from ..scene.sets import SPLIT_CHOICES
from .behaviour import check_profile as behaviour  # noqa: F401  (behaviour=: "natural" or "paper")
from .registration import SET_IDS
from .scheduler import SchedulerConfig

SAMPLE_RATES = (16000, 24000)  # 80 ms frames of 1280 or 1920 samples (SPEC 1)
SETS = tuple(SET_IDS.values())  # the shipped scene sets
RENDER_MODES = (None, "rgb_array")


def choice(field: str, value, valid) -> Any:
    if value not in valid:
        raise ConfigError(f"{field}={short(value)} is not valid; choose one of {list(valid)}")
    return value


def sample_rate(value, field: str = "sample_rate") -> int:
    return choice(field, value, SAMPLE_RATES)


def split(value, field: str = "split") -> str:
    return choice(field, value, SPLIT_CHOICES)


def scene_set(value, field: str = "scene_set") -> str:
    return choice(field, value, SETS)


def tts(value, field: str = "tts") -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{field}={short(value)}: expected the name of a TTS back end, 'espeak' (default) or 'kokoro'")
    return choice(field, value, BACKENDS)


def render_mode(value) -> str | None:
    if value not in RENDER_MODES:
        raise ConfigError(f"render_mode={short(value)}: valid render modes are None and 'rgb_array'")
    return value


def scheduler(values) -> SchedulerConfig:
    """``SchedulerConfig`` from a dict of settings (seconds); each value is range-checked there."""
    from collections.abc import Mapping

    valid = list(SchedulerConfig.__dataclass_fields__)
    if values is None:
        return SchedulerConfig()
    if not isinstance(values, Mapping):
        raise ConfigError(f"scheduler={short(values)}: expected a dict of settings (seconds), keys among {valid}")
    for key in values:
        if key not in valid:
            raise ConfigError(f"scheduler.{key}: unknown setting{suggest(key, valid)} (valid fields are {valid})")
    return SchedulerConfig(**values)


def room(value):
    """The validated ``RoomSpec``, or ``None`` when nothing needs simulating (the fast path)."""
    if value is None:
        return None
    from ..room import RoomSpec

    try:
        spec = RoomSpec.from_config(value)
    except (ValueError, TypeError) as e:  # the room's own checks name the field; one documented type
        msg = str(e)
        raise ConfigError((msg if msg.startswith("room") else f"room: {msg}")[:600]) from None
    if spec.preset == "anechoic" and spec.noise == "none" and spec.echo_gain == 0:
        return None
    return spec


def replay_room(spec, what: str) -> None:
    """Replayed FDB audio is a recording: it cannot be placed in a simulated room."""
    if spec is not None:
        raise ConfigError(f"{short(what)} replays recorded audio: leave room anechoic (no room)")


def scenes(scene, scene_set_name, split_name) -> tuple[list[Scene], dict]:
    """The env's scenes, and the replay data (fixed input, gold times) of imported FDB samples
    (``"fdb:PATH"`` items). The split is checked by the scene loader."""
    if scene is not None and scene_set_name is not None:
        raise ConfigError("give either scene= or scene_set=, not both")
    if scene_set_name is not None:
        from ..scene import load_set

        found = load_set(scene_set_name, split_name)
        if not found:
            raise ConfigError(f"scene_set={short(scene_set_name)}, split={short(split_name)}: no scenes")
        return found, {}
    if scene is None:  # the first shipped turn-taking scene of the split
        from ..scene import load_set

        return load_set("turn_taking", split_name)[:1], {}
    items = scene if isinstance(scene, (list, tuple)) else [scene]
    if not items:
        raise ConfigError("scene=[]: an empty list; give a scene, a scene id, a path, a list of them, or use scene_set=")
    out, replays = [], {}
    for item in items:
        if isinstance(item, str) and item.startswith("fdb:"):
            from .replay_v15 import load_any as load_fdb  # FDB v1 data, or v1.5's overlap samples

            for sc, audio, gold in load_fdb(item[4:]):
                out.append(sc)
                replays[sc.id] = (audio, gold)
            continue
        if isinstance(item, Scene):
            out.append(item)
        elif isinstance(item, dict):
            from ..scene.load import scene_from_dict

            out.append(scene_from_dict(item, source="scene= argument"))
        elif isinstance(item, str):
            from ..scene import find_scene

            out.append(find_scene(item))
        else:
            raise ConfigError(f"scene: expected a Scene, a scene id or a path to a scene file, got {type(item).__name__}")
    return out, replays


def pinned_voices(scenes, replays, renderer) -> None:
    """Pinned voices checked when the env is made, not at the first reset that meets the scene."""
    voices = None
    for sc in scenes:
        if sc.id in replays:
            continue
        pinned = [(f"speakers[{i}].voice", s.voice) for i, s in enumerate(sc.speakers) if s.voice is not None]
        pinned += [("duty_voice", sc.duty_voice)] if getattr(sc, "duty_voice", None) is not None else []
        for field, voice in pinned:
            voices = renderer.voices if voices is None else voices
            if voice not in voices:
                raise SceneError(f"scene {short(sc.id)}", field, f"unknown voice {short(voice)} for TTS back end "
                                 f"{short(renderer.backend_name)}{suggest(voice, voices)}; valid voices: {', '.join(voices)}")
