"""``fdenv-run``: one agent over scene sets, scored, into a run folder, behind Hydra.

    fdenv-run agent=oracle scene=turn_taking scene.split=val room=office room.echo_gain=0.5
    fdenv-run -m agent=silent,talker,oracle          # the main job: a sweep, then one table
    fdenv-run scene=fdb scene.path=FDB/smooth_turn_taking agent=cascade   # replay FDB's own data
    fdenv-run agent=python agent.target=docs/examples/my_agent.py:EnergyAgent +agent.silence_ms=700

Every option is checked before any audio is rendered (``check_config``); a bad value stops with
one message that lists the valid choices.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from ..errors import ConfigError
from .secrets import check_overrides, check_tree
from ..paths import CONF_DIR

log = logging.getLogger(__name__)


def check_config(cfg) -> None:
    """Reject a bad configuration with one clear message, before anything is rendered. The env's
    arguments go through the env's own checks (``fdenv.sim.options``)."""
    from fdenv_agents import AGENTS

    from ..sim import options

    check_tree(cfg)
    options.choice("agent.name", cfg.agent.name, sorted(AGENTS))
    if cfg.agent.name == "python":  # your own class: import it now, before anything is rendered
        from fdenv_agents.imported import FORM, load_class

        if not cfg.agent.get("target"):
            raise ConfigError(f"agent=python needs agent.target={FORM}")
        try:
            load_class(str(cfg.agent.target))
        except ValueError as e:
            raise ConfigError(f"agent.target: {e}") from None
    for s in cfg.scene.sets:
        options.scene_set(s, "scene.sets")
    options.split(cfg.scene.split, "scene.split")
    options.room(_room(cfg))  # the room, checked as the env checks it
    if _set_folder(cfg) is not None:  # scene.path=scenes/v1/mpe: a set folder of scene files
        pass
    elif "path" in cfg.scene and not cfg.scene.sets:  # scene=fdb: a Full-Duplex-Bench task folder, replayed
        if cfg.scene.path is None:
            raise ConfigError("scene=fdb needs scene.path=PATH: a downloaded Full-Duplex-Bench task folder")
        if not Path(str(cfg.scene.path)).is_dir():
            raise ConfigError(f"scene.path={cfg.scene.path!r}: no such folder (a Full-Duplex-Bench task folder)")
        if _room(cfg) != "anechoic":
            raise ConfigError("scene=fdb replays recorded audio: leave room anechoic (no room=...)")
    if cfg.scene.limit is not None and (not isinstance(cfg.scene.limit, int) or cfg.scene.limit < 1):
        raise ConfigError(f"scene.limit={cfg.scene.limit!r}: expected a positive integer or null")
    options.sample_rate(cfg.sample_rate)
    options.behaviour(cfg.get("behaviour", "natural"))
    options.tts(cfg.tts.backend, "tts.backend")
    seeds = list(cfg.seeds)
    if not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
        raise ConfigError(f"seeds={seeds!r}: expected a non-empty list of non-negative integers")
    ms = cfg.scoring.get("min_speech_ms")
    if not isinstance(ms, int) or ms < 0:
        raise ConfigError(f"scoring.min_speech_ms={ms!r}: expected a non-negative integer (milliseconds)")
    if cfg.scoring.get("asr") is not None:
        from ..score.asr import ASRUnavailable, resolve_model

        try:  # a name or folder, resolved now rather than at the first speech to score
            resolve_model(str(cfg.scoring.asr))
        except ASRUnavailable as e:
            raise ConfigError(f"scoring.asr: {e}") from None


def _set_folder(cfg):
    """``scene.path`` when it is a scene-set folder (one with a manifest, e.g. ``scenes/v1/mpe``)."""
    path = cfg.scene.get("path")
    if path is not None and (Path(str(path)) / "manifest.yaml").is_file():
        return Path(str(path)).resolve()
    return None


def _room(cfg):
    from omegaconf import OmegaConf

    room = {k: v for k, v in OmegaConf.to_container(cfg.room, resolve=True).items() if v is not None}
    if room.get("preset", "anechoic") == "anechoic" and len(room) <= 1:
        return "anechoic"  # the preset: free field, with the microphone's self-noise
    return room


def make_agent_from(cfg):
    from omegaconf import OmegaConf

    from fdenv_agents import make_agent

    knobs = OmegaConf.to_container(cfg.agent, resolve=True)
    name = knobs.pop("name")
    try:
        return make_agent(name, **knobs)
    except TypeError as e:  # an unknown knob: say which ones exist
        import inspect

        from fdenv_agents import AGENTS

        cls = AGENTS[name]
        if name == "python":
            from fdenv_agents.imported import load_class

            cls = load_class(knobs["target"])
        params = [p for p in inspect.signature(cls).parameters if not p.startswith("_")]
        raise ConfigError(f"agent={name}: {e}; its knobs are {params}") from None


def run_job(cfg) -> list[Path]:
    """What one Hydra job does: the agent over each configured set; returns the run folders."""
    from ..run import load_records, run
    from ..timeline import timeline_text

    check_config(cfg)
    logging.getLogger("faster_whisper").setLevel(logging.WARNING)  # one line per ASR call otherwise
    agent = make_agent_from(cfg)
    folders = []
    common = dict(seeds=list(cfg.seeds), out=cfg.out, limit=cfg.scene.limit, progress=cfg.progress, room=_room(cfg),
                  tts=cfg.tts.backend, sample_rate=cfg.sample_rate, scoring=_scoring(cfg),
                  behaviour=cfg.get("behaviour", "natural"), fresh=bool(cfg.get("fresh")))
    sets = list(cfg.scene.sets)
    folder = _set_folder(cfg)
    if folder is not None:  # the set at that path (an older version of a shipped set) replaces scene.sets
        from ..scene import load_set

        folders.append(run(agent, scenes=load_set(folder.name, cfg.scene.split, root=folder.parent), split=cfg.scene.split,
                           **common))
        sets = []
    elif cfg.scene.get("path") is not None:
        path = Path(str(cfg.scene.path)).resolve()
        # a replay plays the recording as it is: no microphone model on top
        folders.append(run(agent, scenes=[f"fdb:{path}"], split=cfg.scene.split, **{**common, "room": None}))
    for scene_set in sets:
        folders.append(run(agent, scene_set=scene_set, split=cfg.scene.split, **common))
    for folder in folders:
        for record in load_records(folder, limit=cfg.timelines):
            log.info(f"[{agent.name}] " + timeline_text(record))
    return folders


def objective_value(folders: list[Path], objective: dict) -> float:
    """A weighted sum of headline metrics over the job's runs, for sweepers that optimise
    (Optuna): ``{"turn_taking/tor": 1.0, "pause_handling/tor": -1.0, "mpe/silence_preservation": 1.0}``.
    Names are ``<dimension>/<metric>`` of the paper profile, or ``mpe/<metric>[.<condition>]``."""
    from ..report import run_summary
    from ..score.summary import mpe_values

    values: dict[str, float] = {}
    for folder in folders:
        s = run_summary(folder, n_resamples=200)
        for dim, entry in s["fdb"].get("dimensions", {}).items():
            for metric, e in entry.get("paper", {}).items():
                if isinstance(e, dict) and e.get("value") is not None:
                    values[f"{dim}/{metric}"] = e["value"]
        for key, e in mpe_values(s).items():
            if isinstance(e, dict) and e.get("value") is not None:
                values[f"mpe/{key}"] = e["value"]
    missing = [name for name in objective if name not in values]
    if missing:
        raise ConfigError(f"objective: no value for {missing} in these runs; available: {sorted(values)}")
    return float(sum(w * values[name] for name, w in objective.items()))


def _scoring(cfg) -> dict:
    from omegaconf import OmegaConf

    return {"judge": OmegaConf.to_container(cfg.judge, resolve=True),
            **OmegaConf.to_container(cfg.scoring, resolve=True)}


FOLDERS_FILE = "run_folders.json"


def main() -> None:
    import hydra

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
    def _main(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig

        try:
            folders = run_job(cfg)
            value = objective_value(folders, dict(cfg.objective)) if cfg.get("objective") else None
        except ConfigError as e:
            print(f"fdenv-run: {e}", file=sys.stderr)
            sys.exit(2)
        # The sweep's report (ReportCallback) finds each job's run folders here.
        out = Path(HydraConfig.get().runtime.output_dir)
        (out / FOLDERS_FILE).write_text(json.dumps([str(f.resolve()) for f in folders]))  # fdenv-report finds them
        from ..report import format_runs, run_summary

        log.info(format_runs([run_summary(f) for f in folders]))
        if value is not None:
            log.info(f"objective {value:.4f}")
        for f in folders:  # what the next commands (fdenv-report, fdenv-score, fdenv-export) take
            log.info(f"run folder: {f}")
        return value

    try:  # before Hydra, which saves every override with the run
        check_overrides(sys.argv[1:])
    except ConfigError as e:
        print(f"fdenv-run: {e}", file=sys.stderr)
        sys.exit(2)
    _main()


class ReportCallback:
    """At the end of a sweep (``-m``), one table over every job's run folders."""

    def on_multirun_end(self, config, **kwargs) -> None:
        from ..report import print_runs

        sweep = Path(config.hydra.sweep.dir)
        folders = []
        for f in sorted(sweep.glob(f"*/{FOLDERS_FILE}"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0):
            folders.extend(json.loads(f.read_text()))
        if folders:
            print(f"\n=== {len(folders)} runs ({sweep}) ===")
            print_runs(folders)
            print(f"run folders: listed in {sweep}/*/{FOLDERS_FILE}; fdenv-report {sweep} --html site/ to browse them")

    def __getattr__(self, name):  # the other Callback hooks: nothing to do
        if name.startswith("on_"):
            return lambda *a, **k: None
        raise AttributeError(name)


if __name__ == "__main__":
    main()
