"""Scene files: mutated valid scenes, raw YAML edits and alias structures through load_scene."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fdenv.scene.load import load_scene, scene_from_dict
from fdenv.scene.schema import Scene

from .conftest import outcome
from .strategies import awkward_text, json_values

pytestmark = pytest.mark.fuzz

BASES = [
    {"id": "tt", "kind": "turn_taking", "speakers": ["Ann", {"name": "Bob", "voice": "en-us+m3"}],
     "turns": [{"speaker": "Ann", "text": "Where is the station?", "label": "final", "gap": 0.3}]},
    {"id": "bc", "kind": "backchannel", "speakers": ["Ann"], "bc_distribution": [0.2, 0.8],
     "turns": [{"speaker": "Ann", "text": "So I went there [trp] and then it rained", "label": "monologue"}]},
    {"id": "pz", "kind": "pause", "speakers": ["Ann"], "attributes": {"family": "x"},
     "turns": [{"speaker": "Ann", "text": "I want [pause=0.8] a ticket", "label": "pause"}]},
    {"id": "it", "kind": "interruption", "speakers": ["Ann", "Bob"],
     "turns": [{"speaker": "Ann", "text": "Tell me about trains", "label": "final"},
               {"speaker": "Bob", "text": "Wait, what about buses", "label": "interrupt", "gap": -0.5}]},
    {"id": "mp", "kind": "mpe", "speakers": ["Ann", "Bob"], "condition": "explicit", "pair_id": "p1",
     "turns": [{"speaker": "Ann", "text": "Aria, what time is it in Tokyo?", "label": "T", "gold_answer": "nine",
                "addressee": "Aria"},
               {"speaker": "Bob", "text": "Hmm, let me think", "label": "N4Q", "id": "q"},
               {"speaker": "Ann", "text": "Never mind", "label": "N4R", "resolves": "q"}]},
]


def _paths(d, prefix=()):
    yield prefix
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated_scene(draw):
    data = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        path = draw(st.sampled_from(paths))
        parent = data
        for k in path[:-1]:
            parent = parent[k]
        how = draw(st.sampled_from(["set", "delete", "add"]))
        if how == "set":
            parent[path[-1]] = draw(json_values)
        elif how == "delete" and isinstance(parent, dict):
            parent.pop(path[-1], None)
        elif isinstance(parent, dict):
            parent[draw(awkward_text)] = draw(json_values)
        if not isinstance(data, dict):
            break
    return data


def _load_text(text: str):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "scene.yaml"
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        return load_scene(p)


def _accept(result):
    assert isinstance(result, (Scene, Exception))
    if isinstance(result, Scene):  # a scene that loads can be written with its record
        import json

        json.dumps(result.to_dict())


@settings(max_examples=250)
@given(mutated_scene())
def test_mutated_scene_dicts(data):
    _accept(outcome(scene_from_dict, data, "fuzz"))


@settings(max_examples=120)
@given(mutated_scene())
def test_mutated_scene_files(data):
    try:
        text = yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, UnicodeEncodeError):
        return
    _accept(outcome(_load_text, text))


@settings(max_examples=120)
@given(st.sampled_from(BASES), st.lists(st.tuples(st.integers(0, 400), awkward_text), min_size=1, max_size=4),
       st.integers(0, 400))
def test_raw_yaml_edits(base, edits, cut):
    text = yaml.safe_dump(base)
    for at, piece in edits:
        at = min(at, len(text))
        text = text[:at] + piece + text[at:]
    if cut % 5 == 0:
        text = text[: cut * 2]
    _accept(outcome(_load_text, text))


@settings(max_examples=60)
@given(st.integers(1, 12), st.integers(1, 12), st.booleans(), st.sampled_from(["attributes", "turns", "speakers", "id"]))
def test_alias_structures(width, depth, self_ref, field):
    lines = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, depth):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    value = "{" + ", ".join(lines) + "}" if not self_ref else "&s [*s, x]"
    body = {"attributes": "{}", "turns": "[{speaker: Ann, text: hello there, label: final}]", "speakers": "[Ann]",
            "id": "al"}
    body[field] = value
    text = "kind: turn_taking\n" + "".join(f"{k}: {v}\n" for k, v in body.items())
    _accept(outcome(_load_text, text))
