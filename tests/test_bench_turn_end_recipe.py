"""``benchmarks/turn_end_recipe.py``: the single-user recipe on one training draw, each penalty at
the threshold ``calibrate --pooled`` picks. Hand-made silences whose final mark mostly tells a
pause ("...") from the assistant's turn end ("?"), with some of each the other way, so that the
fit is not separable and the penalty matters."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.cli import turn_end as cli
from fdenv.train import turn_end as te

from .helpers import benchmark, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_recipe")


def _silences(n: int, seed: int, empty: int = 0) -> list[dict]:
    """``n`` pauses (label 0, pause set) and ``n`` turn ends (label 1, turn-taking set); one in
    five of each ends on the other's mark, and the recogniser
    is surer of the turn ends' last word, mostly; the first ``empty`` turn ends heard as no words."""
    rng = np.random.default_rng(seed)
    sound = np.zeros((te.SOUND_WINDOWS, te.SOUND_BANDS))
    rows = []
    for i in range(2 * n):
        end = i % 2
        mark = "?" if end == (rng.random() > 0.2) else "..."
        text = "" if end and i // 2 < empty else f"Could you add milk{mark}"
        rows.append({"set": "turn_taking" if end else "pause", "scene_id": f"s{seed}-{i // 2}", "text": text,
                     "named": False, "silence_s": 0.256, "labels": [end] * 6,
                     "words": [["Could", 0.9], ["you", 0.99], ["add", 0.95],
                                   ["milk", float(rng.uniform(0.7, 1.0) if end else rng.uniform(0.3, 0.8))]],
                     "sound": (sound + rng.normal(0, 0.1, sound.shape)).tolist()})
    return rows


@pytest.fixture()
def files(tmp_path):
    return {"train": write_lines(tmp_path / "train.jsonl", _silences(60, 0, empty=3)),
            "val": write_lines(tmp_path / "val.jsonl", _silences(30, 1)),
            "cal": write_lines(tmp_path / "cal.jsonl", _silences(30, 2)),
            "held": write_lines(tmp_path / "held.jsonl", _silences(20, 3))}


def _table(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines() if line.startswith("| ")][1:]


def test_the_pick_is_fits_and_its_threshold_calibrates(bench, files, tmp_path, capsys):
    """The row marked as the pick holds the penalty, log-loss and threshold that the recipe's own
    commands give on the same files."""
    bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"],
                "--heldout", files["held"]])
    rows = _table(capsys.readouterr().out)
    assert [r[0].split()[0] for r in rows] == [f"{l2:g}" for l2 in cli.L2S]
    (pick,) = [r for r in rows if r[0].endswith("(the pick)")]
    summary = cli.fit_main(files["train"], files["val"], tmp_path / "m.json", sound=True, confidence=True,
                           sets=["pause", "turn_taking"], log=lambda *_: None)
    calibrated = cli.calibrate_main(tmp_path / "m.json", [files["cal"]], pooled=True, log=lambda *_: None)
    assert pick[0] == f"{summary['l2']:g} (the pick)"
    assert pick[1] == f"{summary['validation']['log_loss']:.4f}"
    assert pick[2] == f"{calibrated['threshold']:.2f}"
    assert 0.0 < calibrated["threshold"] < 1.0  # a pick the penalty can move, not the grid's end
    at = calibrated["files"]["cal.jsonl"]["at_threshold"]  # one silence per scene: scenes = silences
    pauses = round(at["pause"]["early_on_negatives"] * 30)
    ends = round(at["turn_taking"]["early_on_positives"] * 30)
    assert pick[3] == f"{pauses}/30; {ends}/30 at {at['turn_taking']['median_silence_s']:.2f} s"
    assert pick[4].split("; ")[0].endswith("/20")  # the held-out file, reported alone


def test_silences_without_words_can_be_left_out(bench, files, capsys):
    argv = ["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--l2", "1"]
    bench.main(argv)
    assert capsys.readouterr().out.splitlines()[0] == "train.jsonl: 120 training silences"
    bench.main(argv + ["--drop-empty"])
    assert capsys.readouterr().out.splitlines()[0] == (
        "train.jsonl: 117 training silences, silences without words left out")


def test_bagging_is_deterministic_and_differs_from_one_fit(bench, files, capsys):
    argv = ["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--l2", "1"]
    runs = []
    for extra in ([], ["--bag", "5"], ["--bag", "5"]):
        bench.main(argv + extra)
        runs.append(_table(capsys.readouterr().out))
    assert runs[1] == runs[2]
    assert runs[0][0][1] != runs[1][0][1]  # the averaged model's log-loss is another


def test_a_negative_bag_is_refused(bench, files):
    with pytest.raises(SystemExit):
        bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--bag", "-1"])


def test_the_first_look_decides_once_and_its_fit_reads_the_first_frames(bench, files, capsys):
    """``--first-look`` answers only at the first look (0.256 s, printed 0.26); ``--fit-first-look``
    fits each silence's first frame alone, so its log-loss is that of the recipe's fit on the
    first frames of the training and validation silences."""
    from fdenv.train.turn_end import fit

    argv = ["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--l2", "1"]
    bench.main(argv + ["--first-look"])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "train.jsonl: 120 training silences, deciding at the first look"
    (every,) = _table(out)
    assert every[3].endswith("at 0.26 s")
    bench.main(argv + ["--first-look", "--fit-first-look"])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("train.jsonl: 120 training silences, fitted on their first frames, deciding at "
                                   "the first look")
    (first,) = _table(out)
    assert first[3].endswith("at 0.26 s")
    train, val = ([{**r, "labels": r["labels"][:1]} for r in cli.silences_as_heard(
        [path], ["pause", "turn_taking"], option, sound=True, words=True)] for path, option in
        ((files["train"], "--train"), (files["val"], "--val")))
    t, n, s, y, sd, w, *_ = cli.examples(train)
    model = fit(t, n, y, s, l2=1.0, sounds=sd, words=w)
    probs = np.concatenate(cli.silence_probs(model, val))
    assert first[1] == f"{cli.log_loss(probs, np.array([r['labels'][0] for r in val], np.float64)):.4f}"
    assert first[1] != every[1]  # six frames a silence against one: another fit


def test_a_fit_for_the_first_look_needs_the_first_look(bench, files, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"],
                    "--fit-first-look"])
    assert "--fit-first-look fits the first look's decision; add --first-look" in capsys.readouterr().err


def test_each_penalty_is_tried_with_each_sound_scale_and_the_pick_is_fits(bench, files, tmp_path, capsys):
    """``--sound-l2-scales``: a row per (penalty, scale); the pick is the pair ``fit
    --sound-l2-scales`` keeps on the same files, at the same log-loss."""
    bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"],
                "--sound-l2-scales", "1", "100"])
    rows = _table(capsys.readouterr().out)
    assert [r[0].removesuffix(" (the pick)") for r in rows] == [f"{l2:g}, sound x{k}" for l2 in cli.L2S
                                                               for k in (1, 100)]
    assert len({r[1] for r in rows}) == len(rows)  # each pair is another fit
    (pick,) = [r for r in rows if r[0].endswith("(the pick)")]
    logged = []
    cli.fit_main(files["train"], files["val"], tmp_path / "m.json", sound=True, confidence=True,
                 sets=["pause", "turn_taking"], sound_l2_scales=[1.0, 100.0], log=logged.append)
    model = te.load(tmp_path / "m.json")
    assert pick[0] == f"{model.meta['l2']:g}, sound x{model.meta.get('sound_l2_scale', 1.0):g} (the pick)"
    assert pick[1] == f"{model.meta['validation']['log_loss']:.4f}"


def test_sound_scales_need_the_sound_and_positive_factors(bench, files, capsys):
    argv = ["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"]]
    for extra, message in ((["--sound-l2-scales", "10", "--without-sound"], "leave out --without-sound"),
                           (["--sound-l2-scales", "0"], "positive factors")):
        with pytest.raises(SystemExit):
            bench.main(argv + extra)
        assert message in capsys.readouterr().err


def test_resampled_fits_are_each_calibrated_alone_and_summarised_per_file(bench, files, capsys):
    """``--resample B``: per file, the mean [least, most] of B fits on bootstrap resamples of the
    training scenes, each at the threshold calibrated for it; worked out here fit by fit."""
    bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--heldout",
                files["held"], "--l2", "1", "--resample", "3"])
    (row,) = _table(capsys.readouterr().out)
    assert len(row) == 7  # L2, log-loss, threshold, two files, their two resampled cells
    train = bench.read([files["train"]], "--train")
    rows = [bench.read([files[name]], "--x") for name in ("cal", "held")]
    got, biases = [[], []], set()
    for one in bench.training_sets(train, 3):
        model = bench.fitted([one], 1.0, True)
        biases.add(round(model.bias, 6))
        threshold = cli.pick_threshold(model, rows[0], 0.02, group=cli.by_set)
        for i, rs in enumerate(rows):
            taken, _, answered, _ = bench.counts(model, rs, threshold)
            got[i].append((taken, answered))
    for cell_, fits in zip(row[5:], got):
        taken, answered = zip(*fits)
        assert cell_ == (f"{np.mean(taken):.1f} [{min(taken)}, {max(taken)}]; "
                         f"{np.mean(answered):.1f} [{min(answered)}, {max(answered)}]")
    assert len(biases) == 3  # three fits on three resamples, not one
    with pytest.raises(SystemExit):
        bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--resample", "-1"])


def test_turn_ends_at_a_share_of_pause_scenes_are_read_at_the_lowest_threshold_within_it(bench, files, capsys):
    """``--pause-share``: the turn ends answered at the lowest threshold taking at most that share
    of a file's pause scenes, worked out here threshold by threshold; the resampled cells gain it."""
    bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"], "--l2", "1",
                "--pause-share", "0.1", "--resample", "2"])
    (row,) = _table(capsys.readouterr().out)
    assert len(row) == 6 and len(row[4].split("; ")) == 3
    model = bench.fitted(bench.training_sets(bench.read([files["train"]], "--train"), 0), 1.0, True)
    cal = bench.read([files["cal"]], "--calibrate")
    pauses = [r for r in cal if r["set"] == "pause"]
    probs = cli.silence_probs(model, pauses)
    lowest = next(float(t) for t in np.round(np.arange(0.01, 1.0, 0.01), 2)
                  if len(cli.pause_scenes_taken(pauses, probs, float(t))[0]) <= 3)  # 10 % of 30 scenes
    ends = cli.rates(model, [r for r in cal if r["set"] == "turn_taking"], lowest)
    assert row[5] == f"{round(ends['early_on_positives'] * 30)}/30 (at {lowest:.2f})"
    assert lowest < float(row[2])  # looser than the calibrated threshold's 2 %
    with pytest.raises(SystemExit):
        bench.main(["--train", files["train"], "--val", files["val"], "--calibrate", files["cal"],
                    "--pause-share", "1.5"])
