"""Shipped scene sets: ``scenes/<set>/<scene id>.yaml`` plus ``scenes/<set>/manifest.yaml``.

Where the sets live: ``$FDENV_SCENES_DIR`` if set, else the repository's top-level ``scenes/``
(next to the ``fdenv`` package). ``SCENES_DIR`` is read at each access, so changing the variable
takes effect at once.

A manifest is YAML with at least::

    set: pause                 # the folder name
    kind: pause                # SPEC 2 kind of its scenes
    scenes:                    # every scene id, in order, with its split
      pause-0001: train
      pause-0002: val

and, for generated sets, ``generator`` (name, version, seed, n) and ``counts``. Splits are
``train``, ``val`` and ``test``; ``all`` selects every scene. Scene ``X`` of set ``S`` is the file
``S/X.yaml``.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
from pathlib import Path

import yaml

from ..errors import ConfigError, short
from .load import SceneError, load_scene
from .schema import Scene

ENV_VAR = "FDENV_SCENES_DIR"
SPLITS = ("train", "val", "test")
SPLIT_CHOICES = SPLITS + ("all",)
MANIFEST = "manifest.yaml"

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def scenes_dir() -> Path:
    """The folder holding the scene sets (``$FDENV_SCENES_DIR`` or the repository's ``scenes/``)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    import fdenv

    return Path(fdenv.__file__).resolve().parent.parent / "scenes"


def __getattr__(name: str):
    if name == "SCENES_DIR":
        return scenes_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _root(root) -> Path:
    return Path(root) if root is not None else scenes_dir()


def list_sets(root: str | Path | None = None) -> list[str]:
    """Names of the scene sets (folders with a manifest), sorted."""
    base = _root(root)
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / MANIFEST).is_file())


def _stamp(path: Path):
    st = path.stat()
    return (str(path.resolve()), st.st_mtime_ns, st.st_size)


_manifest_cache: dict = {}
_scene_cache: dict = {}


def _unknown_set(set_name, base: Path) -> ConfigError:
    sets = list_sets(base)
    where = f"in {base}" if sets else f"in {base} (no sets there; set ${ENV_VAR} or generate them with `fdenv-scenes generate all`)"
    close = difflib.get_close_matches(str(set_name)[:200], sets, n=3)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    return ConfigError(f"unknown scene set {short(set_name)}{hint} Sets {where}: {sets}")


def load_manifest(set_name: str, root: str | Path | None = None) -> dict:
    """The manifest of set ``set_name`` as a dict (checked: ``scenes`` maps ids to splits)."""
    return copy.deepcopy(_manifest(set_name, root))


def _manifest(set_name: str, root) -> dict:
    base = _root(root)
    path = base / str(set_name) / MANIFEST
    if not isinstance(set_name, str) or not _is_file(path):
        raise _unknown_set(set_name, base)
    key = _stamp(path)
    if key in _manifest_cache:
        return _manifest_cache[key]
    src = str(path)
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.YAMLError as e:
        raise SceneError(src, "manifest", f"not valid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(data, dict):
        raise SceneError(src, "top level", "expected a mapping with set, kind and scenes")
    scenes = data.get("scenes")
    if not isinstance(scenes, dict) or not scenes:
        raise SceneError(src, "scenes", "expected a non-empty mapping of scene id -> split (train, val or test)")
    for sid, split in scenes.items():
        if split not in SPLITS:
            raise SceneError(src, f"scenes.{sid}", f"split {split!r} is not one of {list(SPLITS)}")
    if data.get("set", set_name) != set_name:
        raise SceneError(src, "set", f"{data.get('set')!r} does not match the folder name {set_name!r}")
    _manifest_cache[key] = data
    return data


def _check_split(split) -> None:
    if split not in SPLIT_CHOICES:
        raise ConfigError(f"unknown split {short(split)}; choose one of {list(SPLIT_CHOICES)}")


def scene_ids(set_name: str, split: str = "all", root: str | Path | None = None) -> list[str]:
    """The ids of a set's scenes in manifest order, all or one split."""
    _check_split(split)
    scenes = _manifest(set_name, root)["scenes"]
    return [str(sid) for sid, s in scenes.items() if split == "all" or s == split]


def scene_path(set_name: str, scene_id: str, root: str | Path | None = None) -> Path:
    return _root(root) / set_name / f"{scene_id}.yaml"


def _load_cached(path: Path) -> Scene:
    try:
        key = _stamp(path)
    except FileNotFoundError:
        raise SceneError(str(path), "file", "listed in the manifest but missing; regenerate the set") from None
    scene = _scene_cache.get(key)
    if scene is None:
        scene = load_scene(path)
        if len(_scene_cache) > 20_000:
            _scene_cache.clear()
        _scene_cache[key] = scene
    return scene


def load_set(set_name: str, split: str = "all", root: str | Path | None = None) -> list[Scene]:
    """The scenes of a set (one split or ``all``) in manifest order."""
    out = []
    for sid in scene_ids(set_name, split, root):
        scene = _load_cached(scene_path(set_name, sid, root))
        if scene.id != sid:
            raise SceneError(str(scene_path(set_name, sid, root)), "id", f"{scene.id!r} does not match the file name {sid!r}")
        out.append(scene)
    return out


def _is_file(path) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL in it
        return False


def find_scene(id_or_path: str | os.PathLike, root: str | Path | None = None) -> Scene:
    """A scene by path (an existing ``.yaml`` file) or by id in any shipped set."""
    if isinstance(id_or_path, os.PathLike):
        path = Path(id_or_path)
        if _is_file(path):
            return load_scene(path)
        raise ConfigError(f"no scene file at {short(str(path))}")
    if not isinstance(id_or_path, str) or not id_or_path.strip():
        raise ConfigError(f"expected a scene id or a path to a scene .yaml file, got {short(id_or_path)}")
    sid = id_or_path.strip()
    if _is_file(sid):
        return load_scene(sid)
    base = _root(root)
    sets = list_sets(base)
    all_ids: list[str] = []
    for set_name in sets:
        ids = scene_ids(set_name, "all", base)
        if sid in ids:
            return _load_cached(scene_path(set_name, sid, base))
        all_ids.extend(ids)
    if sid.endswith((".yaml", ".yml")) or "/" in sid or os.sep in sid:
        raise ConfigError(f"no scene file at {short(sid)} (and no shipped scene has that id)")
    if not all_ids:
        raise ConfigError(f"no scene with id {short(sid)}: there are no scene sets under {base}; give a path to a .yaml file")
    close = _close_ids(sid, all_ids) if len(sid) <= 200 else []
    hint = f" Close matches: {close}." if close else ""
    raise ConfigError(
        f"no scene with id {short(sid)} in the sets {sets} under {base}.{hint} "
        f"Give a scene id (such as {all_ids[0]!r}) or the path of a .yaml file."
    )


def _norm_id(s: str) -> str:
    """Case and zero padding do not matter: 'Pause-1' ~ 'pause-0001'."""
    return re.sub(r"\d+", lambda m: str(int(m.group(0))), s.lower().replace("_", "-"))


def _close_ids(sid: str, ids: list[str], n: int = 5) -> list[str]:
    norm = _norm_id(sid)
    same = [i for i in ids if _norm_id(i) == norm]
    fuzzy = difflib.get_close_matches(sid, ids, n=n, cutoff=0.6)
    return (same + [i for i in fuzzy if i not in same])[:n]
