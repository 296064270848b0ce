"""Where the repository's data folders are: shipped scenes and Hydra configs.

fdenv is installed editable from its repository (``make install``), so both live next to the
package; environment variables point elsewhere when needed.
"""

import os
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent
SCENES_DIR = Path(os.environ.get("FDENV_SCENES_DIR", REPO_DIR / "scenes"))
CONF_DIR = Path(os.environ.get("FDENV_CONF_DIR", REPO_DIR / "conf"))


def cache_dir() -> Path:
    """Clip, transcript and verdict caches: ``$FDENV_CACHE_DIR``, else ``~/.cache/fdenv``."""
    return Path(os.environ.get("FDENV_CACHE_DIR") or Path.home() / ".cache" / "fdenv").expanduser()
