"""The silent agent: never says anything. Lower bound for answering, upper bound for silence."""

from .base import Agent


class SilentAgent(Agent):
    name = "silent"
