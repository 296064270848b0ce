"""Run keys change whenever results can (the agent's source and files, fdenv's source, the
scenes), a rerun says what it reused, fresh=true starts over, and progress off a terminal is log
lines with the time left."""

import importlib
import logging
import sys

import soundfile as sf

from fdenv.digest import agent_digest, agent_source, fdenv_digest
from fdenv.run import read_episodes, run
from fdenv_agents import ImportedAgent, OracleAgent

from .helpers import scene

SC = scene([{"speaker": "Ann", "text": "So I was thinking [pause=1.0] about the trip to the lake.", "label": "pause"}],
           kind="pause", id="pause-keys")

AGENT = '''
import numpy as np
from fdenv_agents import Agent


class Buzzer(Agent):
    """A buzz at the given level (0: silent)."""
    name = "buzzer"

    def act(self, observation, labels=None):
        return np.full(self.frame_samples, {level}, np.float32) * np.sign(np.sin(np.arange(self.frame_samples) / 5.0))
'''


def _agent(tmp_path, level, name="buzz_agent"):
    path = tmp_path / f"{name}.py"
    path.write_text(AGENT.format(level=level))
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return ImportedAgent(target=f"{path}:Buzzer")


def test_changing_the_agents_source_changes_the_key(tmp_path, caplog):
    a = run(_agent(tmp_path, 0.0), scenes=[SC], out=tmp_path / "runs", progress=False)
    b = run(_agent(tmp_path, 0.3), scenes=[SC], out=tmp_path / "runs", progress=False)  # same config(), new source
    assert a != b
    track = [sf.read(f / (read_episodes(f)[0]["record"] + ".flac"))[0] for f in (a, b)]
    assert not track[0].any() and abs(track[1]).max() > 0.2  # the changed agent's own results, not the old ones
    # the same source again: the same folder, and the runner says it reused it
    with caplog.at_level(logging.INFO, logger="fdenv.run"):
        again = run(_agent(tmp_path, 0.3), scenes=[SC], out=tmp_path / "runs", progress=False)
    assert again == b and f"reused 1 finished episodes from {b}" in caplog.text


def test_a_weight_file_in_the_config_is_digested(tmp_path):
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"one")
    agent = OracleAgent()
    first = agent_digest(agent, {"checkpoint": str(weights)})
    weights.write_bytes(b"two")
    second = agent_digest(agent, {"checkpoint": str(weights)})
    assert first["files"][str(weights)] != second["files"][str(weights)]
    assert first["source"] == second["source"]
    assert agent_source(agent).name == "agents"  # fdenv_agents: the whole package
    assert agent_digest(agent, {"text": "x" * 300, "nul": "a\0b"})["files"] == {}  # texts are not paths
    assert len(fdenv_digest()) == 16


def test_a_scene_edit_changes_the_key(tmp_path):
    other = scene([{"speaker": "Ann", "text": "So I was thinking [pause=1.2] about the trip to the lake.",
                    "label": "pause"}], kind="pause", id="pause-keys")  # same id, new content
    assert run(OracleAgent(), scenes=[SC], out=tmp_path, progress=False) != run(OracleAgent(), scenes=[other],
                                                                                 out=tmp_path, progress=False)


def test_fresh_starts_over_and_progress_logs_time_left(tmp_path, caplog):
    folder = run(OracleAgent(), scenes=[SC], seeds=[0, 1], out=tmp_path, progress=False)
    stamp = (folder / "episodes.jsonl").stat().st_mtime_ns
    with caplog.at_level(logging.INFO, logger="fdenv.run"):
        again = run(OracleAgent(), scenes=[SC], seeds=[0, 1], out=tmp_path, progress=True, fresh=True)
    assert again == folder and len(read_episodes(folder)) == 2
    assert (folder / "episodes.jsonl").stat().st_mtime_ns != stamp
    text = caplog.text
    assert f"fresh=true: removed 2 finished episodes from {folder}" in text
    assert "1/2 episodes, about" in text and "left" in text and "2/2 episodes" in text  # pytest's stderr: no tty
    assert "\r" not in text


def test_fdenv_train_help_lists_its_own_options(monkeypatch, capsys):
    from fdenv.cli import train

    monkeypatch.setattr(sys, "argv", ["fdenv-train", "--help"])
    train.main()
    out = capsys.readouterr().out
    assert "time_limit_min:" in out and "rewards:" in out and "ppo" in out
    assert "agent:" not in out and "scene:" not in out  # fdenv-run's groups, which fdenv-train rejects
