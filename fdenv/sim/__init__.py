"""Simulation: the reactive scheduler, the labels, replay and the Gymnasium env.

``RoomEnv`` is imported on first use, so that ``import fdenv`` (which registers the ids through
``fdenv.sim.registration``) does not load the simulator."""

from .registration import ALL_IDS, SET_IDS, register_envs

__all__ = ["RoomEnv", "ALL_IDS", "SET_IDS", "register_envs"]


def __getattr__(name: str):
    if name == "RoomEnv":
        from .env import RoomEnv

        return RoomEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
