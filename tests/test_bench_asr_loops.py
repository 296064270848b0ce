"""``benchmarks/asr_loops.py``: transcripts that loop, counted by the recogniser's two tests (Whisper's
gzip compression ratio, a short phrase said three times), per ``collect`` file, and the turn
detector's rule on them."""

from __future__ import annotations


import pytest

from .helpers import alike_silences, benchmark, write_lines

LOOP = "Good morning. I'd like to look at people." + " Good morning." * 12


@pytest.fixture(scope="module")
def bench():
    return benchmark("asr_loops")


def _file(path, looped: set[int]):
    rows = alike_silences(6, 0, text=lambda i, end: LOOP if i in looped else "Could you add milk?")
    return write_lines(path, rows)


def test_whispers_test_finds_the_loops_not_the_sentences(bench):
    assert bench.loops(LOOP)
    assert not bench.loops("Good morning. I'd like to look at people. Good morning!")
    assert not bench.loops("Could you tell me about the history of trains, and of the trains before them?")
    assert not bench.loops("")


def test_a_short_loop_whispers_test_misses_is_counted_too(bench):
    from faster_whisper.transcribe import get_compression_ratio

    from fdenv_agents.cascade.asr import LOOP_COMPRESSION_RATIO

    short = "Should be the best, the best, the best, the half an hour."
    assert get_compression_ratio(short) < LOOP_COMPRESSION_RATIO  # Whisper's test alone would pass it
    assert bench.loops(short)
    assert not bench.loops("The best is yet to come, the best of all.")


def test_each_file_says_how_many_transcripts_loop_and_where(bench, tmp_path, capsys):
    before, after = _file(tmp_path / "before.jsonl", {0, 3}), _file(tmp_path / "after.jsonl", set())
    bench.main(["--files", before, after])
    assert capsys.readouterr().out.splitlines() == ["before.jsonl: 6 silences, 2 transcripts loop (s0-0, s0-3)",
                                                    "after.jsonl: 6 silences, 0 transcripts loop (none)"]
    bench.main(["--files", before, "--checkpoint", "single_user", "--threshold", "0.5"])
    line = capsys.readouterr().out.strip()
    assert line.startswith("before.jsonl: 6 silences, 2 transcripts loop (s0-0, s0-3); 0.50: pause: ")
    assert line.count(" / ") == 1  # one scene set: its pauses answered early / its ends answered early


def test_a_file_without_the_recognisers_words_is_named(bench, tmp_path):
    rows = alike_silences(4, 0)
    del rows[1]["words"]
    write_lines(tmp_path / "old.jsonl", rows)
    bench.main(["--files", str(tmp_path / "old.jsonl")])  # counting needs no words
    with pytest.raises(ValueError, match=r"old.jsonl:2: no recogniser \"words\""):
        bench.main(["--files", str(tmp_path / "old.jsonl"), "--checkpoint", "single_user"])
