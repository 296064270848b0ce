"""The offline judge's key-fact rule: fact extraction, and agreement with a hand-written set of
(gold, answer, verdict) cases in tests/data/judge_cases.yaml."""

from pathlib import Path

import pytest
import yaml

from fdenv.score import facts as F
from fdenv.score.judge import OfflineJudge

CASES = Path(__file__).parent / "data" / "judge_cases.yaml"


def _cases():
    groups = yaml.safe_load(CASES.read_text())["groups"]
    return [(g["gold"], g.get("facts"), a, v, kind) for g in groups for a, v, kind in g["cases"]]


@pytest.mark.parametrize("text, facts", [
    ("quarter past three", ["3:15"]),
    ("It ends at 15:15.", ["3:15"]),
    ("half past seven or quarter to eight", ["7:30", "7:45"]),
    ("Leave at seven thirty", ["7:30"]),
    ("three hundred and forty pounds", ["340 pound"]),
    ("£40 each", ["40 pound"]),
    ("twelve pounds fifty", ["12.5 pound"]),
    ("five large pizzas", ["5 pizza"]),
    ("one loaf, two loaves", ["1 loaf", "2 loaf"]),
    ("the twenty-first of June", ["day 21 of June"]),
    ("March 12th", ["day 12 of March"]),
    ("Yes, it is open", ["yes"]),
    ("It isn't open", ["no"]),
    ("No problem, it's open", []),
    ("at 4 pounds each", ["4 pound"]),
    ("at eight tonight", ["8:00"]),
])
def test_extract(text, facts):
    assert [str(f) for f in F.extract(text)] == facts


def test_issue_examples_numbers_and_times():
    j = OfflineJudge()
    assert j.correct("Each person pays 35 pounds", "40 pounds each") is False
    assert j.correct("40", "40 pounds each") is True
    assert j.correct("Leave at quarter past three.", "quarter past three") is True
    assert j.correct("You need to leave at half past three.", "quarter past three") is False


def test_structured_key_given_and_wrong():
    j = OfflineJudge()
    facts = ["40 pounds", "given 20 pounds"]
    assert j.correct("With the 20 pound tip, 40 pounds each.", "Each person pays 40 pounds.", facts=facts) is True
    assert j.correct("With the 25 pound tip, 40 pounds each.", "Each person pays 40 pounds.", facts=facts) is False
    who = ["the doctor", "not the nurse"]
    assert j.correct("The doctor, not the nurse.", "The doctor has it.", facts=who) is True
    assert j.correct("The nurse or the doctor.", "The doctor has it.", facts=who) is False
    with pytest.raises(ValueError, match="no key fact"):
        F.parse_key(["given 20 pounds"])


def test_plain_gold_without_facts_keeps_token_rule():
    j = OfflineJudge()
    assert F.key_from_sentence("The keys are with Maya.") is None
    assert j.correct("Maya has the keys", "The keys are with Maya.") is True
    assert j.correct("Nobody knows", "The keys are with Maya.") is False


def test_agreement_with_hand_written_cases():
    cases = _cases()
    assert len(cases) >= 150
    kinds = {k for *_, k in cases}
    assert {"paraphrase", "partial", "wrong", "hedged", "chatter"} <= kinds
    assert sum(v for _, _, _, v, _ in cases) >= 0.35 * len(cases)  # both verdicts well represented
    j = OfflineJudge()
    wrong = [(gold, a, v) for gold, facts, a, v, _ in cases if j.correct(a, gold, facts=facts) is not v]
    agreement = 1 - len(wrong) / len(cases)
    assert agreement >= 0.97, f"agreement {agreement:.3f}; disagreements: {wrong}"


def test_scene_gold_facts_load_and_errors():
    from fdenv.scene.load import SceneError, scene_from_dict

    def scene(**t):
        turns = [{"id": "t0", "speaker": "Ann", "label": "ctx", "text": "The bill is 80 pounds."},
                 {"id": "t1", "speaker": "Ann", "label": "T", "text": "Aria, what is half of it?", **t}]
        return {"id": "s", "kind": "custom", "speakers": ["Ann"], "turns": turns}

    sc = scene_from_dict(scene(gold_answer="It is 40 pounds.", gold_facts=["40 pounds", "given 80 pounds"]))
    assert sc.turns[1].gold_facts == ("40 pounds", "given 80 pounds")
    assert sc.to_dict()["turns"][1]["gold_facts"] == ["40 pounds", "given 80 pounds"]
    with pytest.raises(SceneError, match="gold_facts.*no key fact"):
        scene_from_dict(scene(gold_answer="It is 40 pounds.", gold_facts=["given 80 pounds"]))
    with pytest.raises(SceneError, match="gold_facts.*need a gold_answer"):
        scene_from_dict(scene(gold_answer=None, gold_facts=["40 pounds"]))
    with pytest.raises(SceneError, match="gold_facts.*list of facts"):
        scene_from_dict(scene(gold_answer="x", gold_facts="40 pounds"))
