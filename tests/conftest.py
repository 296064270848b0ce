"""Test set-up: offline, a private clip cache, and small hand-made scenes."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory):
    """A fresh cache per test session unless the caller pins one (CI starts empty anyway)."""
    if "FDENV_CACHE_DIR" not in os.environ:
        os.environ["FDENV_CACHE_DIR"] = str(tmp_path_factory.mktemp("fdenv-cache"))
    yield
