"""Run-folder lines: generated episodes.jsonl contents through read_episodes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdenv.runs import read_episodes

from .conftest import outcome
from .strategies import json_values

pytestmark = pytest.mark.fuzz

GOOD = {"scene_id": "a", "seed": 0, "record": "episodes/a.s0", "kind": "turn_taking", "duration_s": 3.0,
        "timeline": [], "privileged": False, "pair_id": None, "condition": None}
line = st.one_of(
    st.builds(lambda sid, seed: json.dumps({**GOOD, "scene_id": sid, "seed": seed, "record": f"episodes/x.s{seed}"}),
              st.sampled_from(["a", "b", "demo x", "demo/x"]), st.integers(0, 2)),
    json_values.map(json.dumps),
    st.sampled_from(["", "[]", "{\"seed\": 0}", "{\"scene_id\": 5, \"seed\": \"0\"}", "null", "{"]),
)
content = st.lists(st.one_of(line.map(lambda s: s.encode("utf-8", "surrogatepass")),
                             st.binary(max_size=20), st.just(b"\xff\xfe\x00")), max_size=6)


def _read(folder):
    return read_episodes(folder)


@settings(max_examples=200)
@given(content, st.booleans())
def test_episode_lines(lines, torn):
    with tempfile.TemporaryDirectory() as d:
        blob = b"\n".join(lines) + (b"" if torn else b"\n")
        (Path(d) / "episodes.jsonl").write_bytes(blob)
        result = outcome(_read, d)
        if isinstance(result, list):
            keys = [(r["scene_id"], r["seed"]) for r in result]
            assert len(keys) == len(set(keys)), "a duplicated episode was read twice"
            assert all(isinstance(r["scene_id"], str) and isinstance(r["seed"], int) for r in result)
