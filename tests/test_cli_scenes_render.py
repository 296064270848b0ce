"""``fdenv-scenes render``: a set's clips land in the on-disk clip cache, so an env starts warm.

Tiny generated sets in a private scenes folder and an empty private cache keep it to a second."""

from __future__ import annotations

import re

import pytest

from fdenv.cli.scenes import main as scenes_cli
from fdenv.render.cache import ClipCache
from fdenv.scene.generate import write_set
from fdenv.sim.env import RoomEnv

LINE = re.compile(r"(\w+)/(\w+): (\d+) scenes, (\d+) clips \(espeak, 16000 Hz\): (\d+) rendered, (\d+) already cached, \d+\.\d+ s")


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A 3-scene pause set, a 2-scene mpe set (duty turns: their own voice) and an empty clip
    cache; returns the cache folder."""
    for name, n in (("pause", 3), ("mpe", 1)):
        write_set(name, tmp_path / "scenes", n=n)
    monkeypatch.setenv("FDENV_SCENES_DIR", str(tmp_path / "scenes"))
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _counts(out: str) -> dict:
    return {m[1]: tuple(map(int, m.groups()[2:])) for m in LINE.finditer(out)}


def test_render_fills_the_cache_and_the_env_starts_warm(tiny, capsys):
    assert scenes_cli(["render", "pause"]) == 0
    out = capsys.readouterr().out
    scenes, clips, rendered, cached = _counts(out)["pause"]
    assert (scenes, rendered, cached) == (3, clips, 0) and clips > 3
    assert f"clip cache: {tiny / 'clips'}" in out
    assert len(list((tiny / "clips").rglob("*.clip"))) == clips

    assert scenes_cli(["render", "pause", "--split", "all", "--tts", "espeak", "--sample-rate", "16000"]) == 0
    assert _counts(capsys.readouterr().out)["pause"] == (3, clips, 0, clips)

    assert scenes_cli(["render", "mpe"]) == 0
    ClipCache.clear_memory()  # the env must find every clip on disk, as a later process would
    for name in ("pause", "mpe"):
        env = RoomEnv(scene_set=name)
        for i in range(len(env.scenes)):
            env.reset(seed=0, options={"scene": i})
        assert env._renderer.synth_calls == 0, name


def test_render_all_sets_adds_a_total_and_writes_clips_held_only_in_memory(tiny, tmp_path, monkeypatch, capsys):
    assert scenes_cli(["render", "pause"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("FDENV_CACHE_DIR", str(tmp_path / "other"))  # this process still holds pause's clips
    assert scenes_cli(["render", "all"]) == 0
    out = capsys.readouterr().out
    counts = _counts(out)
    assert set(counts) == {"pause", "mpe", "all"}
    # rendered to the new disk cache, not skipped (clips the mpe set rendered first, such as the
    # natural humans' backchannels in a shared voice, are already there)
    assert counts["pause"][2] > 0 and counts["pause"][2] + counts["pause"][3] == counts["pause"][1]
    assert counts["all"] == tuple(a + b for a, b in zip(counts["pause"], counts["mpe"]))
    # a set counts its distinct clips; the clips both sets use are on disk once
    assert len(list((tmp_path / "other" / "clips").rglob("*.clip"))) == counts["all"][1] - counts["pause"][3]


@pytest.mark.parametrize("argv, message", [
    (["nope"], "unknown scene set 'nope'"),
    (["pauses"], "did you mean 'pause'"),
    (["pause", "--split", "validation"], "unknown split 'validation'"),
    (["pause", "--tts", "festival"], "unknown TTS back end 'festival'"),
    (["pause", "--sample-rate", "8000"], "--sample-rate 8000"),
])
def test_bad_input_is_one_line_and_exit_2(tiny, argv, message, capsys):
    assert scenes_cli(["render", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fdenv-scenes render: ") and message in err[0]
    assert not tiny.exists()  # nothing rendered
