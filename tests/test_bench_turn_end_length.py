"""``benchmarks/turn_end_length.py``: how much the turn-end model leans on the transcript's length.
Hand-made silences whose words differ only in how many there are (the same last word and mark,
the same confidence and sound): the length column alone tells the pauses from the ends."""

from __future__ import annotations

import numpy as np
import pytest

from fdenv.train import turn_end as te

from .helpers import alike_silences, benchmark, write_lines

SHORT, LONG = "Add the milk.", "Please add some more of the milk."


@pytest.fixture(scope="module")
def bench():
    return benchmark("turn_end_length")


def _silences(n: int, seed: int, kind: str = "pause") -> list[dict]:
    rows = alike_silences(n, seed, text=lambda i, end: LONG if end else SHORT,
                          words=lambda i, end: [[w, 0.9] for w in (LONG if end else SHORT).split()])
    for r in rows:
        r["set"] = kind
    return rows


def test_the_length_alone_tells_them_apart_and_the_refit_without_it_cannot(bench, tmp_path, capsys):
    train = write_lines(tmp_path / "train.jsonl", _silences(40, 0))
    val = write_lines(tmp_path / "val.jsonl", _silences(20, 1))
    held = write_lines(tmp_path / "held.jsonl", _silences(10, 2) + _silences(6, 3, "turn_taking"))
    weights = np.zeros(te.N_FEATURES)
    weights[te.LENGTH_COLUMN] = 3.0  # P 0.30 after 3 words, 0.78 after 7
    te.TurnEndModel(weights, -5.0, threshold=0.5).save(tmp_path / "length.json")
    bench.main(["--checkpoint", str(tmp_path / "length.json"), "--files", held, "--train", train, "--val", val])
    out = capsys.readouterr().out.splitlines()
    # the scripts of every split and scene set, from the shipped scenes
    assert [line.split(":")[0] for line in out[:6]] == [f"{s}, {p}" for s in ("pause", "turn_taking")
                                                       for p in ("train", "val", "test")]
    assert out[0].startswith("pause, train: 140 scenes, ") and "words per scene (sd " in out[0]
    assert out[6] == (f"{tmp_path / 'length.json'} (threshold 0.50), the words' weights: mark ? +0.00, "
                      "mark . +0.00, mark ! +0.00, mark , +0.00, mark - +0.00, no mark +0.00, closed-class last "
                      "word +0.00, empty +0.00, length +3.00, name heard +0.00, ellipsis +0.00")
    # 5 pauses of 3 words, 3 turn-taking ends of 7 words, which the model answers at its first look
    assert out[7] == "held.jsonl: 5 pauses at a median 3.0 words, 3 turn ends at 7.0; turn ends answered at the first look 3/3"
    assert out[8] == ("the recipe: pause ROC AUC per frame: validation 1.000, held.jsonl 1.000")
    assert out[9] == ("without the length: pause ROC AUC per frame: validation 0.500, held.jsonl 0.500")
    # one sentence each, so the last sentence's length tells them apart as the whole length does
    assert out[10] == ("the last sentence's length instead: pause ROC AUC per frame: validation 1.000, "
                       "held.jsonl 1.000")


@pytest.mark.parametrize("text, words", [("Hey, quick one. I need a word that means", 6),
                                         ("What's 5.5 times two?", 4), ("Okay. So. Um", 1), ("", 0)])
def test_the_last_sentence_is_read_after_the_last_sentence_end(bench, text, words):
    assert bench.last_sentence_words(text) == words


def test_train_without_val_is_refused(bench, tmp_path):
    train = write_lines(tmp_path / "train.jsonl", _silences(4, 0))
    with pytest.raises(SystemExit):
        bench.main(["--train", train])
