"""fdenv's agents, importable as ``fdenv_agents`` (the folder is ``agents/``; the import name
avoids the OpenAI Agents SDK's top-level ``agents`` package)."""

from .base import Agent, TrackPlayer
from .oracle import OracleAgent
from .scripted import ScriptedAgent
from .silent import SilentAgent
from .talker import TalkerAgent

AGENTS = {"silent": SilentAgent, "talker": TalkerAgent, "oracle": OracleAgent, "scripted": ScriptedAgent}


def make_agent(name: str, **kwargs) -> Agent:
    """An agent by name (``silent``, ``talker``, ``oracle``, ``scripted``)."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; valid agents: {sorted(AGENTS)}")
    return AGENTS[name](**kwargs)


__all__ = ["Agent", "TrackPlayer", "OracleAgent", "ScriptedAgent", "SilentAgent", "TalkerAgent", "AGENTS", "make_agent"]
