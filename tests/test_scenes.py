"""Scene sets, generators, loader errors and the fdenv-scenes CLI (fast; no audio)."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from fdenv.cli.scenes import main as scenes_cli
from fdenv.scene import SceneError, find_scene, list_sets, load_scene, load_set, scene_from_dict, scene_ids
from fdenv.scene.generate import SET_NAMES, generate_set, write_set
from fdenv.scene.schema import SILENCE_LABELS, markers
from fdenv.scene.sets import load_manifest, scenes_dir

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "scenes"
BAD = Path(__file__).parent / "data" / "bad_scenes"
MIN_SCENES = {"pause": 60, "backchannel": 60, "turn_taking": 60, "interruption": 60, "mpe": 24, "overlap": 400}


@pytest.fixture(autouse=True)
def _shipped_dir(monkeypatch):
    monkeypatch.delenv("FDENV_SCENES_DIR", raising=False)


@pytest.fixture(scope="module")
def shipped() -> dict:
    return {name: load_set(name) for name in SET_NAMES}


# --- shipped sets --------------------------------------------------------------------------------

def test_scenes_dir_is_the_repository_folder():
    assert scenes_dir().resolve() == SHIPPED.resolve()
    assert set(SET_NAMES) <= set(list_sets())


@pytest.mark.parametrize("name", SET_NAMES)
def test_every_shipped_scene_loads(name, shipped):
    scenes = shipped[name]
    manifest = load_manifest(name)
    assert len(scenes) >= MIN_SCENES[name]
    assert [s.id for s in scenes] == list(manifest["scenes"])
    for s in scenes:
        assert s.kind == manifest["kind"]
        assert (SHIPPED / name / f"{s.id}.yaml").stat().st_size < 4096, "keep scene files small"


@pytest.mark.parametrize("name", SET_NAMES)
def test_manifest_counts_and_splits(name, shipped):
    m = load_manifest(name)
    files = sorted(p.stem for p in (SHIPPED / name).glob("*.yaml") if p.name != "manifest.yaml")
    assert sorted(m["scenes"]) == files
    assert m["counts"]["scenes"] == len(files)
    labels = Counter(t.label for s in shipped[name] for t in s.turns)
    assert m["counts"]["turns"] == dict(labels)
    assert m["generator"]["seed"] == 0 and m["generator"]["version"] >= 1
    splits = {sp: scene_ids(name, sp) for sp in ("train", "val", "test")}
    assert m["counts"]["splits"] == {k: len(v) for k, v in splits.items()}
    seen: set = set()
    for ids in splits.values():
        assert not seen & set(ids), "splits overlap"
        seen |= set(ids)
    assert seen == set(files) == set(scene_ids(name, "all"))
    n = len(files)
    assert abs(len(splits["train"]) / n - 0.70) < 0.05
    assert abs(len(splits["val"]) / n - 0.15) < 0.05
    assert abs(len(splits["test"]) / n - 0.15) < 0.05
    assert sum(len(load_set(name, sp)) for sp in splits) == n


def test_regeneration_is_byte_identical(tmp_path):
    assert scenes_cli(["generate", "all", "--out", str(tmp_path)]) == 0
    for name in SET_NAMES:
        new = {p.name: p.read_bytes() for p in (tmp_path / name).iterdir()}
        old = {p.name: p.read_bytes() for p in (SHIPPED / name).iterdir()}
        assert new.keys() == old.keys(), name
        changed = [f for f in new if new[f] != old[f]]
        assert not changed, f"{name}: {len(changed)} files differ from the committed set, e.g. {changed[:3]}; " \
                            f"run `fdenv-scenes generate {name}` and commit"


def test_growing_a_set_keeps_its_scenes_and_splits():
    small, big = generate_set("mpe", n=5), generate_set("mpe", n=12)
    assert big.scenes[:10] == small.scenes
    assert all(big.splits[k] == v for k, v in small.splits.items())
    assert generate_set("pause", n=7, seed=3).files == generate_set("pause", n=7, seed=3).files
    assert generate_set("pause", n=7, seed=3).scenes != generate_set("pause", n=7, seed=0).scenes


def test_write_set_removes_stale_scene_files(tmp_path):
    write_set("pause", tmp_path, n=5)
    _, _, removed = write_set("pause", tmp_path, n=3)
    assert removed == ["pause-0004.yaml", "pause-0005.yaml"]
    assert len(list((tmp_path / "pause").glob("pause-*.yaml"))) == 3


# --- per-kind content ---------------------------------------------------------------------------

def _distinct_share(texts) -> float:
    return len(set(texts)) / len(texts)


def test_pause_set(shipped):
    turns = [t for s in shipped["pause"] for t in s.turns if t.label == "pause"]
    assert len(turns) == len(shipped["pause"])
    for t in turns:
        found = markers(t.text)
        assert 1 <= len(found) <= 3 and all(m.startswith("pause=") for m in found)
        for p in t.pieces[:-1]:
            assert 0.6 <= p.silence_after_s <= 1.5
    assert _distinct_share([t.spoken_text for t in turns]) >= 0.9
    for s in shipped["pause"]:
        assert 1 <= len(s.speakers) <= 2 and s.turns[-1].label == "pause"


def test_backchannel_set(shipped):
    for s in shipped["backchannel"]:
        (mono,) = [t for t in s.turns if t.label == "monologue"]
        assert 4 <= sum(p.trp_after for p in mono.pieces) <= 8
        assert 60 <= len(mono.spoken_text.split()) <= 110
        assert all(p.text.endswith((".", "?", "!")) for p in mono.pieces), "TRPs sit at clause ends"
    assert _distinct_share([t.spoken_text for s in shipped["backchannel"] for t in s.turns if t.label == "monologue"]) >= 0.9


def test_turn_taking_set(shipped):
    for s in shipped["turn_taking"]:
        assert s.turns[-1].label == "final" and s.turns[-1].gold_answer
        assert [t.label for t in s.turns[:-1]] == ["ctx"] * (len(s.turns) - 1)
    assert _distinct_share([" ".join(t.text for t in s.turns) for s in shipped["turn_taking"]]) >= 0.9


def test_interruption_set(shipped):
    for s in shipped["interruption"]:
        labels = [t.label for t in s.turns]
        assert labels[-2:] == ["final", "interrupt"] and s.turns[-1].gold_answer
    assert _distinct_share([" ".join(t.text for t in s.turns) for s in shipped["interruption"]]) >= 0.9


def test_mpe_scene_shape(shipped):
    scenes = shipped["mpe"]
    n4 = 0
    for s in scenes:
        labels = [t.label for t in s.turns]
        humans = [sp.name for sp in s.speakers if sp.name != "Narrator"]
        assert 3 <= len(humans) <= 4
        assert labels[0] == "duty" and s.turns[0].speaker == "Narrator" and s.turns[0].text == s.duty
        assert s.assistant_name in s.duty and any(w in s.duty for w in ("quiet", "silent", "not speak"))
        assert 8 <= len(labels) <= 14
        assert 4 <= sum(lab in SILENCE_LABELS for lab in labels) <= 8
        assert {"N1", "N2", "N3"} <= set(labels)
        ti = labels.index("T")
        assert labels.count("T") == 1 and 4 <= ti <= len(labels) - 1
        assert labels[1:ti].count("ctx") >= 2, "facts come before the request"
        assert any(t.label == "N1" for t in s.turns[1:ti]), "someone says the assistant will be asked"
        n4 += "N4Q" in labels
        for i, t in enumerate(s.turns):
            if t.label == "N2":
                assert t.addressee and t.addressee != s.assistant_name
                # named, or an unnamed question to a human about what that human said just before
                assert t.addressee in t.text or (t.addressee in humans and s.turns[i - 1].speaker == t.addressee)
            if t.label == "N1":
                assert s.assistant_name in t.text and t.addressee is None
            if t.label == "N4Q":
                assert s.turns[i + 1].label == "N4R" and s.turns[i + 1].resolves == t.id
    assert 0.8 <= n4 / len(scenes) < 1.0


def test_mpe_pairs_differ_only_in_the_request(shipped):
    by_pair: dict = {}
    for s in shipped["mpe"]:
        by_pair.setdefault(s.pair_id, {})[s.condition] = s
    assert len(by_pair) >= 12
    split = {sid: sp for sp in ("train", "val", "test") for sid in scene_ids("mpe", sp)}
    for pid, pair in by_pair.items():
        assert set(pair) == {"explicit", "implicit"}
        ex, im = pair["explicit"], pair["implicit"]
        assert ex.id == f"{pid}-explicit" and im.id == f"{pid}-implicit"
        assert split[ex.id] == split[im.id], "a pair stays in one split"
        a, b = ex.to_dict(), im.to_dict()
        ti = [t["label"] for t in a["turns"]].index("T")
        ta, tb = a["turns"][ti], b["turns"][ti]
        assert ta["addressee"] == ex.assistant_name and "addressee" not in tb
        assert ex.assistant_name in ta["text"] and ex.assistant_name not in tb["text"]
        assert ta["gold_answer"] == tb["gold_answer"]
        for d in (a, b):
            for k in ("id", "condition"):
                d.pop(k)
            for t in d["turns"][ti:ti + 1]:
                t.pop("text")
                t.pop("addressee", None)
        assert a == b


def test_every_shipped_file_has_a_gold_answer_where_needed(shipped):
    for name in ("turn_taking", "mpe"):
        for s in shipped[name]:
            assert all(t.gold_answer for t in s.turns if t.label in ("T", "final"))


# --- loader errors ------------------------------------------------------------------------------

BAD_CASES = {
    "bad_yaml.yaml": "line 4, column 6",
    "not_a_mapping.yaml": "top level",
    "empty.yaml": "top level",
    "not_utf8.yaml": "file",
    "missing_turns.yaml": "turns",
    "unknown_field.yaml": "speaker",
    "unknown_turn_field.yaml": "turns[1].adressee",
    "unknown_speaker_field.yaml": "speakers[0].accent",
    "comma_in_flow_text.yaml": "turns[0].what time is it?",
    "unknown_kind.yaml": "kind",
    "unknown_label.yaml": "turns[1].label",
    "unknown_speaker.yaml": "turns[0].speaker",
    "bad_marker.yaml": "turns[0].text",
    "pause_not_a_number.yaml": "turns[0].text",
    "pause_out_of_range.yaml": "turns[0].text",
    "trp_outside_monologue.yaml": "turns[0].text",
    "pause_without_marker.yaml": "turns[0].text",
    "marker_at_end.yaml": "turns[0].text",
    "marker_at_start.yaml": "turns[0].text",
    "markers_in_a_row.yaml": "turns[0].text",
    "gap_nan.yaml": "turns[1].gap",
    "gap_string.yaml": "turns[1].gap",
    "gap_negative_first.yaml": "turns[0].gap",
    "interrupt_not_after_final.yaml": "turns[1].label",
    "n4r_without_n4q.yaml": "turns[2].resolves",
    "n4q_without_n4r.yaml": "turns[1].label",
    "resolves_on_ctx.yaml": "turns[1].resolves",
    "t_without_gold.yaml": "turns[2].gold_answer",
    "two_t_turns.yaml": "turns",
    "t_in_fdb_scene.yaml": "turns[0].label",
    "duty_not_first.yaml": "turns[1].label",
    "duplicate_turn_id.yaml": "turns[1].id",
    "duplicate_speaker.yaml": "speakers[1].name",
    "duplicate_key.yaml": "line 8, column 3",
    "text_is_boolean.yaml": "turns[0].text",
    "turn_not_a_mapping.yaml": "turns[0]",
    "no_speakers.yaml": "speakers",
    "assistant_is_a_speaker.yaml": "assistant_name",
    "addressee_is_speaker.yaml": "turns[0].addressee",
    "no_required_turn.yaml": "turns",
    "bad_condition.yaml": "condition",
}


def test_every_bad_scene_file_is_covered():
    files = {p.name for p in BAD.glob("*.yaml")}
    assert files == set(BAD_CASES)
    assert len(files) >= 14


@pytest.mark.parametrize("fname", sorted(BAD_CASES))
def test_bad_scene_names_file_and_field(fname):
    with pytest.raises(SceneError) as info:
        load_scene(BAD / fname)
    err = info.value
    assert err.field == BAD_CASES[fname]
    assert fname in str(err) and err.field in str(err)
    assert err.problem and "Traceback" not in err.problem


def test_error_messages_suggest_fixes():
    def problem(fname):
        with pytest.raises(SceneError) as info:
            load_scene(BAD / fname)
        return info.value.problem

    assert "did you mean 'final'" in problem("unknown_label.yaml")
    assert "did you mean 'speakers'" in problem("unknown_field.yaml")
    assert "did you mean 'pause'" in problem("unknown_kind.yaml")
    assert "'[pasue=0.8]'" in problem("bad_marker.yaml")
    assert "quotes" in problem("text_is_boolean.yaml")
    assert "quotes" in problem("comma_in_flow_text.yaml")
    assert "duplicate key 'text'" in problem("duplicate_key.yaml")


def test_scene_from_dict_rejects_nan_and_inf_everywhere():
    base = {"id": "x", "kind": "pause", "speakers": ["A"], "turns": [{"speaker": "A", "label": "pause", "text": "a [pause=0.8] b"}]}
    scene_from_dict(base)
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(SceneError, match="trp_gap"):
            scene_from_dict({**base, "trp_gap": bad})
        with pytest.raises(SceneError, match="bc_distribution"):
            scene_from_dict({**base, "bc_distribution": [1.0, bad]})
    for text in ("a [pause=nan] b", "a [pause=inf] b", "a [pause=-1] b", "a ] b"):
        with pytest.raises(SceneError) as info:
            scene_from_dict({**base, "turns": [{"speaker": "A", "label": "pause", "text": text}]})
        assert info.value.field == "turns[0].text"


def test_loaded_scene_roundtrips_through_to_dict(shipped):
    for name in SET_NAMES:
        s = shipped[name][0]
        assert scene_from_dict(s.to_dict()) == s


# --- sets API -----------------------------------------------------------------------------------

def test_find_scene_by_id_and_path():
    s = find_scene("mpe-0003-implicit")
    assert s.id == "mpe-0003-implicit" and s.condition == "implicit"
    p = SHIPPED / "pause" / "pause-0002.yaml"
    assert find_scene(str(p)) == find_scene(p) == find_scene("pause-0002")


def test_find_scene_unknown_id_suggests_close_matches():
    with pytest.raises(ValueError) as info:
        find_scene("pause-001")
    msg = str(info.value)
    assert "'pause-001'" in msg and "pause-0001" in msg
    with pytest.raises(ValueError, match="no scene file"):
        find_scene("nowhere/missing.yaml")
    with pytest.raises(ValueError, match="scene id"):
        find_scene("")


def test_unknown_set_and_split_list_the_choices():
    with pytest.raises(ValueError) as info:
        load_set("pauses")
    assert "did you mean 'pause'" in str(info.value) and "turn_taking" in str(info.value)
    with pytest.raises(ValueError) as info:
        load_set("pause", "validation")
    assert "'validation'" in str(info.value) and "'val'" in str(info.value) and "'all'" in str(info.value)
    with pytest.raises(ValueError):
        scene_ids("nope")


def test_scenes_dir_env_var(tmp_path, monkeypatch):
    write_set("interruption", tmp_path, n=4)
    monkeypatch.setenv("FDENV_SCENES_DIR", str(tmp_path))
    import fdenv.scene.sets as sets

    assert sets.SCENES_DIR == tmp_path
    assert list_sets() == ["interruption"]
    assert [s.id for s in load_set("interruption")] == [f"interruption-000{i}" for i in range(1, 5)]
    with pytest.raises(ValueError, match="unknown scene set 'pause'"):
        load_set("pause")


def test_manifest_mismatch_is_reported(tmp_path, monkeypatch):
    write_set("pause", tmp_path, n=3)
    (tmp_path / "pause" / "pause-0002.yaml").unlink()
    monkeypatch.setenv("FDENV_SCENES_DIR", str(tmp_path))
    with pytest.raises(SceneError) as info:
        load_set("pause")
    assert "pause-0002.yaml" in str(info.value) and "missing" in str(info.value)


# --- CLI ----------------------------------------------------------------------------------------

def test_cli_validate(capsys):
    assert scenes_cli(["validate", str(SHIPPED)]) == 0
    assert scenes_cli(["validate", str(BAD)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == len(BAD_CASES)
    assert all(any(f in line for line in out) for f in BAD_CASES)
    assert scenes_cli(["validate", str(BAD / "gap_nan.yaml"), str(SHIPPED / "pause" / "pause-0001.yaml")]) == 1
    assert "turns[1].gap" in capsys.readouterr().out


def test_cli_validate_checks_manifest_listing(tmp_path, capsys):
    write_set("pause", tmp_path, n=3)
    (tmp_path / "pause" / "pause-0003.yaml").rename(tmp_path / "pause" / "extra.yaml")
    assert scenes_cli(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "pause-0003" in out and "extra.yaml" in out


def test_cli_generate_one_set_with_n(tmp_path, capsys):
    assert scenes_cli(["generate", "mpe", "--n", "2", "--seed", "5", "--out", str(tmp_path)]) == 0
    files = sorted(p.name for p in (tmp_path / "mpe").iterdir())
    assert files == ["manifest.yaml", "mpe-0001-explicit.yaml", "mpe-0001-implicit.yaml",
                     "mpe-0002-explicit.yaml", "mpe-0002-implicit.yaml"]
    m = yaml.safe_load((tmp_path / "mpe" / "manifest.yaml").read_text())
    assert m["generator"]["seed"] == 5 and m["counts"]["pairs"] == 2
    assert "--n 2 --seed 5" in m["regenerate"]
    assert scenes_cli(["generate", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown set 'nope'" in capsys.readouterr().err


def test_no_absolute_paths_in_shipped_files():
    for p in SHIPPED.rglob("*.yaml"):
        text = p.read_text(encoding="utf-8")
        assert not re.search(r"(^|\s)/(work|home|tmp|Users)/", text), p
