"""The README's env example and each public class's example run as written (doctest)."""

import doctest
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Modules whose public classes carry an example (Gymnasium's docstring style).
DOCTESTED = ("fdenv.sim.env", "fdenv.wrappers", "fdenv.record", "fdenv.score.fdb", "fdenv.score.mpe", "fdenv_agents.base",
             "fdenv.room.effort")


@pytest.mark.parametrize("name", DOCTESTED)
def test_examples_in_docstrings(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name}: no examples found"
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see above)"


def test_the_readme_env_example_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    example = next(b for b in blocks if "gym.make(" in b and "env.step(" in b)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    record = namespace["record"]
    assert record.n_frames > 0 and record.turns and namespace["obs"].shape == (4, 1280)
