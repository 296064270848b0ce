"""Sentence variety of the shipped sets (every set, FDB ones included): no scored sentence
repeats within a split, val/test share no scored sentence with train, and no sentence of a turn
type with at least 100 turns in a split takes more than 2 % of them. Sentences are compared after
normalisation; the closed class (duty preamble, three words or fewer) is exempt
(``fdenv.scene.generate.variety``)."""

import re
from collections import Counter, defaultdict

import pytest

from fdenv.scene import list_sets, load_manifest
from fdenv.scene.generate.variety import SCORED_LABELS, is_closed_class
from fdenv.scene.sets import load_set, scene_ids, scenes_dir
from fdenv.score.text import normalise


def normalise_sentence(text, assistant):
    """The scorer's normalisation (number-word runs joined: "twenty-five" = "25"), stricter than
    the generator's, with the assistant's name as one placeholder."""
    return " ".join(normalise(re.sub(rf"\b{re.escape(assistant)}\b", "assistantname", text)))


def _turns_by_split(name):
    """split -> label -> normalised sentences, each turn of an MPE pair counted once."""
    out: dict = defaultdict(lambda: defaultdict(list))
    for split in ("train", "val", "test"):
        seen = set()
        for sc in load_set(name, split):
            for t in sc.turns:
                key = (sc.pair_id or sc.id, t.id, t.text)
                if key in seen:
                    continue
                seen.add(key)
                norm = normalise_sentence(t.spoken_text, sc.assistant_name)
                if t.label != "duty" and not is_closed_class(norm):
                    out[split][t.label].append(norm)
    return out


@pytest.fixture(scope="module")
def by_set():
    return {name: _turns_by_split(name) for name in list_sets()}


def test_every_generated_set_is_checked(by_set):
    assert {"pause", "backchannel", "turn_taking", "interruption", "mpe", "overlap"} <= set(by_set)


@pytest.mark.parametrize("name", ["pause", "backchannel", "turn_taking", "interruption", "mpe", "overlap"])
def test_no_scored_sentence_repeats_or_leaks_across_splits(by_set, name):
    splits = by_set[name]
    scored = {sp: [s for lab, ss in labs.items() if lab in SCORED_LABELS for s in ss] for sp, labs in splits.items()}
    for sp, ss in scored.items():
        dup = [s for s, k in Counter(ss).items() if k > 1]
        assert not dup, f"{name}/{sp}: repeated scored sentences, e.g. {dup[:3]}"
    train = set(scored["train"])
    for sp in ("val", "test"):
        shared = train & set(scored[sp])
        assert not shared, f"{name}: {sp} shares {len(shared)} scored sentences with train, e.g. {sorted(shared)[:3]}"


@pytest.mark.parametrize("name", ["pause", "backchannel", "turn_taking", "interruption", "mpe", "overlap"])
def test_no_sentence_above_two_percent_of_a_common_turn_type(by_set, name):
    for sp, labs in by_set[name].items():
        for lab, ss in labs.items():
            if len(ss) < 100:
                continue
            top, k = Counter(ss).most_common(1)[0]
            assert k <= 0.02 * len(ss), f"{name}/{sp}/{lab}: {top!r} is {k} of {len(ss)} turns"


def test_sizes():
    m = load_manifest("mpe")
    assert m["counts"]["pairs"] >= 600 and m["counts"]["splits"] == {"train": 800, "val": 200, "test": 200}
    for name in ("pause", "backchannel", "turn_taking", "interruption"):
        assert load_manifest(name)["counts"]["scenes"] >= 200


def test_a_larger_pause_pool_keeps_the_shipped_scenes_and_leaks_nothing_into_their_test_split(tmp_path):
    """``fdenv-scenes generate pause --n 800`` (the training pool of docs/training_log.md): its first 200
    scenes are the shipped files byte for byte, with their splits, and none of the 600 new scenes
    of its train and val splits shares a scored sentence with the shipped test split."""
    from fdenv.cli.scenes import main as scenes_cli
    shipped = scenes_dir() / "pause"
    assert scenes_cli(["generate", "pause", "--n", "800", "--out", str(tmp_path)]) == 0
    for path in sorted(shipped.glob("pause-*.yaml")):
        assert (tmp_path / "pause" / path.name).read_bytes() == path.read_bytes(), path.name
    shipped_ids = {split: set(scene_ids("pause", split)) for split in ("train", "val", "test")}
    for split, ids in shipped_ids.items():
        assert ids <= set(scene_ids("pause", split, tmp_path))

    def sentences(scenes):
        return {normalise_sentence(t.spoken_text, sc.assistant_name) for sc in scenes for t in sc.turns
                if t.label in SCORED_LABELS}

    test = sentences(load_set("pause", "test"))
    assert len(test) >= 30
    for split in ("train", "val"):
        new = [sc for sc in load_set("pause", split, tmp_path) if sc.id not in shipped_ids[split]]
        assert len(new) > 80 and not sentences(new) & test, split
