"""The Duplex-MPE scene generator (template back end), the shipped ``scenes/mpe`` set and its
manifest, and ``fdenv-scenes mpe`` (fast; no audio)."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from fdenv.cli.scenes import main as scenes_cli
from fdenv.scene import load_set, scene_from_dict
from fdenv.scene.generate import generate_set, mpe, mpe_files
from fdenv.scene.schema import SILENCE_LABELS

os.environ["HF_HUB_OFFLINE"] = "1"

SHIPPED = Path(__file__).resolve().parent.parent / "scenes" / "mpe"
ATTRIBUTES = ("setting", "activity", "relationship", "device", "register")


@pytest.fixture(autouse=True)
def _shipped_dir(monkeypatch):
    monkeypatch.delenv("FDENV_SCENES_DIR", raising=False)


class _Made:
    def __init__(self, files, scenes, splits):
        self.files, self.scenes, self.splits = files, scenes, splits


@pytest.fixture(scope="module")
def big():
    """The default set (600 pairs), generated once for the module."""
    return _Made(*mpe_files())


def _t(d: dict) -> dict:
    (t,) = [t for t in d["turns"] if t["label"] == "T"]
    return t


def test_600_template_pairs_validate(big):
    assert len(big.scenes) == 1200
    for d in big.scenes:
        s = scene_from_dict(d, source=d["id"])  # generate_set validates too; here explicitly
        assert s.kind == "mpe" and s.condition in ("explicit", "implicit") and s.pair_id == d["pair_id"]
    ids = [d["id"] for d in big.scenes]
    assert len(set(ids)) == len(ids)
    assert Counter(big.splits.values()) == {"train": 800, "val": 200, "test": 200}


def test_requests_and_openings_are_distinct(big):
    for cond in ("explicit", "implicit"):
        scenes = [d for d in big.scenes if d["condition"] == cond]
        requests = [_t(d)["text"] for d in scenes]
        openings = [d["turns"][1]["text"] for d in scenes]
        assert len(set(requests)) == len(requests), (cond, Counter(requests).most_common(5))
        assert len(set(openings)) / len(openings) >= 0.9, (cond, Counter(openings).most_common(5))


def _pairs(big):
    pairs: dict = {}
    for d in big.scenes:
        pairs.setdefault(d["pair_id"], {})[d["condition"]] = d
    return pairs


def test_twins_differ_only_in_the_wording_of_t(big):
    pairs = _pairs(big)
    assert len(pairs) == 600
    forms = Counter()
    for pid, pair in pairs.items():
        ex, im = pair["explicit"], pair["implicit"]
        A = ex.get("assistant_name", "Aria")
        te, ti = _t(ex), _t(im)
        # the implicit request names no assistant and is one of the task's device requests
        assert not re.search(rf"\b{A}\b", ti["text"]) and re.search(rf"\b{A}\b", te["text"])
        assert te["addressee"] == A and "addressee" not in ti
        assert te["gold_answer"] == ti["gold_answer"] and te["gold_facts"] == ti["gold_facts"]
        matches = [f for f in mpe.EXPLICIT_FORMS if mpe.explicit_request(f, ti["text"], A) == te["text"]]
        assert matches, (te["text"], ti["text"])
        forms[matches[0]] += 1
        # every other turn, gap and field is identical
        a = {k: v for k, v in ex.items() if k not in ("id", "condition", "turns")}
        b = {k: v for k, v in im.items() if k not in ("id", "condition", "turns")}
        assert a == b
        strip = lambda t: {k: v for k, v in t.items() if k not in ("text", "addressee")}  # noqa: E731
        assert [strip(t) if t["label"] == "T" else t for t in ex["turns"]] == \
               [strip(t) if t["label"] == "T" else t for t in im["turns"]]
    assert len(forms) == len(mpe.EXPLICIT_FORMS), "every form of the explicit request is used"
    first = sum(k for f, k in forms.items() if f.startswith(("{A}", "Hey {A}", "Okay {A}")))
    last = sum(k for f, k in forms.items() if f.rstrip("?.").endswith("{A}"))
    assert first > 0.3 * len(pairs) and last > 0.1 * len(pairs), "the name at the start and at the end"


def test_context_says_the_assistant_will_be_asked_and_humans_ask_each_other(big):
    pairs = _pairs(big)
    human_q = 0
    named_other = 0
    for pair in pairs.values():
        d = pair["implicit"]
        A = d.get("assistant_name", "Aria")
        labels = [t["label"] for t in d["turns"]]
        ti = labels.index("T")
        before = d["turns"][1:ti]
        asks = [re.escape(f).replace(r"\{A\}", A).replace(r"\{vp\}", ".+").replace(r"\{P\}", r"\w+") for f in mpe.ASK_CONTEXTS]
        assert any(t["label"] == "N1" and any(re.fullmatch(rx, t["text"]) for rx in asks) for t in before), before
        humans = set(d["speakers"]) - {"Narrator"}
        named_other += any(re.search(rf"\b{h}\b", _t(d)["text"]) for h in humans)
        for i, t in enumerate(d["turns"]):
            if t["label"] == "N2" and t["addressee"] in humans and t["addressee"] not in t["text"]:
                assert d["turns"][i - 1]["speaker"] == t["addressee"] and t["text"].endswith("?")
                human_q += 1
                break
    assert human_q >= 0.3 * len(pairs), f"unnamed questions between humans in {human_q} of {len(pairs)} scenes"
    assert 0.3 * len(pairs) <= named_other <= 0.7 * len(pairs), "implicit requests often mention a human (not as addressee)"


def test_every_pair_passes_the_design_checks_that_the_claude_back_end_uses(big):
    from fdenv.scene.generate.mpe_checks import pair_problems, unnamed_human_questions

    pairs = _pairs(big)
    for pid, pair in pairs.items():
        assert pair_problems(pair["explicit"], pair["implicit"]) == [], pid
    assert sum(unnamed_human_questions(p["implicit"]) > 0 for p in pairs.values()) >= 0.3 * len(pairs)


def test_the_design_checks_reject_the_first_generation_pairs():
    # scenes/v1/mpe: the implicit T was the explicit one minus the name ("Hey, how much ...?"),
    # with no context turn and a plain gold sentence
    from fdenv.scene.generate.mpe_checks import pair_problems

    v1 = SHIPPED.parent / "v1" / "mpe"
    problems = Counter()
    for f in sorted(v1.glob("mpe-*-explicit.yaml")):
        ex = yaml.safe_load(f.read_text())
        im = yaml.safe_load(f.with_name(f.name.replace("explicit", "implicit")).read_text())
        found = pair_problems(ex, im)
        assert found, f.name
        problems.update(p.split(" (")[0] for p in found)
    assert problems["T needs a gold_answer and its gold_facts"] == 200
    assert problems["the implicit request must start with a verb asking a device to do something"] >= 190


def test_gold_facts_accept_the_gold_sentence_and_reject_a_wrong_value(big):
    from fdenv.score.facts import judge, parse_key

    for pair in _pairs(big).values():
        t = _t(pair["explicit"])
        key = parse_key(t["gold_facts"])
        assert judge(t["gold_answer"], key), (t["gold_answer"], t["gold_facts"])
        wrong = [f for f in key.facts if f.kind == "number"]
        if wrong:
            v = int(wrong[0].value)
            assert not judge(t["gold_answer"].replace(str(v), str(v + 1)), key), t["gold_answer"]


def test_scene_shape_follows_spec_7(big):
    n4 = 0
    positions = Counter()
    for d in big.scenes:
        s = scene_from_dict(d)
        labels = [t.label for t in s.turns]
        humans = [sp.name for sp in s.speakers if sp.name != "Narrator"]
        assert 3 <= len(humans) <= 4 and set(humans) <= {t.speaker for t in s.turns}
        assert labels[0] == "duty" and s.turns[0].speaker == "Narrator" and s.turns[0].text == s.duty
        assert 8 <= len(labels) <= 14
        assert 4 <= sum(lab in SILENCE_LABELS for lab in labels) <= 8 and {"N1", "N2", "N3"} <= set(labels)
        ti = labels.index("T")
        assert labels.count("T") == 1 and 4 <= ti <= len(labels) - 1
        assert labels[1] == "ctx" and labels[1:ti].count("ctx") >= 2, "the opening line and the facts come first"
        positions[ti / len(labels) >= 0.5] += 1
        n4 += "N4Q" in labels
        devices = {dev for _, dev in mpe.DEVICE_CONTEXTS[s.attributes["device"]]}
        for i, t in enumerate(s.turns):
            if t.label == "N2":
                assert t.addressee != s.assistant_name
                assert t.addressee in t.text or s.turns[i - 1].speaker == t.addressee  # named, or a follow-up question
                assert t.addressee in humans or t.addressee in devices, (t.addressee, s.attributes["device"])
            if t.label == "N1":
                assert s.assistant_name in t.text and t.addressee is None
            if t.label in ("ctx", "N3", "N4R"):
                assert not re.search(rf"\b{s.assistant_name}\b", t.text), (s.id, t.text)
            if t.label == "N4Q":
                assert s.turns[i + 1].label == "N4R" and s.turns[i + 1].resolves == t.id
    assert n4 / len(big.scenes) == pytest.approx(0.9), "an N4 event in exactly 9 of every 10 pairs"
    # T comes after the duty, two facts and the ask context: a little later than SPEC's 4th turn
    assert min(positions.values()) > 0.2 * len(big.scenes), "requests early and late"


def test_five_attributes_are_combined_and_shape_the_text(big):
    pairs = [d for d in big.scenes if d["condition"] == "explicit"]
    values = {a: Counter(d["attributes"][a] for d in pairs) for a in ATTRIBUTES}
    assert len(values["setting"]) >= 10 and len(values["activity"]) >= 15
    assert set(values["relationship"]) == set(mpe.RELATIONSHIPS)
    assert set(values["device"]) == set(mpe.DEVICE_CONTEXTS) and set(values["register"]) == set(mpe.REGISTERS)
    combos = {tuple(d["attributes"][a] for a in ATTRIBUTES) for d in pairs}
    assert len(combos) >= 0.9 * len(pairs), "combinations, not a few fixed scenarios"
    assert len({d["attributes"]["task"] for d in pairs}) == len(mpe.FAMILIES)
    for d in pairs:
        a = d["attributes"]
        opening = d["turns"][1]["text"]
        assert mpe.SETTINGS[a["setting"]] in opening
        assert any(aside in opening for aside in mpe.RELATIONSHIPS[a["relationship"]])
        fillers = [t["text"] for t in d["turns"] if t["label"] == "ctx" and t["text"] in sum(mpe.FILLERS.values(), ())]
        assert all(f in mpe.FILLERS[a["register"]] for f in fillers)
        if not mpe.DEVICE_CONTEXTS[a["device"]]:
            names = set(d["speakers"])
            assert all(t["addressee"] in names for t in d["turns"] if t["label"] == "N2")


def test_scene_i_depends_only_on_seed_and_the_scenes_before():
    small, bigger = generate_set("mpe", n=3), generate_set("mpe", n=9)
    assert bigger.scenes[:6] == small.scenes
    assert generate_set("mpe", n=3, seed=1).scenes != small.scenes
    assert generate_set("mpe", n=3, seed=1).files == generate_set("mpe", n=3, seed=1).files


def test_gold_answers_say_numbers_plainly(big):
    for d in big.scenes:
        gold = _t(d)["gold_answer"]
        assert "o'clock" not in gold and not re.search(r"\d{3,}", gold), gold
        assert re.search(r"\b[24]\b", gold) is None, gold  # "two" and "four" sound like "to" and "for"


# --- shipped set and manifest ------------------------------------------------------------------


def test_shipped_set_has_600_pairs_and_regenerates(big):
    m = yaml.safe_load((SHIPPED / "manifest.yaml").read_text())
    assert m["counts"]["pairs"] >= 600 and m["generator"]["version"] == mpe.VERSION
    assert (m["generator"]["n"], m["generator"]["seed"]) == (mpe.DEFAULT_N, 0)
    files = big.files
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in SHIPPED.glob("*.yaml")}
    assert on_disk == files, "regenerate with `fdenv-scenes generate mpe` and commit"


def test_manifest_counts_match_the_files():
    m = yaml.safe_load((SHIPPED / "manifest.yaml").read_text())
    scenes = load_set("mpe")
    files = sorted(p.stem for p in SHIPPED.glob("mpe-*.yaml"))
    assert sorted(m["scenes"]) == files == sorted(s.id for s in scenes)
    c = m["counts"]
    assert c["scenes"] == len(scenes) == 2 * c["pairs"]
    assert c["turns"] == dict(Counter(t.label for s in scenes for t in s.turns))
    assert c["silence_windows"] == sum(t.label in SILENCE_LABELS for s in scenes for t in s.turns)
    n4 = sum(any(t.label == "N4Q" for t in s.turns) for s in scenes)
    assert c["n4_scenes"] == n4 and c["n4_share"] == pytest.approx(n4 / len(scenes), abs=1e-4)
    explicit = [s for s in scenes if s.condition == "explicit"]
    for a in ATTRIBUTES + ("task",):
        assert c["attributes"][a] == dict(Counter(s.attributes[a] for s in explicit)), a
    assert c["humans"] == dict(Counter(len(s.speakers) - 1 for s in explicit))
    n2 = Counter("person" if t.addressee in {sp.name for sp in s.speakers} else "device"
                 for s in scenes for t in s.turns if t.label == "N2")
    assert c["n2_addressees"] == {"device": n2["device"], "person": n2["person"]}
    # split by pair: both members in one split, 4/1/1
    by_pair: dict = {}
    for sid, split in m["scenes"].items():
        by_pair.setdefault(sid.rsplit("-", 1)[0], set()).add(split)
    assert all(len(v) == 1 for v in by_pair.values())
    assert c["splits"] == dict(Counter(m["scenes"].values()))
    assert c["splits"] == {"train": 800, "val": 200, "test": 200}


def test_cli_mpe_template(tmp_path, capsys):
    assert scenes_cli(["mpe", "--n", "3", "--out", str(tmp_path)]) == 0
    files = sorted(p.name for p in (tmp_path / "mpe").iterdir())
    assert files == ["manifest.yaml"] + [f"mpe-000{i}-{c}.yaml" for i in (1, 2, 3) for c in ("explicit", "implicit")]
    m = yaml.safe_load((tmp_path / "mpe" / "manifest.yaml").read_text())
    assert m["counts"]["pairs"] == 3 and "attributes" in m["counts"] and "--n 3" in m["regenerate"]
    assert scenes_cli(["generate", "mpe", "--n", "3", "--out", str(tmp_path)]) == 0
    assert scenes_cli(["validate", str(tmp_path / "mpe")]) == 0
    assert scenes_cli(["generate", "pause", "--backend", "claude", "--out", str(tmp_path)]) == 2
    assert "mpe set only" in capsys.readouterr().err


def test_cli_claude_backend_without_a_key_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert scenes_cli(["mpe", "--backend", "claude", "--n", "1", "--out", str(tmp_path)]) == 1
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err
