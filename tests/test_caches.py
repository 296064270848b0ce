"""Cache entries carry a digest of their inputs and contents: a wrong, changed, torn or misplaced
entry is discarded with a CacheWarning and computed again, never served as a result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fdenv import sealed
from fdenv.errors import CacheWarning
from fdenv.render.cache import ClipCache, clip_key
from fdenv.score import asr, vad
from fdenv.score import judge as J

from .test_score_judge import Server, reply
from .test_score_judge import make  # noqa: F401  (fixture)


def _reseal(path, payload):
    """Rewrite a JSON entry with a new payload and a valid seal: only the value check can catch it."""
    data = json.loads(path.read_text())
    sealed.save_json(path, data["key"], payload)


@pytest.mark.parametrize("bad", [99, "banana", True, -1, None, [3]])
def test_judge_relevance_entry_of_the_wrong_kind_is_asked_again(make, tmp_path, bad):
    server = Server(reply('{"rating": 4}'))
    j, _ = make(server)
    assert j.relevance("sure", "can we talk about dinner") == 4
    (path,) = (tmp_path / "judge").rglob("*.json")
    _reseal(path, bad)
    j2, _ = make(server)
    with pytest.warns(CacheWarning, match="not a relevance verdict|no seal|contents"):
        assert j2.relevance("sure", "can we talk about dinner") == 4
    assert len(server.requests) == 2


def test_judge_entry_changed_or_moved_is_asked_again(make, tmp_path):
    server = Server(reply('{"correct": true}'))
    j, _ = make(server)
    assert j.correct("340", "340") is True
    (path,) = (tmp_path / "judge").rglob("*.json")
    data = json.loads(path.read_text())
    data["payload"] = False  # hand-edited: the seal no longer matches
    path.write_text(json.dumps(data))
    with pytest.warns(CacheWarning, match="contents changed"):
        assert make(server)[0].correct("340", "340") is True
    # a valid entry copied under another question's key is not that question's verdict
    j.correct("12", "12")
    paths = sorted((tmp_path / "judge").rglob("*.json"))
    paths[1].write_bytes(paths[0].read_bytes())
    with pytest.warns(CacheWarning, match="other inputs"):
        j3 = make(server)[0]
        assert j3.correct("340", "340") is True and j3.correct("12", "12") is True
    assert len(server.requests) == 4


@pytest.mark.parametrize("content, match", [(b"", "no seal"), (b"PK\x03\x04junk", "no seal"),
                                            (b"FDSEAL1\n{\"key\": 1}\n", "unreadable")])
def test_clip_file_torn_is_discarded(tmp_path, content, match):
    k = clip_key("espeak", "v1", "en-us+m3", "Hi.", 16000, "1")
    c = ClipCache(tmp_path)
    c.put(k, np.ones(10, np.float32))
    ClipCache.clear_memory()
    c.path(k).write_bytes(content)
    with pytest.warns(CacheWarning, match=match):
        assert ClipCache(tmp_path).get(k) is None
    assert not c.path(k).exists()


def test_clip_file_with_other_samples_is_discarded(tmp_path):
    k1 = clip_key("espeak", "v1", "en-us+m3", "Hi.", 16000, "1")
    k2 = clip_key("espeak", "v1", "en-us+m3", "Bye.", 16000, "1")
    c = ClipCache(tmp_path)
    c.put(k1, np.ones(10, np.float32))
    c.put(k2, np.zeros(20, np.float32))
    ClipCache.clear_memory()
    c.path(k1).write_bytes(c.path(k2).read_bytes())  # a well-formed clip, but of another text
    with pytest.warns(CacheWarning, match="other inputs"):
        assert c.get(k1) is None
    sealed.save_array(c.path(k2), k2, np.full(20, np.nan, np.float32))
    with pytest.warns(CacheWarning, match="NaN"):
        assert c.get(k2) is None


def test_vad_probabilities_wrong_or_empty_are_recomputed(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    x = np.concatenate([np.zeros(8000), 0.3 * rng.standard_normal(16000), np.zeros(8000)]).astype(np.float32)
    want = vad.region_probs(x)
    (path,) = (tmp_path / "vad").rglob("*.probs")
    key = path.name.split(".")[0]  # the file is named by its key
    cases = [(b"", "no seal"), (b"FDSEAL1\n{torn", "unreadable"), (None, "outside"), ("short", "expected")]
    for content, match in cases:
        if content is None:
            sealed.save_array(path, key, np.full(len(want[0][2]), 7.0))
        elif content == "short":
            sealed.save_array(path, key, np.zeros(3))
        else:
            path.write_bytes(content)
        with pytest.warns(CacheWarning, match=match):
            assert vad.region_probs(x) == want


def test_asr_words_wrong_are_transcribed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    calls = []

    def fake_run(x, model, language, args):
        calls.append(1)
        return [asr.Word("hello", 0.1, 0.4)]

    monkeypatch.setattr(asr, "_run", fake_run)
    monkeypatch.setattr(asr, "model_id", lambda model=None: "fake")
    x = np.full(16000, 0.1, np.float32)
    assert asr.transcribe(x, snap=False) == [asr.Word("hello", 0.1, 0.4)] and len(calls) == 1
    assert asr.transcribe(x, snap=False) == [asr.Word("hello", 0.1, 0.4)] and len(calls) == 1  # served from the cache
    (path,) = (tmp_path / "asr").rglob("*.json")
    for bad, match in [([["hello", 0.1, 99.0]], "outside"), ([["hello", "a", 1]], "not \\[text"), ({"w": 1}, "list")]:
        _reseal(path, bad)
        with pytest.warns(CacheWarning, match=match):
            assert asr.transcribe(x, snap=False) == [asr.Word("hello", 0.1, 0.4)]
    path.write_text("")
    with pytest.warns(CacheWarning, match="unreadable"):
        asr.transcribe(x, snap=False)
    assert len(calls) == 5


def test_judge_secrets_and_base_url(monkeypatch):
    from fdenv.errors import ConfigError

    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    with pytest.raises(ConfigError, match="judge.api_key: .*ANTHROPIC_API_KEY"):
        J.make_judge({"kind": "anthropic", "api_key": "sk-123"})
    with pytest.raises(ConfigError, match="judge.base_ur: unknown setting; did you mean 'base_url'"):
        J.make_judge({"kind": "anthropic", "base_ur": "http://127.0.0.1:9"})
    j = J.make_judge({"kind": "anthropic", "base_url": "http://127.0.0.1:9/gw", "max_retries": 0})
    assert str(j.client.base_url).startswith("http://127.0.0.1:9/gw")
    assert j.relevance("sure", "dinner plans tonight") is None  # nothing listens there: missing, with a reason
    assert "APIConnectionError" in j.last_failure


@pytest.mark.parametrize("module, arg", [("run", "+judge.api_key=sk-secret-1"), ("run", "agent.token=sk-secret-1"),
                                         ("train", "+env.password=sk-secret-1")])
def test_cli_refuses_secrets_before_hydra_writes_anything(tmp_path, monkeypatch, capsys, module, arg):
    import importlib

    cli = importlib.import_module(f"fdenv.cli.{module}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [f"fdenv-{module}", arg])
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "never taken from the command line" in err and "environment" in err and "sk-secret-1" not in err
    assert not any("sk-secret-1" in p.read_text(errors="ignore") for p in tmp_path.rglob("*") if p.is_file())


def test_secret_fields_anywhere_in_a_config_are_refused():
    from fdenv.cli.secrets import check_tree, is_secret_field
    from fdenv.errors import ConfigError

    assert not any(map(is_secret_field, ["max_tokens", "api_key_env", "model", "tokens_per_s"]))
    assert all(map(is_secret_field, ["api_key", "apiKey", "token", "access_token", "secret", "password"]))
    check_tree({"agent": {"api_key_env": "OPENAI_API_KEY", "max_tokens": 64}})
    with pytest.raises(ConfigError, match=r"scoring\.extra\[0\]\.secret"):
        check_tree({"scoring": {"extra": [{"secret": "x"}]}})


def test_missing_verdicts_say_why_in_results_and_the_report_table(tmp_path):
    from fdenv.report import format_runs, run_summary
    from fdenv.run import read_episodes, run
    from fdenv.scene import load_set
    from fdenv_agents import OracleAgent

    class Unreachable(J.OfflineJudge):  # what the Claude judge does with no network: a missing verdict
        name = "anthropic:unreachable"

        def relevance(self, response, interrupt, context=""):
            self.asked += 1
            self.last_failure = "gave up after 5 attempts: APIConnectionError"
            return None

    scenes = load_set("interruption", "test")[:1]
    folder = run(OracleAgent(), scenes=scenes, out=tmp_path, progress=False,
                 scoring={"judge": Unreachable(), "asr": None})
    results = [ln["fdb"][p] for ln in read_episodes(folder) for p in ("paper", "fdb_code")]
    judged = [r for r in results if r.get("judge")]
    assert judged and all(r["relevance"] is None and "APIConnectionError" in r["judge_failure"] for r in judged)
    table = format_runs([run_summary(folder)])
    assert "judged 0/" in table and "APIConnectionError" in table


def test_asr_decoding_overrides_reach_the_model_and_key_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path))
    seen = []

    def fake_run(x, model, language, args):
        seen.append(dict(args))
        return [asr.Word("hi" if args["vad_filter"] else "hello", 0.1, 0.4)]

    monkeypatch.setattr(asr, "_run", fake_run)
    monkeypatch.setattr(asr, "model_id", lambda model=None: "fake")
    x = np.full(16000, 0.1, np.float32)
    assert asr.transcribe(x, snap=False)[0].text == "hi"
    plain = {"vad_filter": False, "beam_size": 5}
    assert asr.transcribe(x, snap=False, decode=plain)[0].text == "hello"  # not the cached "hi"
    assert seen == [asr.DECODE, {**asr.DECODE, **plain}]
    assert asr.transcribe(x, snap=False, decode=plain)[0].text == "hello" and len(seen) == 2  # its own cache entry
    for bad in ({"beams": 5}, {"word_timestamps": False}):
        with pytest.raises(ValueError, match="cannot be overridden; valid: .*beam_size"):
            asr.transcribe(x, decode=bad)
