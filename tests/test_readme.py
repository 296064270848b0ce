"""The README's `>>>` examples run as written (scoring from an env.step() loop, ...)."""

import doctest
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted >= 5, "the README lost its runnable examples"
    assert result.failed == 0
