"""Your own agent class from the command line, in Hydra's terms:

    fdenv-run agent=python agent.target=my_agent:EchoAgent           # a module on the path or here
    fdenv-run agent=python agent.target=path/to/my_agent.py:EchoAgent +agent.silence_ms=700

``target`` names a class with ``reset(duty, sample_rate, frame_samples, scene=None)`` and
``act(observation, labels=None)``; extra ``+agent.<knob>=value`` overrides go to its constructor.
The run key covers the target, those knobs and the class's own ``config()``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

FORM = "MODULE:CLASS (an importable module, or a module in the current folder) or path/to/file.py:CLASS"


def load_class(target: str):
    """The class that ``target`` names; ``ValueError`` saying what is wrong and the form to use."""
    if not isinstance(target, str) or target.count(":") != 1:
        raise ValueError(f"{target!r} is not of the form {FORM}")
    where, name = target.split(":")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise ValueError(f"{target!r}: no such file {where}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(path.stem, module)
        spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:  # console scripts do not put the current folder on the path
            sys.path.append(os.getcwd())
        try:
            module = importlib.import_module(where)
        except ImportError as e:
            raise ValueError(f"{target!r}: cannot import {where} ({e}); use {FORM}") from None
    cls = getattr(module, name, None)
    if cls is None:
        raise ValueError(f"{target!r}: {where} has no {name}")
    missing = [m for m in ("reset", "act") if not callable(getattr(cls, m, None))]
    if missing:
        raise ValueError(f"{target!r}: {name} has no {' or '.join(missing)}(); an agent needs reset(duty, "
                         "sample_rate, frame_samples, scene=None) and act(observation, labels=None) "
                         "(subclass fdenv_agents.Agent)")
    return cls


class ImportedAgent:
    """The agent ``target`` names, built with ``knobs``; it answers for it to the runner."""

    def __init__(self, target: str | None = None, **knobs):
        if not target:
            raise ValueError(f"agent=python needs agent.target={FORM}")
        cls = load_class(target)
        self.inner = cls(**knobs)
        self.target, self.knobs = target, knobs
        name = getattr(self.inner, "name", None)
        self.name = name if isinstance(name, str) and name != "agent" else cls.__name__
        self.privileged = bool(getattr(self.inner, "privileged", False))
        self.source_module = cls.__module__  # whose source the run key digests

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        return self.inner.reset(duty, sample_rate, frame_samples, scene=scene)

    def act(self, observation, labels=None):
        return self.inner.act(observation, labels) if labels is not None else self.inner.act(observation)

    def config(self) -> dict:
        own = self.inner.config() if callable(getattr(self.inner, "config", None)) else {}
        return {"target": self.target, **self.knobs, **own}

    def __getattr__(self, name):  # stats() and whatever else the class offers
        inner = self.__dict__.get("inner")
        if inner is None:
            raise AttributeError(name)
        return getattr(inner, name)
