"""Secrets never reach a config file: API keys come from the environment only.

Hydra writes every override and the composed config into the run's ``.hydra/`` folder before the
job starts, so a key given as ``+judge.api_key=...`` would be saved in plain text. The CLIs check
their command line before Hydra sees it, and the composed config (config files included) after.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

# A field that holds a credential: api_key, apikey, secret, password, token (but not max_tokens),
# auth, credentials. ``..._env`` fields name an environment variable and are fine.
_SECRET = re.compile(r"(api_?key|secret|passw(or)?d|(^|_)token$|(^|_)auth$|bearer|credential)", re.IGNORECASE)
ENV_VARS = {"judge": "ANTHROPIC_API_KEY", "agent": "the variable named by agent.api_key_env (e.g. OPENAI_API_KEY)"}


def is_secret_field(name: str) -> bool:
    name = str(name)
    return not name.lower().endswith("_env") and bool(_SECRET.search(name))


def _refuse(path: str) -> None:
    group = path.split(".", 1)[0]
    where = ENV_VARS.get(group, "an environment variable")
    raise ConfigError(f"{path}: keys and tokens are never taken from the command line or a config file (Hydra "
                      f"would save them with the run); remove it and set {where} in the environment instead")


def check_overrides(args) -> None:
    """Refuse ``[+~]group.field=value`` arguments whose field is a credential."""
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        path = arg.split("=", 1)[0].lstrip("+~")
        if any(is_secret_field(part) for part in path.split(".")):
            _refuse(path)


def check_tree(cfg, prefix: str = "") -> None:
    """Refuse a credential field anywhere in a composed config (dicts, lists, OmegaConf nodes)."""
    from collections.abc import Mapping

    if isinstance(cfg, Mapping) or hasattr(cfg, "items") and hasattr(cfg, "keys"):
        for key, value in cfg.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if is_secret_field(key) and value is not None:
                _refuse(path)
            check_tree(value, path)
    elif isinstance(cfg, (list, tuple)) or type(cfg).__name__ == "ListConfig":
        for i, value in enumerate(cfg):
            check_tree(value, f"{prefix}[{i}]")
