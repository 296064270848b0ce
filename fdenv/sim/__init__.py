"""Simulation: the reactive scheduler, the labels and the Gymnasium env."""

from .env import RoomEnv
from .registration import ALL_IDS, SET_IDS, register_envs

__all__ = ["RoomEnv", "ALL_IDS", "SET_IDS", "register_envs"]
