"""Pictures: episode timeline (also the env's rgb_array render) and metric bars."""

import numpy as np

from fdenv.plots import episode_png, metric_bars, scored_windows
from fdenv.report import run_summary
from fdenv.run import run
from fdenv.sim.env import RoomEnv
from fdenv_agents import OracleAgent, SilentAgent

from .helpers import rollout, scene

SC = scene([
    {"speaker": "Ann", "text": "So I was thinking [pause=0.8] about the trip.", "label": "pause"},
    {"speaker": "Bob", "text": "Aria, when does the train leave?", "label": "final", "gold_answer": "At nine."},
], kind="turn_taking")


def test_render_rgb_array_shows_the_episode_so_far():
    env = RoomEnv(scene=SC, render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.zeros(1280, np.float32))
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] > 100 and img.shape[1] > 400
    assert (img < 128).any(), "blank picture"


def test_episode_png_and_windows(tmp_path):
    rec, _ = rollout(RoomEnv(scene=SC), OracleAgent())
    names = [w[2] for w in scored_windows(rec)]
    assert names == ["pause", "final"]
    final = [t for t in rec.turns if t.label == "final"][0]
    assert scored_windows(rec)[1][:2] == (final.end, final.end + 8.0)
    path = episode_png(rec, tmp_path / "ep.png")
    assert path.stat().st_size > 5000


def test_metric_bars(tmp_path):
    folders = [run(a, scenes=[SC], out=tmp_path / "runs", progress=False) for a in (SilentAgent(), OracleAgent())]
    path = metric_bars([run_summary(f, n_resamples=200) for f in folders], tmp_path / "bars.png")
    assert path.stat().st_size > 5000


def test_committed_readme_picture_is_there_and_not_blank():
    from pathlib import Path

    import matplotlib.image

    path = Path(__file__).resolve().parent.parent / "docs" / "timeline.png"
    img = matplotlib.image.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 800
    assert (img[..., :3] < 0.5).mean() > 0.01, "blank picture"
