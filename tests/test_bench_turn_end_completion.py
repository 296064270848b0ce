"""``benchmarks/turn_end_completion.py``: the shipped recipe with and without the language model's
columns. Hand-made silences whose words, confidence and sound are alike in their form: the pauses
stop on "Could you give me?", the turn ends on "Could you help me?" (the same length and mark),
so only the language model tells them apart."""

from __future__ import annotations

import numpy as np
import pytest

from .helpers import alike_silences, benchmark, write_lines


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_completion")


def _silences(n: int, seed: int) -> list[dict]:
    return alike_silences(n, seed, text=lambda i, end: "Could you help me?" if end else "Could you give me?",
                          words=lambda i, end: [["Could", 0.9], ["you", 0.99], ["help" if end else "give", 0.95],
                                                ["me?", 0.9]])


def test_only_the_language_model_tells_the_pauses_from_the_ends(bench, tmp_path, capsys):
    train = write_lines(tmp_path / "train.jsonl", _silences(20, 0))
    val = write_lines(tmp_path / "val.jsonl", _silences(20, 1))
    held = write_lines(tmp_path / "held.jsonl", _silences(10, 2))
    bench.main(["--train", train, "--val", val, "--heldout", held, "--sets", "pause"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ")][1:]  # after the header
    assert [r.split(" (threshold")[0].split(" |")[0] for r in rows] == [
        "| **words + sound + confidence**", "| validation", "| held.jsonl",
        "| **+ language model**", "| validation", "| held.jsonl"]
    # without it the pauses and the ends read alike: no threshold holds the pauses, nothing is answered
    assert rows[1] == "| validation | 0.500 | pause: 0.000 / 0.00 at - | 0/20 = 0.000 |"
    assert rows[2] == "| held.jsonl | 0.500 | pause: 0.000 / 0.00 at - | 0/10 = 0.000 |"
    # with it every end is answered at the first look and no pause is taken, also in the held-out
    # file; the language model's columns carry the weight
    assert rows[4] == "| validation | 1.000 | pause: 0.000 / 1.00 at 0.26 s | 0/20 = 0.000 |"
    assert rows[5] == "| held.jsonl | 1.000 | pause: 0.000 / 1.00 at 0.26 s | 0/10 = 0.000 |"
    weights = [float(w) for w in rows[3].split("weights ")[1].split(")")[0].split()]
    assert weights[1] > 1.0


def test_files_without_the_recognisers_words_are_refused(bench, tmp_path):
    rows = [{k: v for k, v in r.items() if k != "words"} for r in _silences(4, 0)]
    plain = write_lines(tmp_path / "plain.jsonl", rows)
    with pytest.raises(ValueError, match="collect --words"):
        bench.main(["--train", plain, "--val", plain])


def test_a_shipped_checkpoint_is_reported_as_it_is_naming_the_pauses_it_takes(bench, tmp_path, capsys):
    # the shipped single-user model reads "Could you give me?" and "Could you help me?" alike; with
    # a sound it reads as a turn's end, 1.6 s into the silence, it answers both at once (the pauses
    # too); with a flat sound 0.26 s in, neither
    from fdenv.train import turn_end as te

    ending = (3 * np.ones((te.SOUND_WINDOWS, te.SOUND_BANDS))).tolist()
    train = write_lines(tmp_path / "train.jsonl", _silences(8, 0))
    held = write_lines(tmp_path / "held.jsonl", [{**r, "sound": ending, "silence_s": 1.6} for r in _silences(6, 2)])
    bench.main(["--train", train, "--val", train, "--heldout", held, "--sets", "pause",
                "--checkpoint", "single_user"])
    out = capsys.readouterr().out.splitlines()
    at = out.index("| **single_user** (its threshold 0.93) | | | |")
    assert out[at + 1] == "| validation | 0.500 | pause: 0.000 / 0.00 at - | 0/8 = 0.000 |"
    assert out[at + 2] == "| held.jsonl | 0.500 | pause: 1.000 / 1.00 at 1.60 s | 3/6 = 0.500: s2-0, s2-2, s2-4 |"


@pytest.mark.slow
def test_the_splits_scripted_pauses_are_read_by_the_language_model(bench):
    line = bench.scripted_prefixes()
    assert line.startswith("scripted words before a pause with an end probability above 0.05: train ")
    shares = {part.split()[0]: part.split()[1:] for part in line.split(": ", 1)[1].split(", ")}
    assert sorted(shares) == ["test", "train", "val"]
    for share, of, n in shares.values():
        assert of == "of" and int(n) >= 60 and 0 < int(share.rstrip("%")) < 50


def test_with_pitch_from_a_third_model_hears_the_pitch_from_that_signal(bench, tmp_path, capsys):
    """``--pitch-from denoised``: the recipe plus the pitch of each line's ``pitch_denoised``, here
    the only cue that tells the pauses (held) from the ends (a fall); the microphone's contour is
    held throughout, so ``--pitch-from microphone`` learns nothing from it."""
    from fdenv.train import turn_end as te

    from .test_turn_end import _voiced_windows

    held = [te.pitch_descriptor(_voiced_windows(1.5, "held", f0=120 + 7 * i, seed=i)) for i in range(4)]
    fall = [te.pitch_descriptor(_voiced_windows(1.5, "fall", f0=120 + 7 * i, seed=i)) for i in range(4)]

    def rows(n, seed):
        return alike_silences(n, seed, pitch=lambda i, end: held[i // 2 % 4],
                              pitch_denoised=lambda i, end: (fall if end else held)[i // 2 % 4])

    train, val = write_lines(tmp_path / "t.jsonl", rows(40, 0)), write_lines(tmp_path / "v.jsonl", rows(20, 1))
    for source, auc in (("denoised", "1.000"), ("microphone", "0.500")):
        bench.main(["--train", train, "--val", val, "--sets", "pause", "--pitch-from", source])
        lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
        at = lines.index(next(line for line in lines if line.startswith(f"| **+ pitch ({source})**")))
        assert len(lines[at].split("weights ")[1].split(")")[0].split()) == 4  # the pitch's four columns
        assert lines[at + 1].startswith(f"| validation | {auc} |"), lines[at + 1]
    rows_without = rows(4, 0)
    del rows_without[1]["pitch_denoised"]
    old = write_lines(tmp_path / "old.jsonl", rows_without)
    with pytest.raises(ValueError, match=r"old.jsonl:2: no \"pitch_denoised\" contour"):
        bench.main(["--train", old, "--val", val, "--pitch-from", "denoised"])
