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


# GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered.
def _anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        slug = "".join(c for c in line.lstrip("#").strip().lower() if c.isalnum() or c in " -_").replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(markdown: str) -> list[str]:
    """Relative link targets outside fenced code: [text](target), the text may span lines."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", prose) if not re.match(r"[a-z]+:", t)]


DOCUMENTS = ["README.md", "ARCHITECTURE.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_relative_link_reaches_a_file_and_heading(document):
    source = ROOT / document
    text = source.read_text(encoding="utf-8")
    links = _links(text)
    broken = []
    for target in links:
        path, _, anchor = target.partition("#")
        file = (source.parent / path).resolve() if path else source
        if not file.exists():
            broken.append(f"{target}: no file {path}")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert not broken, f"{document}: broken links:\n" + "\n".join(broken)


def test_the_anchor_rule_follows_github():
    text = "# Title\n## Rewards (`fdenv.train.rewards`)\n## The recogniser's confidence, and a model\n## Again\n## Again\n" \
           "```\n## not a heading\n```\n"
    assert _anchors(text) == {"title", "rewards-fdenvtrainrewards", "the-recognisers-confidence-and-a-model",
                              "again", "again-1"}
    assert _links("see [a](docs/x.md#y) and [b](https://e.org) and\n```\n[c](z.md)\n```") == ["docs/x.md#y"]
