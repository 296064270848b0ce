"""fdenv's agents, importable as ``fdenv_agents`` (the folder is ``agents/``; the import name
avoids the OpenAI Agents SDK's top-level ``agents`` package)."""

from .base import Agent, TrackPlayer
from .cascade import CascadeAgent, TurnDetectorAgent
from .imported import ImportedAgent
from .keyword import KeywordAgent
from .moshi import MoshiAgent
from .oracle import OracleAgent
from .policy import PolicyAgent
from .random_agent import RandomAgent
from .realtime import RealtimeAgent, RemoteAgentError
from .scripted import ScriptedAgent
from .silent import SilentAgent
from .talker import TalkerAgent

AGENTS = {"silent": SilentAgent, "talker": TalkerAgent, "oracle": OracleAgent, "scripted": ScriptedAgent,
          "random": RandomAgent, "cascade": CascadeAgent, "keyword": KeywordAgent, "moshi": MoshiAgent,
          "realtime": RealtimeAgent, "policy": PolicyAgent, "turn_detector": TurnDetectorAgent, "python": ImportedAgent}  # python: your own class (agent.target=MODULE:CLASS)


def make_agent(name: str, **kwargs) -> Agent:
    """An agent by name (``silent``, ``talker``, ``oracle``, ``scripted``, ``random``, ``cascade``,
    ``keyword``, ``moshi``, ``realtime``, ``policy``, ``turn_detector``, ``python`` with ``target="module:Class"``)."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; valid agents: {sorted(AGENTS)}")
    return AGENTS[name](**kwargs)


__all__ = ["Agent", "TrackPlayer", "CascadeAgent", "KeywordAgent", "ImportedAgent", "MoshiAgent", "OracleAgent", "PolicyAgent",
           "RandomAgent", "RealtimeAgent", "TurnDetectorAgent",
           "RemoteAgentError", "ScriptedAgent", "SilentAgent", "TalkerAgent", "AGENTS", "make_agent"]
