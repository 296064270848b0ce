"""FDB task folders: malformed files raise FDBImportError naming the file and the field; scene ids
name the task folder so that two folders with the same sample ids stay apart."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from fdenv.errors import FDBImportError
from fdenv.sim.replay import load_fdb_task, load_fdb_tasks
from fdenv.sim.env import RoomEnv


def _sample(folder, task="turn_taking", seconds=2.0, audio=None, **files):
    folder.mkdir(parents=True, exist_ok=True)
    if audio is None:
        t = np.arange(int(seconds * 16000)) / 16000
        audio = (0.1 * np.sin(2 * np.pi * 220 * t) * (t < seconds * 0.7)).astype(np.float32)
    sf.write(str(folder / "input.wav"), audio, 16000, subtype="FLOAT" if audio.dtype == np.float32 else "PCM_16")
    defaults = {"turn_taking": {"turn_taking.json": [{"timestamp": [1.2, 1.3]}]},
                "pause": {"pause.json": [{"timestamp": [0.5, 0.9]}]},
                "interruption": {"interrupt.json": [{"timestamp": [1.0, 1.4], "context": "a", "interrupt": "b"}]}}
    for name, data in {**defaults.get(task, {}), **files}.items():
        (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))
    return folder


def test_two_task_folders_with_the_same_sample_get_distinct_scenes(tmp_path):
    a = _sample(tmp_path / "tt_a" / "1", seconds=2.0)
    b = _sample(tmp_path / "tt_b" / "1", seconds=3.0)
    env = RoomEnv(scene=[f"fdb:{a.parent}", f"fdb:{b.parent}"])
    ids = [s.id for s in env.scenes]
    assert ids == ["fdb-turn_taking-tt_a-1", "fdb-turn_taking-tt_b-1"]
    lengths = []
    for i in range(2):
        env.reset(options={"scene": i})
        lengths.append(env._replays[ids[i]][0].shape[0])
    assert lengths == [32000, 48000]  # each episode replays its own folder's audio


@pytest.mark.parametrize("files, field", [
    ({"turn_taking.json": "{not json"}, "line 1, column 2"),
    ({"turn_taking.json": b"\xff\xfe".decode("latin-1")}, "not valid JSON"),
    ({"turn_taking.json": []}, "top level"),
    ({"turn_taking.json": [5]}, r"\[0\]"),
    ({"turn_taking.json": [{"timestamp": []}]}, r"\[0\]\.timestamp"),
    ({"turn_taking.json": [{"timestamp": ["x"]}]}, r"\[0\]\.timestamp\[0\]"),
    ({"turn_taking.json": [{"timestamp": [1e9]}]}, r"outside input\.wav"),
    ({"turn_taking.json": [{"timestamp": [-1.0]}]}, r"outside input\.wav"),
    ({"turn_taking.json": '[{"timestamp": [NaN]}]'}, r"expected a time"),
    ({"transcription.json": {"chunks": [{"text": "hi", "timestamp": [1.0, 0.5]}]}}, "end is before the start"),
    ({"transcription.json": {"chunks": 3}}, "chunks"),
    ({"transcription.json": {"chunks": [[1, 2]]}}, r"chunks\[0\]"),
    ({"transcription.json": {"chunks": [{"text": "hi", "timestamp": 7}]}}, r"chunks\[0\]\.timestamp"),
])
def test_malformed_turn_taking_files(tmp_path, files, field):
    folder = _sample(tmp_path / "task" / "1", **files)
    with pytest.raises(FDBImportError, match=field) as e:
        load_fdb_task(folder)
    assert str(folder) in str(e.value)


@pytest.mark.parametrize("task, files, match", [
    ("pause", {"pause.json": [{"timestamp": [0.9, 0.5]}]}, "end is before the start"),
    ("pause", {"pause.json": [{"timestamp": [0.5, 0.9]}, {"timestamp": [0.7, 1.0]}]}, "pauses overlap"),
    ("pause", {"pause.json": [{"stamp": 1}]}, r"\[0\]\.timestamp"),
    ("interruption", {"interrupt.json": [{"timestamp": [1.4, 1.0]}]}, "end is before the start"),
    ("interruption", {"interrupt.json": [{"timestamp": [1.0, 1.4], "context": 5}]}, r"\[0\]\.context"),
    ("backchannel", {}, "distribution"),
    ("backchannel", {"gt_distribution.json": {"1": [1e308, 1e308]}}, "positive sum"),
    ("backchannel", {"gt_distribution.json": [1, 2]}, "top level"),
])
def test_malformed_task_files(tmp_path, task, files, match):
    folder = _sample(tmp_path / "task" / "1", task=task, **files)
    with pytest.raises(FDBImportError, match=match):
        load_fdb_task(folder)


@pytest.mark.parametrize("audio, match", [
    (np.zeros(0, np.float32), "too short"),
    (np.zeros(1, np.float32), "too short"),
    (np.full(16000, np.nan, np.float32), "NaN"),
])
def test_bad_input_audio(tmp_path, audio, match):
    folder = _sample(tmp_path / "task" / "1", audio=audio)
    with pytest.raises(FDBImportError, match=match) as e:
        load_fdb_task(folder)
    assert "input.wav" in str(e.value)


def test_input_that_is_not_audio(tmp_path):
    folder = _sample(tmp_path / "task" / "1")
    (folder / "input.wav").write_bytes(b"RIFF not really")
    with pytest.raises(FDBImportError, match=r"input\.wav: audio: cannot be read as audio"):
        load_fdb_task(folder)


def test_control_characters_in_transcripts_are_dropped(tmp_path):
    folder = _sample(tmp_path / "task" / "1",
                     **{"transcription.json": {"chunks": [{"text": "hel\x00lo [x]", "timestamp": [0.1, 0.5]}]}})
    scene, _, _ = load_fdb_task(folder)
    assert scene.turns[0].text == "hel lo (x)"


def test_task_folder_that_is_not_a_folder(tmp_path):
    with pytest.raises(FDBImportError, match="not a folder"):
        load_fdb_tasks(tmp_path / "nope")
