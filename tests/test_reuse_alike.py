"""A threshold sweep plays only the episodes a threshold changes: ``run(reuse_alike=True)`` copies
from a sibling run folder each episode the agent vouches it would play exactly so
(``TurnDetectorAgent.plays_alike``). Checked against playing everything: the same lines and the
same record files, byte for byte, through the real env and scorer."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from fdenv.run import run  # noqa: E402
from fdenv.runs import ADOPTED_FROM, read_episodes  # noqa: E402
from fdenv.train.turn_end import LENGTH_COLUMN, N_FEATURES, TurnEndModel  # noqa: E402
from fdenv_agents import TurnDetectorAgent  # noqa: E402
from fdenv_agents.cascade import FixedTranscriber  # noqa: E402

from .helpers import scene  # noqa: E402


def words_by_length(audio16k) -> str:
    """A recogniser stand-in that depends on the audio alone (so an episode does not depend on the
    ones before it): one word per half second heard."""
    return " ".join(["word"] * (1 + len(audio16k) // 8000)) + "."


def first_look_model() -> TurnEndModel:
    """Deciding once per silence (window 0.3 s); P rises with the number of words heard."""
    w = np.zeros(N_FEATURES)
    w[LENGTH_COLUMN] = 1.5
    return TurnEndModel(w, -3.5, threshold=0.5, answer_within_s=0.3)


def detector(threshold: float, model=None) -> TurnDetectorAgent:
    return TurnDetectorAgent(turn_end_model=model or first_look_model(), threshold=threshold,
                             transcriber=FixedTranscriber(fn=words_by_length))


SCENES = [scene([{"speaker": "Ann", "text": ctx, "label": "ctx"},
                 {"speaker": "Ann", "text": question, "label": "final", "gap": 1.0}],
                kind="turn_taking", speakers=("Ann",), id=f"sweep-{i}")
          for i, (ctx, question) in enumerate([
              ("Hello.", "Trains?"),
              ("I was reading about railways yesterday.", "Can you tell me about the history of trains?"),
              ("My sister and I are planning a long trip across the mountains next spring.",
               "Which route would you take, and how many days should we leave for it?"),
          ])]
SEEDS = [0]


def judged_ps(folder) -> list[float]:
    return [j["p"] for ln in read_episodes(folder) for j in ln["agent_stats"]["judged"]]


def same_side(ps, a: float, b: float) -> bool:
    lo, hi = sorted((a, b))
    return all(p < lo or p >= hi for p in ps)


def test_a_threshold_sweep_copies_the_episodes_it_does_not_change_and_they_equal_playing_them(tmp_path):
    first = run(detector(0.01), scenes=SCENES, seeds=SEEDS, out=tmp_path / "sweep", progress=False)
    ps = sorted(set(judged_ps(first)))
    assert len(ps) >= 3, ps  # the scenes' silences are judged differently: some flip, some do not
    mid = (ps[len(ps) // 2 - 1] + ps[len(ps) // 2]) / 2  # half the silences on each side

    reused = run(detector(mid), scenes=SCENES, seeds=SEEDS, out=tmp_path / "sweep", progress=False, reuse_alike=True)
    played = run(detector(mid), scenes=SCENES, seeds=SEEDS, out=tmp_path / "alone", progress=False)
    assert reused.name == played.name  # the same configuration
    lines = {(ln["scene_id"], ln["seed"]): ln for ln in read_episodes(reused)}
    alone = {(ln["scene_id"], ln["seed"]): ln for ln in read_episodes(played)}
    assert lines.keys() == alone.keys() and len(lines) == len(SCENES) * len(SEEDS)

    # copied exactly the episodes whose every silence lies on one side of both thresholds
    first_lines = {(ln["scene_id"], ln["seed"]): ln for ln in read_episodes(first)}
    expect = {k for k, ln in first_lines.items()
              if same_side([j["p"] for j in ln["agent_stats"]["judged"]], 0.01, mid)}
    adopted = {k for k, ln in lines.items() if ln.get(ADOPTED_FROM) == first.name}
    assert adopted == expect and 0 < len(adopted) < len(lines), (adopted, expect)

    # and a copied episode is what playing it gives: its line and its record files, byte for byte
    for key, line in lines.items():
        mine = {k: v for k, v in line.items() if k != ADOPTED_FROM}
        theirs = alone[key]
        assert json.dumps(mine["agent_stats"]["judged"]) == json.dumps(theirs["agent_stats"]["judged"])
        assert {k: v for k, v in mine.items() if k != "agent_stats"} == {k: v for k, v in theirs.items()
                                                                           if k != "agent_stats"}
        for suffix in (".json", ".flac"):
            assert (reused / (line["record"] + suffix)).read_bytes() == (played / (line["record"] + suffix)).read_bytes()
    # the played episodes do differ between the thresholds: the copy was not luck
    assert any(first_lines[k]["timeline"] != lines[k]["timeline"] for k in lines.keys() - adopted)


def test_a_threshold_on_the_same_side_of_every_silence_plays_nothing(tmp_path):
    first = run(detector(0.01), scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False)
    low = min(judged_ps(first))
    agent = detector(low / 2)  # below every silence's P, as 0.01 is: every decision the same
    folder = run(agent, scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False, reuse_alike=True)
    assert agent.transcriber.calls == 0, "played an episode it could copy"
    (line,) = read_episodes(folder)
    assert line[ADOPTED_FROM] == first.name and (folder / (line["record"] + ".flac")).is_file()


def test_without_reuse_alike_or_across_rooms_nothing_is_copied(tmp_path):
    first = run(detector(0.01), scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False)
    low = min(judged_ps(first))
    folder = run(detector(low / 2), scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False)
    assert ADOPTED_FROM not in read_episodes(folder)[0]
    other_room = run(detector(low / 3), scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False,
                     reuse_alike=True, room="car_cabin")
    assert ADOPTED_FROM not in read_episodes(other_room)[0]


def test_a_damaged_sibling_is_no_source_and_the_run_goes_on(tmp_path, capsys):
    first = run(detector(0.01), scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False)
    low = min(judged_ps(first))
    with open(first / "episodes.jsonl", "a") as f:
        f.write("not json\n{}\n")
    folder = run(detector(low / 2), scenes=SCENES[:1], seeds=[0], out=tmp_path, progress=False, reuse_alike=True)
    assert ADOPTED_FROM not in read_episodes(folder)[0]
    assert f"not reusing episodes from {first}" in capsys.readouterr().err


def line_with(ps, model="single") -> dict:
    return {"agent_stats": {"turn_end_model": model, "judged": [{"p": p} for p in ps]}}


def test_plays_alike_vouches_only_for_decisions_both_thresholds_make_alike():
    agent = detector(0.6)
    theirs = {"name": "turn_detector", **json.loads(json.dumps({**agent.config(), "threshold": 0.4}))}
    assert agent.plays_alike(theirs, line_with([0.1, 0.39, 0.61, 0.9]))
    assert agent.plays_alike(theirs, line_with([]))  # no silence judged: nothing the threshold decides
    assert not agent.plays_alike(theirs, line_with([0.1, 0.5]))  # answered at 0.4, not at 0.6
    # probabilities are kept to 4 decimals: too near a threshold to tell which side
    assert not agent.plays_alike(theirs, line_with([0.39995]))
    assert not agent.plays_alike(theirs, line_with([0.60004]))
    # the group model's episodes never read the threshold
    assert agent.plays_alike(theirs, line_with([0.5], model="group"))
    # any other knob differing, or stats it cannot read: no
    assert not agent.plays_alike({**theirs, "min_endpoint_ms": 288}, line_with([0.9]))
    for bad in ({}, {"agent_stats": None}, {"agent_stats": {"turn_end_model": "single"}},
                line_with(["0.9"]), line_with([True]), line_with([0.9], model=None)):
        assert not agent.plays_alike(theirs, bad), bad
    assert not agent.plays_alike({**theirs, "threshold": None}, line_with([0.9]))


def test_a_model_whose_probability_changes_within_a_silence_is_never_vouched_for():
    """Without a window closing before the first silence step, P at later windows is not in the
    stats: which window would answer under the other threshold is unknown."""
    for window in (None, 0.5):
        model = first_look_model()
        model.answer_within_s = window
        agent = detector(0.6, model)
        theirs = {"name": "turn_detector", **json.loads(json.dumps({**agent.config(), "threshold": 0.4}))}
        assert not agent.plays_alike(theirs, line_with([0.1]))


def test_the_model_decides_once_within_its_window():
    """The premise of ``plays_alike``: within a 0.3 s window P is the same at every window the
    agent may answer in (256 and 288 ms), so the first look's P decides."""
    model = first_look_model()
    assert model.prob_after(0.7, 0.256) == model.prob_after(0.7, 0.288) > 0
    assert model.prob_after(0.7, 0.32) == 0.0
