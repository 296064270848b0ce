"""Scenes: the typed model (``schema``), loading with precise errors (``load``), the shipped sets
(``sets``) and their template generators (``generate``)."""

from .load import SceneError, load_scene, scene_from_dict
from .schema import Piece, Scene, Speaker, Turn
from .sets import find_scene, list_sets, load_manifest, load_set, scene_ids, scenes_dir

__all__ = [
    "Piece", "Scene", "SceneError", "Speaker", "Turn", "find_scene", "list_sets", "load_manifest", "load_scene",
    "load_set", "scene_from_dict", "scene_ids", "scenes_dir",
]


def __getattr__(name: str):
    if name == "SCENES_DIR":
        return scenes_dir()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
