"""Cache files: generated file contents through the caches' readers."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from .conftest import outcome
from .strategies import json_values

pytestmark = pytest.mark.fuzz

blobs = st.one_of(st.binary(max_size=64), json_values.map(lambda v: json.dumps(v).encode()),
                  st.sampled_from([b"", b"FDSEAL1\n", b"FDSEAL1\n{}\n", b"FDSEAL1\n{\"key\": \"k\", \"dtype\": \"<f4\", "
                                   b"\"shape\": [1000000000], \"crc32\": 0}\n\x00\x00\x00\x00"]))


@settings(max_examples=100)
@given(blobs, st.booleans())
def test_clip_cache_files(blob, prefix_seal):
    from fdenv.render.cache import ClipCache, clip_key

    with tempfile.TemporaryDirectory() as d:
        key = clip_key("espeak", "v", "voice", "text", 16000, "p")
        cache = ClipCache(d)
        path = cache.path(key)
        path.parent.mkdir(parents=True)
        path.write_bytes((b"FDSEAL1\n" if prefix_seal else b"") + blob)
        ClipCache.clear_memory()
        got = outcome(cache.get, key)
        assert got is None or (got.dtype == np.float32 and got.ndim == 1)


@settings(max_examples=100)
@given(st.sampled_from(["relevance", "correctness", "acknowledgement"]), json_values, st.booleans())
def test_judge_cache_files(task, payload, reseal):
    """A judge cache entry holding anything: the verdict served is one of the task's type."""
    import os

    from fdenv import sealed
    from fdenv.score import judge as J

    class Client:  # answers every question, so a discarded entry is asked again
        class messages:
            @staticmethod
            def create(**kw):
                text = {"relevance": '{"rating": 2}', "correctness": '{"correct": true}',
                        "acknowledgement": '{"label": "intrusion"}'}[task]
                return type("M", (), {"content": [type("B", (), {"type": "text", "text": text})()]})()

    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("FDENV_CACHE_DIR")
        os.environ["FDENV_CACHE_DIR"] = d
        try:
            j = J.AnthropicJudge(model="m", client=Client())
            fields = {"relevance": ("resp", "interrupt"), "correctness": ("ans", "gold"), "acknowledgement": ("mm", 0.4)}[task]
            ask = {"relevance": j.relevance, "correctness": j.correct, "acknowledgement": j.acknowledgement}[task]
            ask(*fields)
            (path,) = Path(d).rglob("*.json")
            try:
                if not reseal:
                    raise ValueError
                sealed.save_json(path, json.loads(path.read_text())["key"], payload)
            except ValueError:  # not resealed, or not sealable (NaN): written as it is
                path.write_text(json.dumps(payload))
            v = outcome(ask, *fields)
            assert (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 5) if task == "relevance" \
                else isinstance(v, bool)
        finally:
            if old is None:
                os.environ.pop("FDENV_CACHE_DIR", None)
            else:
                os.environ["FDENV_CACHE_DIR"] = old


@settings(max_examples=80)
@given(st.sampled_from(["vad", "asr"]), blobs, st.booleans())
def test_vad_and_asr_cache_files(kind, blob, reseal):
    import os

    from fdenv import sealed
    from fdenv.score import asr, vad

    x = np.concatenate([np.zeros(4000), 0.3 * np.sin(np.arange(8000) / 5.0), np.zeros(4000)]).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("FDENV_CACHE_DIR")
        os.environ["FDENV_CACHE_DIR"] = d
        real_run = asr._run
        asr._run = lambda x, model, language, args: [asr.Word("hi", 0.3, 0.6)]
        real_id = asr.model_id
        asr.model_id = lambda model=None: "fake"
        try:
            call = (lambda: vad.region_probs(x)) if kind == "vad" else (lambda: asr.transcribe(x, snap=False))
            want = call()
            (path,) = (Path(d) / kind).rglob("*.*")
            resealed = False
            if reseal and kind == "asr":
                try:  # a sealed entry of any value: trusted only if it is a word list for this track
                    resealed = sealed.save_json(path, json.loads(path.read_text())["key"], json.loads(blob.decode()))
                except ValueError:
                    pass
            if not resealed:
                path.write_bytes(blob)
            got = outcome(call)
            if resealed:
                assert isinstance(got, list) and all(isinstance(w, asr.Word) and -0.5 <= w.start <= 1.5 for w in got)
            else:
                assert got == want
        finally:
            asr._run, asr.model_id = real_run, real_id
            if old is None:
                os.environ.pop("FDENV_CACHE_DIR", None)
            else:
                os.environ["FDENV_CACHE_DIR"] = old
