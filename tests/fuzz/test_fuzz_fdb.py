"""FDB task folders: generated input.wav files and task JSON through load_fdb_task."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import outcome
from .strategies import json_values, numbers

pytestmark = pytest.mark.fuzz

TASK_FILES = ["pause.json", "turn_taking.json", "interrupt.json", None]


def _load(folder):
    try:
        from fdenv.sim.replay import load_fdb_task
    except ImportError:
        from fdenv.scene.fdb_import import load_fdb_task
    return load_fdb_task(folder)


times = st.one_of(st.floats(-1, 4), numbers, st.none(), st.text(max_size=3))
spans = st.one_of(st.lists(times, max_size=3), times, json_values)
task_json = st.one_of(
    st.lists(st.fixed_dictionaries({"timestamp": spans}, optional={"context": json_values, "interrupt": json_values}),
             max_size=3),
    json_values,
    st.sampled_from(["", "{", "[{\"timestamp\": [NaN, Infinity]}]", "\xff"]),
)
chunks = st.lists(st.one_of(st.fixed_dictionaries({"text": json_values, "timestamp": spans}), json_values), max_size=4)


@st.composite
def folders(draw):
    n = draw(st.sampled_from([0, 1, 100, 4000, 16000, 40000]))
    rate = draw(st.sampled_from([8000, 16000, 44100]))
    audio = (0.1 * np.sin(np.arange(n) / 7.0)).astype(np.float32)
    if n and draw(st.booleans()):
        audio[draw(st.integers(0, n - 1))] = draw(st.sampled_from([np.nan, np.inf, 5.0]))
    files = {}
    task = draw(st.sampled_from(TASK_FILES))
    if task:
        files[task] = draw(task_json)
    if draw(st.booleans()):
        files["transcription.json"] = draw(st.one_of(st.fixed_dictionaries({"chunks": chunks}), chunks, json_values))
    if task is None and draw(st.booleans()):
        files["gt_distribution.json"] = draw(st.one_of(
            st.fixed_dictionaries({"1": st.lists(st.one_of(st.floats(0, 1), numbers), max_size=5)}), json_values))
    garbage_wav = draw(st.booleans()) and draw(st.booleans()) and draw(st.booleans())
    return audio, rate, files, garbage_wav


@settings(max_examples=250)
@given(folders())
def test_fdb_sample_folders(spec):
    audio, rate, files, garbage_wav = spec
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d) / "task" / "1"
        folder.mkdir(parents=True)
        if garbage_wav:
            (folder / "input.wav").write_bytes(b"RIFF\x00\x00garbage" + audio.tobytes()[:64])
        else:
            sf.write(str(folder / "input.wav"), audio, rate, subtype="FLOAT")
        for name, data in files.items():
            text = data if isinstance(data, str) else json.dumps(data)
            (folder / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        result = outcome(_load, folder)
        if isinstance(result, tuple):
            scene, x, gold = result
            assert x.ndim == 1 and np.isfinite(x).all() and len(x) > 0
            assert all(0 <= t.start <= t.end <= gold["duration_s"] + 1e-6 for t in gold["turns"])
            json.dumps(scene.to_dict())
