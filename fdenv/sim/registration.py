"""Environment ids. Variants are registrations with different kwargs, not subclasses (as in
Minigrid): ``fdenv/Room-v0`` takes any scene; the per-set ids play a shipped scene set.

``import fdenv`` registers the ids without importing gymnasium or the env: when gymnasium is
already imported they are registered at once, else right after gymnasium's own import finishes
(``when_gymnasium_loads``). So ``import fdenv.score`` stays light, and ``gym.make`` imports the
env module only when an env is made (the string entry point).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

ENTRY_POINT = "fdenv.sim.env:RoomEnv"
SET_IDS = {
    "fdenv/PauseHandling-v0": "pause",
    "fdenv/Backchannel-v0": "backchannel",
    "fdenv/TurnTaking-v0": "turn_taking",
    "fdenv/Interruption-v0": "interruption",
    "fdenv/MultiParty-v0": "mpe",
    "fdenv/Overlap-v0": "overlap",
}
ALL_IDS = ("fdenv/Room-v0", *SET_IDS)


def register_envs() -> None:
    import gymnasium as gym

    if "fdenv/Room-v0" in gym.registry:
        return
    gym.register("fdenv/Room-v0", entry_point=ENTRY_POINT)
    for env_id, scene_set in SET_IDS.items():
        gym.register(env_id, entry_point=ENTRY_POINT, kwargs={"scene_set": scene_set})


class _AfterGymnasium(importlib.abc.MetaPathFinder):
    """Finds gymnasium the usual way and registers the ids once its module has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)  # once; the usual finders do the finding
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            register_envs()

        loader.exec_module = exec_module
        return spec


def when_gymnasium_loads() -> None:
    """Register the ids now if gymnasium is imported, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(f, _AfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterGymnasium())
