"""``fdenv-train``: train a when-to-speak policy (behaviour cloning, then PPO), behind Hydra.

    fdenv-train                                    # conf/train.yaml: 28 min, 8 envs in one process
    fdenv-train time_limit_min=5 ppo.lr=1e-4 rewards.pause=2
    fdenv-train compare.enabled=true compare.report=docs/compare.md

Writes ``policy.pt``, ``best.pt``, ``metrics.jsonl``, ``learning_curve.png`` and ``summary.json``
into ``out`` (default: Hydra's output folder). Use the checkpoint with
``fdenv-run agent=policy agent.checkpoint=<folder>/best.pt``.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import sys
from pathlib import Path

from ..errors import ConfigError
from .secrets import check_overrides, check_tree
from ..paths import CONF_DIR

log = logging.getLogger(__name__)


def check_config(cfg: dict) -> None:
    check_tree(cfg)
    from ..train.envs import SETS
    from ..train.rewards import TERMS

    def need(cond, msg):
        if not cond:
            raise ConfigError(msg)

    for s in cfg["env"]["sets"]:
        need(s in SETS, f"env.sets: {s!r} is not a scene set; choose from {list(SETS)}")
    need(cfg["env"]["split"] in ("train", "val", "test", "all"), f"env.split={cfg['env']['split']!r}: train|val|test|all")
    need(cfg["env"]["content"] in ("gold", "fitting"), f"env.content={cfg['env']['content']!r}: gold|fitting")
    for k in cfg["rewards"]:
        need(k in TERMS, f"rewards.{k}: not a reward term; valid: {sorted(TERMS)}")
    need(isinstance(cfg["workers"], int) and cfg["workers"] >= 0,
         f"workers={cfg['workers']!r}: 0 (envs in this process) or a number of env processes")
    need(isinstance(cfg.get("envs", 1), int) and cfg.get("envs", 1) >= 1, f"envs={cfg.get('envs')!r}: a positive integer")
    need(isinstance(cfg.get("chunk", 32), int) and cfg.get("chunk", 32) >= 1, f"chunk={cfg.get('chunk')!r}: frames, >= 1")
    need(cfg["features"].get("normalise", "floor") in ("floor", "silence"),
         f"features.normalise={cfg['features'].get('normalise')!r}: floor|silence")
    need(cfg["features"]["history"] >= 1, "features.history: at least 1 frame")
    need(cfg["time_limit_min"] > 0, "time_limit_min: positive")
    ref_kl = cfg["ppo"].get("ref_kl", 0.0)
    need(isinstance(ref_kl, (int, float)) and not isinstance(ref_kl, bool) and math.isfinite(ref_kl) and ref_kl >= 0,
         f"ppo.ref_kl={ref_kl!r}: a weight >= 0 (0: no KL penalty to the policy PPO starts from)")
    need(cfg.get("checkpoint", "best") in ("best", "last"), "checkpoint: best|last")


def _progress_log(budget_s: float):
    """Training's progress lines, through logging (Hydra's run.log), each with the time left of
    the wall-clock budget that ends training."""
    import time

    from ..run import _duration

    start = time.monotonic()

    def say(message: str) -> None:
        used = time.monotonic() - start
        log.info(f"[{_duration(used)} in, about {_duration(max(0.0, budget_s - used))} left] {message}")

    return say


def cold_clips_note(cfg: dict) -> str | None:
    """A line for the log when Kokoro's voices are drawn and many of the train scenes' clips are
    not in the cache yet (Kokoro synthesises about one clip a second on two cores; espeak's are quick)."""
    from .scenes import uncached

    env = cfg["env"]
    drawn = env.get("randomize")
    backends = set((drawn.get("tts") or []) if isinstance(drawn, dict) else []) | {env["tts"]}
    if "kokoro" not in backends:
        return None
    missing, total = uncached("kokoro", env["sets"], env["split"], env["sample_rate"])
    if missing < 100:  # a few minutes of synthesis at most: not worth a line
        return None
    return (f"[note] {missing:,} of the {total:,} Kokoro clips of the {env['split']} scenes are not in the clip "
            f"cache: Kokoro episodes will synthesise them as they start (about one a second on two CPU cores; "
            f"training runs slower until they are cached). To warm the cache first: fdenv-scenes render <set> "
            f"--split {env['split']} --tts kokoro, for each of {', '.join(env['sets'])}")


def run_job(cfg: dict, out: Path) -> dict:
    from ..train.ppo import train

    check_config(cfg)
    note = cold_clips_note(cfg)
    if note:
        log.info(note)
    summary = train({k: v for k, v in cfg.items() if k not in ("out", "compare", "checkpoint", "install")}, out=out,
                    log=_progress_log(float(cfg["time_limit_min"]) * 60))
    ckpt = out / ("best.pt" if cfg.get("checkpoint", "best") == "best" else "policy.pt")
    if cfg.get("install"):
        dest = Path(cfg["install"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ckpt, dest)
        log.info(f"installed {ckpt} -> {dest}")
    comp = cfg.get("compare") or {}
    if comp.get("enabled"):
        from fdenv_agents import make_agent

        from ..train.compare import compare

        res = compare(ckpt, comp["baseline"], comp.get("baseline_kwargs") or {}, sets=comp["sets"], split=comp["split"],
                      seeds=comp["seeds"], out=comp["out"], make_agent=make_agent)
        log.info(res["markdown"])
        (out / "compare.json").write_text(json.dumps(res, indent=1))
        if comp.get("report"):
            Path(comp["report"]).write_text(res["markdown"] + "\n")
        summary["compare"] = {k: v.get("ok") for k, v in res["table"].items()}
    return summary


def print_help() -> None:
    """fdenv-train's own options (Hydra's --help would list fdenv-run's groups, which it rejects)."""
    print(__doc__.strip() + "\n\nOptions (key=value overrides of conf/train.yaml, shown with their defaults):\n")
    print((CONF_DIR / "train.yaml").read_text(encoding="utf-8"))
    print("Hydra's own flags: --cfg job (print the composed config), --hydra-help.")


def main() -> None:
    import hydra

    if any(a in ("--help", "-h") for a in sys.argv[1:]):
        print_help()
        return

    @hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="train")
    def _main(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig
        from omegaconf import OmegaConf

        plain = OmegaConf.to_container(cfg, resolve=True)
        out = Path(plain["out"]) if plain.get("out") else Path(HydraConfig.get().runtime.output_dir)
        try:
            summary = run_job(plain, out)
        except ConfigError as e:
            print(f"fdenv-train: {e}", file=sys.stderr)
            sys.exit(2)
        log.info(json.dumps(summary, indent=1))
        log.info(f"checkpoints and learning curve in {out}")

    try:  # before Hydra, which saves every override with the run
        check_overrides(sys.argv[1:])
    except ConfigError as e:
        print(f"fdenv-train: {e}", file=sys.stderr)
        sys.exit(2)
    _main()


if __name__ == "__main__":
    main()
