"""Small building blocks shared by the env tests: hand-made scenes and episode loops."""

from __future__ import annotations

import numpy as np

from fdenv.scene.load import scene_from_dict
from fdenv.sim.env import RoomEnv


def scene(turns, kind="custom", speakers=("Ann", "Bob", "Cat"), **extra):
    return scene_from_dict({"id": extra.pop("id", "test"), "kind": kind, "speakers": list(speakers),
                            "turns": turns, **extra}, source="test scene")


def tone(seconds: float, sr: int = 16000, level: float = 0.1) -> np.ndarray:
    """A loud, voiced-like test signal (well above the -45 dBFS detector threshold)."""
    t = np.arange(int(round(seconds * sr))) / sr
    return (level * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def rollout(env: RoomEnv, agent, seed=0, scene=None):
    """Run one episode; returns (record, list of (obs, labels) per frame)."""
    from fdenv.run import run_episode

    frames = []

    class Spy:
        name = agent.name
        privileged = True

        def reset(self, *a, **k):
            agent.reset(*a, **k)

        def act(self, obs, labels):
            frames.append((obs, labels))
            return agent.act(obs, labels if agent.privileged else None)

        def config(self):
            return {}

    result = run_episode(env, Spy(), seed=seed, scene=scene)
    return result.record, frames


def benchmark(name: str):
    """The module ``benchmarks/<name>.py`` (the benchmarks folder is not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def collect_files(folder, train_rows, val_rows) -> list[str]:
    """``train_rows`` and ``val_rows`` written as ``collect`` files (one JSON line a silence) into
    ``folder``; the turn-end benchmarks' arguments that name them."""
    argv = []
    for name, rows in (("train", train_rows), ("val", val_rows)):
        argv += [f"--{name}", write_lines(folder / f"{name}.jsonl", rows)]
    return argv


def write_lines(path, rows) -> str:
    """``rows`` written at ``path`` as a ``collect`` file (one JSON line a silence); the path as a
    string, for a command line."""
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def rising_turn_end_model(answer_within_s: float | None = None):
    """A turn-end model at threshold 0.5 whose logit is -2, plus 4 when the assistant's name was
    heard, plus 1 per silence step passed: P rises with the silence and with the name."""
    from fdenv.train import turn_end as te

    m = te.TurnEndModel(np.zeros(te.N_FEATURES), -2.0, threshold=0.5, answer_within_s=answer_within_s)
    m.weights[te.N_TEXT:] = 1.0
    m.weights[len(te.PUNCT) + 1 + 3] = 4.0  # the assistant's name heard
    return m


def named_silence(scene: str, kind: str, named: bool, labels: list[int]) -> dict:
    """A ``collect`` line of one silence judged at its first look (0.256 s), the transcript "Could you
    add milk?" (``named``: with the assistant's name heard), with ``labels`` (1: answer now) for its
    frames, 80 ms apart."""
    return {"set": kind, "scene_id": scene, "text": "Could you add milk?", "named": named, "silence_s": 0.256,
            "labels": labels, "expect": "respond" if labels[0] else "may_backchannel"}


def alike_silences(n: int, seed: int, **only) -> list[dict]:
    """``n`` collect lines alternating a pause (label 0) and the assistant's turn end (1) with the
    same words, recogniser confidence and microphone sound: what tells them apart is ``only``,
    each a function ``(i, end) -> value`` of a field (the cue a turn-end benchmark tries)."""
    import numpy as np

    from fdenv.train import turn_end as te

    rows = []
    for i in range(n):
        end = i % 2
        rows.append({"set": "pause", "scene_id": f"s{seed}-{i}", "text": "Could you add milk?", "named": False,
                     "silence_s": 0.256, "labels": [end] * 3, "last_turn": "final" if end else "pause",
                     "words": [["Could", 0.9], ["you", 0.99], ["add", 0.95], ["milk?", 0.9]],
                     "sound": np.zeros((te.SOUND_WINDOWS, te.SOUND_BANDS)).tolist(),
                     **{field: value(i, end) for field, value in only.items()}})
    return rows
