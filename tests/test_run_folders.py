"""Run folders under misuse and crashes: record stems that cannot collide, one runner per folder
(an OS lock the kernel releases), lines checked when read, lost records redone, and a finished
folder that reruns without writing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fdenv.errors import RunFolderError, RunLockedError
from fdenv.run import run
from fdenv.runs import EPISODES, LOCK, load_records, locked, read_episodes, record_stem
from fdenv_agents import SilentAgent

from .helpers import scene

TURNS = [{"speaker": "Ann", "text": "Where is the station?", "label": "final"}]


def _sc(sid):
    return scene(TURNS, kind="turn_taking", id=sid)


def test_record_stems_cannot_collide(tmp_path):
    assert record_stem("demo x", 0) != record_stem("demo/x", 0)
    assert record_stem("demo x", 0).startswith("episodes/demo_x-")
    folder = run(SilentAgent(), scenes=[_sc("demo x"), _sc("demo/x")], out=tmp_path, progress=False)
    records = load_records(folder)
    assert sorted(r.scene.id for r in records) == ["demo x", "demo/x"]
    assert len(list((folder / "episodes").glob("*.json"))) == 2


@pytest.mark.parametrize("body, match", [
    (b"[]\n", "line 1: expected a JSON object"),
    (b'{"seed": 0}\n', "line 1: scene_id"),
    (b'{"scene_id": "a", "seed": "0", "record": "r"}\n', "line 1: seed"),
    (b'{"scene_id": "a", "seed": 0, "record": "../../etc/x"}\n', "line 1: record"),
    (b'\xff\xfe\n{"scene_id": "a", "seed": 0, "record": "r"}\n', "line 1 is not a JSON line"),
    (b'{"scene_id": "a", "seed": 0, "record": "r"}\n{"scene_id": "a", "seed": 0, "record": "s"}\n',
     "line 2 repeats the episode of line 1"),
])
def test_lines_of_the_wrong_shape_or_repeated_are_refused(tmp_path, body, match):
    (tmp_path / EPISODES).write_bytes(body)
    with pytest.raises(RunFolderError, match=match) as e:
        read_episodes(tmp_path)
    assert EPISODES in str(e.value) and "remove" in str(e.value)


def test_a_second_runner_is_refused_naming_the_holder_or_waits(tmp_path):
    folder = run(SilentAgent(), scenes=[_sc("a")], out=tmp_path, progress=False)
    with locked(folder):
        with pytest.raises(RunLockedError, match=f"pid {os.getpid()} on "):
            run(SilentAgent(), scenes=[_sc("a")], seeds=[0, 1], out=tmp_path, progress=False, wait=False)
    # a holder in another process: the runner waits until it lets go, then finishes the folder
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from fdenv.runs import locked\n"
        f"with locked({str(folder)!r}):\n    print('held', flush=True); time.sleep(1.5)")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    t = time.monotonic()
    run(SilentAgent(), scenes=[_sc("a")], seeds=[0, 1], out=tmp_path, progress=False)
    assert time.monotonic() - t > 0.5 and holder.wait(10) == 0
    assert [ln["seed"] for ln in read_episodes(folder)] == [0, 1]


SLOW_RUN = """
import sys, time
from fdenv.run import run
from fdenv_agents import SilentAgent
from tests.helpers import scene

slow = SilentAgent()  # the rerun's agent, slowed: the same class, so the same run key
act = slow.act
slow.act = lambda obs, labels: (time.sleep(0.01), act(obs, labels))[1]

turns = [{"speaker": "Ann", "text": "Where is the station?", "label": "final"}]
scenes = [scene(turns, kind="turn_taking", id=f"k{i}") for i in range(4)]
run(slow, scenes=scenes, out=sys.argv[1], progress=False)
"""


def test_kill_9_then_rerun_resumes(tmp_path):
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(out)], cwd=os.path.dirname(os.path.dirname(__file__)))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = [p for p in out.glob(f"*/{EPISODES}") if p.read_bytes().count(b"\n") >= 1]
        if done:
            break
        time.sleep(0.05)
    assert done, "the child run never finished an episode"
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    folder = done[0].parent
    before = len(read_episodes(folder))
    assert 1 <= before < 4
    scenes = [_sc(f"k{i}") for i in range(4)]
    again = run(SilentAgent(), scenes=scenes, out=out, progress=False, wait=False)  # the kernel freed the lock
    assert again == folder
    assert sorted(ln["scene_id"] for ln in read_episodes(folder)) == ["k0", "k1", "k2", "k3"]
    assert len(load_records(folder)) == 4


def test_a_lost_record_is_done_again_and_scoring_skips_it_meanwhile(tmp_path, capsys):
    from fdenv.cli.score import main as score_main

    folder = run(SilentAgent(), scenes=[_sc("a"), _sc("b")], out=tmp_path, progress=False)
    lost = read_episodes(folder)[0]
    os.remove(folder / (lost["record"] + ".flac"))
    with pytest.raises(RunFolderError, match="record of scene 'a'.*rerun"):
        load_records(folder)
    assert [r.scene.id for r in load_records(folder, limit=0)] == []
    assert score_main([str(folder), "--asr", "tiny.en", "--judge", "offline"]) == 0
    assert "record missing, episode skipped" in capsys.readouterr().err
    run(SilentAgent(), scenes=[_sc("a"), _sc("b")], out=tmp_path, progress=False)
    assert sorted(r.scene.id for r in load_records(folder)) == ["a", "b"]
    assert len(read_episodes(folder)) == 2


def test_a_finished_folder_reruns_without_writing(tmp_path, monkeypatch):
    folder = run(SilentAgent(), scenes=[_sc("a")], out=tmp_path, progress=False)
    stamp = {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file() and p.name != LOCK}
    time.sleep(0.01)
    run(SilentAgent(), scenes=[_sc("a")], out=tmp_path, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file() and p.name != LOCK} == stamp
    # a read-only folder (the lock file cannot be opened for writing): done runs rerun, new work says why
    real_open = os.open

    def read_only(path, flags, *a):
        if str(path).endswith(LOCK):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *a)

    monkeypatch.setattr(os, "open", read_only)
    assert run(SilentAgent(), scenes=[_sc("a")], out=tmp_path, progress=False) == folder
    with pytest.raises(RunFolderError, match="cannot be written"):
        run(SilentAgent(), scenes=[_sc("a")], seeds=[0, 1], out=tmp_path, progress=False)
