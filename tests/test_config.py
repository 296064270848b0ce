"""Hydra configs (conf/): every option composes and passes the checks; bad values stop at once
with one message listing the valid choices, before any audio is rendered; a tiny sweep runs."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from fdenv.cli.run import ConfigError, check_config, make_agent_from
from fdenv.paths import CONF_DIR

GROUPS = sorted(p.name for p in CONF_DIR.iterdir() if p.is_dir() and p.name not in ("experiment", "train"))


def options(group):
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def _quick(overrides):
    """The tests run on espeak (fast, always installed); fdenv-run's default is kokoro."""
    overrides = list(overrides)
    return overrides if any(o.startswith("tts=") for o in overrides) else [*overrides, "tts=espeak"]


def compose_with(*overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=_quick(overrides))


def test_benchmark_runs_default_to_neural_voices():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        assert compose(config_name="config").tts.backend == "kokoro"


@pytest.mark.parametrize("group,option", [(g, o) for g in GROUPS for o in options(g)])
def test_every_option_composes_and_checks(group, option):
    cfg = compose_with(f"{group}={option}")
    if (group, option) == ("scene", "fdb"):  # needs a folder: says so
        with pytest.raises(ConfigError, match="scene=fdb needs scene.path=PATH"):
            check_config(cfg)
        return
    if (group, option) == ("agent", "python"):  # needs a class: says so
        with pytest.raises(ConfigError, match="agent=python needs agent.target"):
            check_config(cfg)
        return
    check_config(cfg)


@pytest.mark.parametrize("option", [o for o in options("agent") if o != "python"])  # python: needs a class
def test_every_agent_config_builds_its_agent(option):
    """What ``fdenv-run agent=X`` does before the first episode: every knob of the composed config
    reaches the agent's constructor under its own meaning (the turn detector's ``model`` is the
    cascade's recogniser, as in the cascade's config)."""
    from fdenv_agents import AGENTS

    agent = make_agent_from(compose_with(f"agent={option}"))
    assert isinstance(agent, AGENTS[option])


def test_the_turn_detectors_recogniser_is_the_cascades_model_knob():
    from fdenv.score.asr import ASRUnavailable, model_id

    agent = make_agent_from(compose_with("agent=turn_detector", "agent.model=tiny.en"))
    assert agent.config()["asr"] == f"faster-whisper:{model_id('tiny.en')}" and agent.turn_end is not None
    with pytest.raises(ASRUnavailable, match="ASR model 'huge' is neither"):
        make_agent_from(compose_with("agent=turn_detector", "agent.model=huge"))


@pytest.mark.parametrize("override,match", [
    ("sample_rate=22050", r"sample_rate=22050 is not valid; choose one of \[16000, 24000\]"),
    ("scene.split=dev", r"choose one of \['train', 'val', 'test', 'all'\]"),
    ("scene.sets=[pause,chitchat]", "choose one of"),
    ("scene.limit=0", "positive integer"),
    ("seeds=[-1]", "non-negative integers"),
    ("agent.name=orcale", "choose one of"),
    ("tts.backend=festival", r"\['espeak', 'kokoro'\]"),
    ("room.rt60=9.0", "room: .*rt60"),
    ("room.mics=octagon", "room: .*mics"),
    ("scoring.min_speech_ms=-3", "scoring.min_speech_ms=-3: expected a non-negative integer"),
    ("scoring.asr=huge", "scoring.asr: ASR model 'huge' is neither"),
])
def test_bad_values_name_the_field_and_the_choices(override, match):
    cfg = compose_with("room=office", override) if override.startswith("room.") else compose_with(override)
    with pytest.raises(ConfigError, match=match):
        check_config(cfg)


def test_fdb_replay_needs_a_folder_and_no_room(tmp_path):
    with pytest.raises(ConfigError, match="scene.path='/no/such/fdb/folder': no such folder"):
        check_config(compose_with("scene=fdb", "scene.path=/no/such/fdb/folder"))
    with pytest.raises(ConfigError, match="leave room anechoic"):
        check_config(compose_with("scene=fdb", f"scene.path={tmp_path}", "room=office"))


def test_replaying_an_fdb_export_from_the_cli(tmp_path):
    from fdenv.cli.export import export_fdb
    from fdenv.run import run
    from fdenv.scene import load_set
    from fdenv_agents import OracleAgent

    export_fdb(run(OracleAgent(), scenes=load_set("turn_taking", "test")[:2], out=tmp_path / "runs", progress=False),
               tmp_path / "fdb")
    r = cli("scene=fdb", f"scene.path={tmp_path / 'fdb' / 'smooth_turn_taking'}", "agent=talker",
            f"out={tmp_path}/replays", f"hydra.run.dir={tmp_path}/h")
    assert r.returncode == 0, r.stderr[-2000:]
    row = [line for line in r.stdout.splitlines() if line.startswith("talker") and "turn_taking" in line]
    assert row and "  2  TOR 1.00" in row[0]


def cli(*args, timeout=300):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "fdenv.cli.run", *_quick(args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_unknown_group_option_lists_the_choices(tmp_path):
    r = cli("room=attic", f"out={tmp_path}", f"hydra.run.dir={tmp_path}/h")
    assert r.returncode != 0
    assert "room/attic" in r.stderr and "office" in r.stderr and "kitchen" in r.stderr


def test_bad_value_stops_before_rendering(tmp_path):
    r = cli("sample_rate=22050", f"out={tmp_path}/runs", f"hydra.run.dir={tmp_path}/h")
    assert r.returncode == 2
    assert "sample_rate=22050 is not valid; choose one of [16000, 24000]" in r.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("launcher", ["basic", "joblib", "submitit_local"])
def test_tiny_sweep_with_each_launcher(tmp_path, launcher):
    extra = [] if launcher == "basic" else [f"hydra/launcher={launcher}"]
    if launcher == "joblib":
        extra.append("hydra.launcher.n_jobs=2")
    if launcher == "submitit_local":
        extra += ["hydra.launcher.timeout_min=5"]
    r = cli("-m", "agent=silent,oracle", "scene=turn_taking", "scene.limit=1", "timelines=0", "progress=false",
            f"out={tmp_path}/runs", f"hydra.sweep.dir={tmp_path}/sweep", *extra, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    if launcher == "submitit_local":  # jobs run in their own processes; their prints go to logs
        out += "".join(p.read_text() for p in Path(tmp_path, "sweep").rglob("*_log.out"))
    assert "=== 2 runs" in r.stdout
    assert "silent" in r.stdout and "oracle *" in r.stdout
    assert len(list((tmp_path / "runs").iterdir())) == 2
    if launcher == "basic":  # each job's log (Hydra's run.log) has its table and its run folder, no bar
        logs = [p.read_text() for p in Path(tmp_path, "sweep").glob("*/run.log")]
        assert len(logs) == 2 and all("turn_taking  1" in t and "run folder: " in t and "\r" not in t for t in logs)
        assert r.stdout.count("run folder: ") == 2


@pytest.mark.slow
def test_tune_cascade_with_optuna(tmp_path):
    r = cli("-m", "experiment=tune_cascade", "hydra.sweeper.n_trials=2", "scene.limit=1",
            f"out={tmp_path}/runs", f"hydra.sweep.dir={tmp_path}/sweep", timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("objective ") == 2
    best = (tmp_path / "sweep" / "optimization_results.yaml").read_text()
    assert "best_params" in best and "agent.endpoint_silence_ms" in best


def test_a_killed_run_resumes_with_every_episode_once(tmp_path):
    """SIGKILL mid-run, restart with the same config: every episode exactly once."""
    import json
    import signal
    import time

    args = [sys.executable, "-m", "fdenv.cli.run", "agent=silent", "tts=espeak", "scene=turn_taking", "scene.split=all",
            "scene.limit=25", "timelines=0", "progress=false", f"out={tmp_path}/runs", f"hydra.run.dir={tmp_path}/h"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    log = None
    while time.time() < deadline:
        logs = list((tmp_path / "runs").glob("*/episodes.jsonl"))
        if logs and len(logs[0].read_text().splitlines()) >= 3:
            log = logs[0]
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert log is not None, "the run wrote nothing in 120 s"
    done_before = len(log.read_text().splitlines())
    assert done_before < 25, "the run finished before it could be killed"
    r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    keys = [(x["scene_id"], x["seed"]) for x in map(json.loads, log.read_text().splitlines())]
    assert len(keys) == 25 and len(set(keys)) == 25


def test_an_older_set_folder_runs_by_path():
    from fdenv.cli.run import _set_folder
    from fdenv.scene import load_set

    cfg = compose_with("scene=mpe", f"scene.path={Path(__file__).resolve().parent.parent / 'scenes' / 'v1' / 'mpe'}")
    check_config(cfg)
    folder = _set_folder(cfg)
    assert folder is not None and folder.name == "mpe"
    old = load_set("mpe", "test", root=folder.parent)
    assert len(old) == 60 and all(t.gold_facts is None for s in old for t in s.turns)  # the v1 set, 30 test pairs
    with pytest.raises(ConfigError, match="scene=fdb needs scene.path"):
        check_config(compose_with("scene=fdb"))
