"""agent=python agent.target=MODULE:CLASS: your own agent class through the real Hydra config,
runner and scorers (the README's example agent, docs/examples/my_agent.py)."""

from pathlib import Path

import pytest

from fdenv.cli.run import ConfigError, check_config, make_agent_from, run_job
from fdenv.run import read_episodes

from .test_config import compose_with

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "my_agent.py"


def test_the_example_agent_runs_from_the_command_line(tmp_path):
    cfg = compose_with("agent=python", f"agent.target={EXAMPLE}:EnergyAgent", "+agent.silence_ms=600",
                       "scene=turn_taking", "scene.limit=1", f"out={tmp_path}", "progress=false", "timelines=0")
    check_config(cfg)
    (folder,) = run_job(cfg)
    config = (folder / "config.json").read_text()
    assert '"name": "energy"' in config and '"silence_ms": 600' in config and "my_agent.py:EnergyAgent" in config
    line = read_episodes(folder)[0]
    assert not line["privileged"]
    final = next(t for t in line["timeline"] if t["label"] == "final")
    onsets = [a for a, _ in line["segments"]["fdb"]["paper"]["segments"]]
    assert any(final["end"] + 0.6 <= a < final["end"] + 1.2 for a in onsets), (final["end"], onsets)


def test_a_module_in_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text(
        "from fdenv_agents import SilentAgent\n\nclass Quiet(SilentAgent):\n    def __init__(self, level=0):\n"
        "        self.level = level\n\nclass NoAct:\n    def reset(self, *a, **k):\n        pass\n")
    monkeypatch.chdir(tmp_path)
    agent = make_agent_from(compose_with("agent=python", "agent.target=mine:Quiet", "+agent.level=3"))
    assert agent.name == "silent" and agent.config() == {"target": "mine:Quiet", "level": 3}
    with pytest.raises(ConfigError, match=r"NoAct has no act\(\)"):
        check_config(compose_with("agent=python", "agent.target=mine:NoAct"))


@pytest.mark.parametrize("target,match", [
    (None, "agent=python needs agent.target=MODULE:CLASS"),
    ("no_such_module_here:X", "cannot import no_such_module_here"),
    ("fdenv_agents:NoSuchAgent", "fdenv_agents has no NoSuchAgent"),
    ("just_a_name", "is not of the form MODULE:CLASS"),
    ("missing/file.py:X", "no such file missing/file.py"),
])
def test_bad_targets_say_what_to_write(target, match):
    overrides = ["agent=python"] + ([f"agent.target={target}"] if target else [])
    with pytest.raises(ConfigError, match=match):
        check_config(compose_with(*overrides))
