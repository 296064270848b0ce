"""The house rules: which part of fdenv may import which (ARCHITECTURE.md), checked on every import
statement in the package, function-local ones included; and the light faces (``import fdenv``,
``import fdenv.score``) measured in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each part and the parts it may import directly; what those may import, it may import too.
# Change this table (and say why in ARCHITECTURE.md) when the design changes, not the test.
ALLOWED = {
    "scene": set(),
    "render": {"scene"},
    "room": {"scene", "render"},
    "record": {"scene"},
    "runs": {"record"},
    "timeline": {"record"},  # pictures of one episode: the env's render() and the plots share them
    "sim": {"scene", "render", "room", "record", "timeline"},
    "score": {"record", "scene", "runs"},  # runs: re-scoring and tables read saved run folders
    "wrappers": {"sim", "score"},
    "run": {"scene", "render", "room", "record", "timeline", "sim", "score", "wrappers", "runs"},
    "train": {"sim", "wrappers", "score", "run"},
    "report": {"runs", "score", "record", "scene"},
    "plots": {"runs", "score", "record", "scene", "timeline", "report"},  # bars label runs as the report does
    "browser": {"report", "plots", "timeline", "runs", "score", "record", "scene"},  # the HTML episode browser
    "cli": "*",  # anything, the agents package included
    "testing": "*",  # fdenv.testing runs the baseline agents, as the cli does
}
UTILITIES = {"fdenv", "paths", "windows", "errors", "audio", "sealed", "digest"}  # importable by every part
AGENTS = "fdenv_agents"  # only cli and testing import it


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts[0] == AGENTS:
        return AGENTS
    return "fdenv" if len(parts) == 1 else parts[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] == "agents":
        parts[0] = AGENTS
    return ".".join(parts)


def modules() -> dict[str, Path]:
    out = {}
    for pkg in ("fdenv", "agents"):
        for p in sorted((ROOT / pkg).rglob("*.py")):
            out[module_name(p)] = p
    return out


def imports(name: str, path: Path, known: dict) -> list[tuple[str, int]]:
    """(imported module, line) for every import statement of a module, function-local ones too."""
    is_pkg = path.name == "__init__.py"
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name`` imports mod
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        for t in targets:
            if t.split(".")[0] in ("fdenv", AGENTS):
                while t not in known and "." in t:
                    t = t.rsplit(".", 1)[0]
                out.append((t, node.lineno))
    return out


def closure(layer: str) -> set | str:
    allowed = ALLOWED[layer]
    if allowed == "*":
        return "*"
    seen, todo = set(), list(allowed)
    while todo:
        x = todo.pop()
        if x not in seen:
            seen.add(x)
            todo.extend(ALLOWED[x])
    return seen


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {t for t, _ in imports(name, path, known) if t != name} for name, path in known.items()}


def test_the_table_is_a_layering():
    for layer in ALLOWED:
        c = closure(layer)
        assert c == "*" or layer not in c, f"{layer} may import itself through {ALLOWED[layer]}: a cycle"
    assert set(ALLOWED) | UTILITIES >= {layer_of(m) for m in modules() if not m.startswith(AGENTS)}, \
        "a part of fdenv that the table does not name: add it to ALLOWED"


def test_every_import_follows_the_table():
    known = modules()
    bad = []
    for name, path in known.items():
        src = layer_of(name)
        if src == AGENTS or src in UTILITIES:
            continue  # the agents package sits on top (any of fdenv); utilities: the test below
        for target, line in imports(name, path, known):
            dst = layer_of(target)
            if dst == src or dst in UTILITIES and dst != AGENTS:
                continue
            allowed = closure(src) if src in ALLOWED else set()
            if allowed == "*" or dst in allowed:
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line}: {src} imports {target} ({dst})")
    assert not bad, "imports outside the house rules (ARCHITECTURE.md):\n" + "\n".join(bad)


def test_utilities_import_only_scene_and_utilities():
    known = modules()
    for name, path in known.items():
        if layer_of(name) not in UTILITIES:
            continue
        for target, line in imports(name, path, known):
            if name == "fdenv" and target == "fdenv.sim.registration":
                continue  # ``import fdenv`` registers the env ids (without importing the env)
            assert layer_of(target) in UTILITIES | {"scene"}, f"{path.name}:{line} imports {target}"


def test_no_import_cycles():
    g = graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles (function-local imports count): {cycles}"


def _fresh(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


SIMULATOR = ("fdenv.sim.env", "fdenv.sim.scheduler", "fdenv.sim.labels", "fdenv.room", "fdenv.render")


def test_import_fdenv_score_loads_neither_gymnasium_nor_the_simulator():
    got = _fresh("import sys, json, fdenv.score; print(json.dumps(sorted(sys.modules)))")
    assert "gymnasium" not in got
    assert not [m for m in got if m.startswith(SIMULATOR)], [m for m in got if m.startswith(SIMULATOR)]


@pytest.mark.parametrize("order", ["fdenv first", "gymnasium first"])
def test_import_fdenv_registers_the_ids_without_the_env(order):
    first, second = ("fdenv", "gymnasium") if order == "fdenv first" else ("gymnasium", "fdenv")
    got = _fresh(f"import sys, json, {first}, {second}; import gymnasium as gym; from fdenv.sim.registration import ALL_IDS; "
                 "print(json.dumps({'ids': [i in gym.registry for i in ALL_IDS], "
                 "'env': [m for m in sys.modules if m.startswith(('fdenv.sim.env', 'fdenv.room', 'fdenv.render'))]}))")
    assert got["ids"] and all(got["ids"])
    assert got["env"] == []
