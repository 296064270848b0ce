"""The ``turn_detector`` agent: the cascade, with a turn that ends early when the words say it is
over. Known answers through the real env (paper timing: the script's gaps exactly), with a fixed
recogniser so that only the decision is under test."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv.sim.env import RoomEnv  # noqa: E402
from fdenv.train.turn_end import (  # noqa: E402
    N_FEATURES, N_SOUND, N_TEXT, PITCH_FRAMES, SOUND_BANDS, SOUND_WINDOWS, TurnEndModel, fit, pitch_features)
from fdenv_agents import AGENTS, TurnDetectorAgent, make_agent  # noqa: E402
from fdenv_agents.cascade import FixedTranscriber  # noqa: E402

from .helpers import rollout, scene  # noqa: E402
from .test_agents_cascade import onsets, turn  # noqa: E402
from .test_turn_end import _toy  # noqa: E402

CONTEXT = "I was reading about railways yesterday."
QUESTION = "Can you tell me about the history of trains?"
GAP = 1.0  # shorter than the detector's 2 s maximum delay: the cascade would not end the turn there
TURNS = [
    {"speaker": "Ann", "text": CONTEXT, "label": "ctx"},
    {"speaker": "Ann", "text": QUESTION, "label": "final", "gap": GAP},
]
TWO_TURNS = scene(TURNS, kind="turn_taking", speakers=("Ann",))


def constant(bias: float) -> TurnEndModel:
    return TurnEndModel(np.zeros(N_FEATURES), bias, threshold=0.5)


def play(model, texts, **knobs):
    agent = TurnDetectorAgent(turn_end_model=model, transcriber=FixedTranscriber(texts), **knobs)
    rec, _ = rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), agent)
    ctx, final = turn(rec, "ctx"), turn(rec, "final")
    return agent, onsets(rec), ctx, final


def test_sure_it_is_over_it_answers_at_the_short_silence():
    agent, on, ctx, _ = play(constant(+50.0), [CONTEXT])
    first = [t for t in on if t > ctx.end][0]
    # judged at the first 32 ms window with 250 ms of silence; the answer starts in the next frame
    assert 0.25 <= first - ctx.end <= 0.25 + 0.25, first - ctx.end
    assert agent.stats()["early_ends"] >= 1 and agent.stats()["judged"][0]["p"] == 1.0


def test_sure_it_is_not_over_it_waits_the_long_silence():
    agent, on, ctx, final = play(constant(-50.0), [CONTEXT, QUESTION])
    assert not [t for t in on if ctx.end < t < final.start], "answered inside the 1.0 s gap"
    first = [t for t in on if t > final.end][0]
    assert 2.0 <= first - final.end <= 2.0 + 0.25, first - final.end  # its default fallback, 2 s
    assert agent.stats()["early_ends"] == 0 and len(agent.stats()["judged"]) == 2


def test_the_words_decide_a_cut_off_sentence_waits_a_question_is_answered_at_once():
    texts, named, labels = _toy()
    model = fit(texts, named, labels)
    cut = "I was reading about railways and the"  # what the recogniser holds after the first turn
    agent, on, ctx, final = play(model, [cut, QUESTION])
    assert not [t for t in on if ctx.end < t < final.start], "answered a sentence cut off on 'the'"
    first = [t for t in on if t > final.end][0]
    assert 0.25 <= first - final.end <= 0.5, first - final.end
    judged = agent.stats()["judged"]
    assert [j["text"] for j in judged] == [cut, QUESTION]
    assert judged[0]["p"] < 0.5 < judged[1]["p"]
    assert agent.transcriber.calls == 2  # the early end reuses the partial transcript
    heard = agent.stats()["heard"][-1]
    assert heard["text"] == QUESTION and heard["answered"]
    # decisions carry the frame they were made in: the second one inside the final turn's silence
    assert final.end <= judged[1]["frame"] * 0.08 <= final.end + 0.5


def test_a_model_that_holds_unfinished_words_leaves_their_silence_to_the_endpoint():
    """Sure that every turn is over, but holding: the context cut on "the" is not answered in the
    1.0 s gap; the question, whose words are finished, is answered at the short silence."""
    cut = "I was reading about railways and the"
    sure = TurnEndModel(np.zeros(N_FEATURES), 50.0, threshold=0.5, hold_unfinished=True)
    agent, on, ctx, final = play(sure, [cut, QUESTION])
    assert not [t for t in on if ctx.end < t < final.start], "answered a sentence cut off on 'the'"
    first = [t for t in on if t > final.end][0]
    assert 0.25 <= first - final.end <= 0.5, first - final.end
    assert [j["p"] for j in agent.stats()["judged"]] == [0.0, 1.0]


def test_registered_with_its_knobs_in_config_and_bad_knobs_named():
    assert AGENTS["turn_detector"] is TurnDetectorAgent
    a = make_agent("turn_detector", turn_end_model=constant(0.0), threshold=0.3, transcriber=FixedTranscriber([]))
    cfg = a.config()
    assert cfg["threshold"] == 0.3 and cfg["min_endpoint_ms"] == 250 and cfg["endpoint_silence_ms"] == 2000
    assert cfg["checkpoint_sha"] == "given" and "barge_in_ms" in cfg
    assert TurnDetectorAgent(turn_end_model=constant(0.0), transcriber=FixedTranscriber([])).threshold == 0.5
    for knobs, field in (({"min_endpoint_ms": 2500}, "min_endpoint_ms"), ({"threshold": 1.5}, "threshold"),
                         ({"min_endpoint_ms": True}, "min_endpoint_ms")):
        with pytest.raises(ValueError, match=field):
            TurnDetectorAgent(turn_end_model=constant(0.0), transcriber=FixedTranscriber([]), **knobs)
    with pytest.raises(FileNotFoundError, match="no such turn-end checkpoint"):
        TurnDetectorAgent(checkpoint="missing.json", transcriber=FixedTranscriber([]))
    single = TurnDetectorAgent(checkpoint="single_user", transcriber=FixedTranscriber([]))
    assert single.turn_end.uses_confidence and single.threshold == single.turn_end.threshold == 0.93
    assert single.config()["checkpoint"] == "single_user"
    assert single.config()["checkpoint_sha"] != TurnDetectorAgent(transcriber=FixedTranscriber([])).config()["checkpoint_sha"]


DUTY = "Your name is Aria. People near you are talking to each other, and sometimes to you."


def test_a_group_model_judges_the_episodes_that_give_a_duty_and_only_those():
    """``group_checkpoint``: with instructions at reset (a room of several people) the group model
    decides, here one that never ends a turn early; without them the single-user model, one that
    ends every turn at the first look. Known answers through the real env."""
    eager, patient = constant(+50.0), constant(-50.0)
    with_duty = scene(TURNS, kind="turn_taking", speakers=("Ann",), duty=DUTY)
    for sc, answers_in_gap, model in ((TWO_TURNS, True, "single"), (with_duty, False, "group")):
        agent = TurnDetectorAgent(turn_end_model=eager, group_turn_end_model=patient,
                                  transcriber=FixedTranscriber([CONTEXT, QUESTION]))
        rec, _ = rollout(RoomEnv(scene=sc, behaviour="paper"), agent)
        ctx, final = turn(rec, "ctx"), turn(rec, "final")
        in_gap = [t for t in onsets(rec) if ctx.end < t < final.start]
        assert bool(in_gap) is answers_in_gap, (model, in_gap)
        assert agent.stats()["turn_end_model"] == model and agent.in_group is (model == "group")
        assert agent.threshold == 0.5
    # without a group model a duty changes nothing: the one model judges every episode
    alone = TurnDetectorAgent(turn_end_model=eager, transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    rec, _ = rollout(RoomEnv(scene=with_duty, behaviour="paper"), alone)
    ctx, final = turn(rec, "ctx"), turn(rec, "final")
    assert [t for t in onsets(rec) if ctx.end < t < final.start] and alone.stats()["turn_end_model"] == "single"


def test_the_group_knobs_reach_config_and_bad_ones_are_named():
    none = TurnDetectorAgent(transcriber=FixedTranscriber([])).config()
    assert not any(k.startswith("group") for k in none)  # a single model's config (and run key) as before
    both = TurnDetectorAgent(checkpoint="single_user", group_checkpoint="words", group_threshold=0.8,
                             transcriber=FixedTranscriber([])).config()
    assert both["group_checkpoint"] == "words" and both["group_threshold"] == 0.8 and both["threshold"] == 0.93
    assert both["group_checkpoint_sha"] == none["checkpoint_sha"] != both["checkpoint_sha"]
    with pytest.raises(ValueError, match="group_threshold"):
        TurnDetectorAgent(group_checkpoint="words", group_threshold=2.0, transcriber=FixedTranscriber([]))
    with pytest.raises(FileNotFoundError, match="no such turn-end checkpoint"):
        TurnDetectorAgent(group_checkpoint="missing.json", transcriber=FixedTranscriber([]))

    class TextOnly:
        def transcribe(self, audio16k, prompt=None):
            return "hello"

    with pytest.raises(ValueError, match="group_checkpoint single_user reads the recogniser's confidence"):
        TurnDetectorAgent(group_checkpoint="single_user", transcriber=TextOnly())


def test_a_probability_that_rises_with_the_silence_answers_where_it_reaches_the_threshold():
    model = constant(-2.0)
    model.weights[N_TEXT:] = 1.0  # logit -2 + steps passed: reaches 1 at 0.7 s
    agent, on, ctx, _ = play(model, [CONTEXT], threshold=0.7)
    first = [t for t in on if t > ctx.end][0]
    assert 0.7 <= first - ctx.end <= 0.7 + 0.25, first - ctx.end
    judged = agent.stats()["judged"][0]
    assert judged["p"] < 0.5 and 0.7 <= judged["answered_after_s"] < 0.7 + 0.04


def test_a_model_that_decides_at_its_first_look_leaves_a_later_rise_to_the_endpoint():
    """The same rising model, deciding at its first look (P 0.12 there, under 0.7): the context's
    1.0 s gap is not answered although P reaches 0.73 in it, and the question is answered at the
    2 s endpoint; a model sure at its first look answers there as before. A window that closes
    before the agent's first look is refused."""
    rising = constant(-2.0)
    rising.weights[N_TEXT:] = 1.0
    first_look = TurnEndModel(rising.weights, -2.0, threshold=0.5, answer_within_s=0.3)
    agent, on, ctx, final = play(first_look, [CONTEXT, QUESTION], threshold=0.7)
    assert not [t for t in on if ctx.end < t < final.start], "answered after its first look"
    first = [t for t in on if t > final.end][0]
    assert 2.0 <= first - final.end <= 2.0 + 0.25, first - final.end
    assert agent.stats()["early_ends"] == 0 and all(j["p"] < 0.7 for j in agent.stats()["judged"])
    sure = TurnEndModel(np.zeros(N_FEATURES), 50.0, threshold=0.5, answer_within_s=0.3)
    _, on, ctx, _ = play(sure, [CONTEXT])
    assert 0.25 <= [t for t in on if t > ctx.end][0] - ctx.end <= 0.25 + 0.25
    with pytest.raises(ValueError, match=r"the checkpoint answers only within 0\.3 s of silence, before its first "
                                         r"look at 320 ms \(min_endpoint_ms=300\)"):
        TurnDetectorAgent(turn_end_model=first_look, min_endpoint_ms=300)  # its first window past 300 ms ends at 320
    TurnDetectorAgent(turn_end_model=first_look, min_endpoint_ms=288)  # a first look at 288 ms is inside 0.3 s


def _judged(model, record_sound: bool) -> list[dict]:
    """The judged silences of the two-turn scene, with ``record_sound`` as given."""
    agent = TurnDetectorAgent(turn_end_model=model, transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    agent.record_sound = record_sound
    rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), agent)
    return agent.stats()["judged"]


def test_a_model_that_hears_the_sound_decides_on_the_turns_own_audio():
    """A model with sound columns gets the descriptor of the turn's last second as the agent heard
    it: the end of the words at the turn's level, then the silence far below it."""
    rng = np.random.default_rng(0)
    model = TurnEndModel(np.concatenate([np.zeros(N_FEATURES), rng.normal(0, 0.1, N_SOUND)]), -1.0, threshold=0.99)
    judged = _judged(model, record_sound=True)
    assert len(judged) == 2
    for j in judged:
        sound = np.array(j["sound"], np.float32)
        assert sound.shape == (SOUND_WINDOWS, SOUND_BANDS)
        silence_windows = int(j["silence_s"] * 1000 // 32)
        assert sound[-silence_windows:].mean() < sound[: -silence_windows - 2].mean() - 5.0
        expected = model.prob_after(model.text_logit(j["text"], j["named"], sound), j["silence_s"])
        assert j["p"] == pytest.approx(expected, abs=5e-3)  # the descriptor is kept to 2 decimals
    # without record_sound the descriptor stays out of the stats (they go into every run's results)
    quiet = _judged(model, record_sound=False)
    assert all("sound" not in j for j in quiet) and [j["p"] for j in quiet] == [j["p"] for j in judged]


def _judged_in_the_car(model) -> list[dict]:
    """The two judged silences of a context turn and a question in the car cabin's road noise,
    with ``record_sound`` (every descriptor and contour kept)."""
    agent = TurnDetectorAgent(turn_end_model=model, transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    agent.record_sound = True
    rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper", room="car_cabin"), agent)
    judged = agent.stats()["judged"]
    assert len(judged) == 2
    return judged


def test_a_model_may_hear_the_sound_of_the_turns_end_noise_suppressed():
    """In the car cabin's road noise the silence after the words is barely below them on the
    microphone; noise-suppressed, as the voice-activity detector hears it, it lies further below.
    ``record_sound`` keeps both descriptors; a model with ``sound_from="denoised"`` decides on the
    second, and says so in its checkpoint."""
    rng = np.random.default_rng(0)
    weights = np.concatenate([np.zeros(N_FEATURES), rng.normal(0, 0.1, N_SOUND)])
    model = TurnEndModel(weights, -1.0, threshold=0.99, sound_from="denoised")
    judged = _judged_in_the_car(model)
    for j in judged:
        k = int(j["silence_s"] * 1000 // 32)  # the silence's windows at the end of the descriptor
        mic, heard = np.array(j["sound"]), np.array(j["sound_denoised"])
        gap_mic, gap_heard = (d[: -k - 2].mean() - d[-k:].mean() for d in (mic, heard))
        assert gap_heard > gap_mic + 0.5, (gap_mic, gap_heard)
        expected = model.prob_after(model.text_logit(j["text"], j["named"], heard), j["silence_s"])
        assert j["p"] == pytest.approx(expected, abs=5e-3)
        on_mic = TurnEndModel(weights, -1.0).prob_after(TurnEndModel(weights, -1.0).text_logit(j["text"], j["named"], mic),
                                                         j["silence_s"])
        assert abs(on_mic - expected) > 1e-3  # the two signals give the model different answers
    with pytest.raises(ValueError, match="sound_from='speaker'"):
        TurnEndModel(weights, -1.0, sound_from="speaker")


def test_a_model_that_hears_the_pitch_decides_on_the_turns_own_voice():
    """A model with pitch columns gets the F0 contour of the turn's end as the agent heard it (the
    humans' voices, then the silence unvoiced); ``record_sound`` keeps it for ``collect``."""
    model = TurnEndModel(np.concatenate([np.zeros(N_FEATURES), [0.5, -2.0, 1.0, -1.0]]), -1.0, threshold=0.99)
    assert model.uses_pitch
    judged = _judged(model, record_sound=True)
    assert len(judged) == 2
    for j in judged:
        assert len(j["pitch"]) == PITCH_FRAMES
        voiced = [v is not None for v in j["pitch"]]
        assert sum(voiced) > 20 and not any(voiced[-int(j["silence_s"] * 100) + 4:])  # speech, then the silence
        expected = model.prob_after(model.text_logit(j["text"], j["named"], pitch=j["pitch"]), j["silence_s"])
        assert j["p"] == pytest.approx(expected, abs=1e-4)
        assert pitch_features(j["pitch"])[0] == 1.0
    quiet = _judged(model, record_sound=False)
    assert all("pitch" not in j for j in quiet) and [j["p"] for j in quiet] == [j["p"] for j in judged]


def test_a_model_may_hear_the_pitch_of_the_turns_end_noise_suppressed():
    """In road noise the pitch tracker loses much of the voice's periodicity on the microphone;
    noise-suppressed, as the voice-activity detector hears it, it finds more of it (about 15 more
    voiced 10 ms frames of the 120 here). ``record_sound`` keeps both contours; a model with
    ``pitch_from="denoised"`` decides on the second."""
    weights = np.concatenate([np.zeros(N_FEATURES), [0.5, -2.0, 1.0, -1.0]])
    model = TurnEndModel(weights, -1.0, threshold=0.99, pitch_from="denoised")
    judged = _judged_in_the_car(model)
    for j in judged:
        assert len(j["pitch"]) == len(j["pitch_denoised"]) == PITCH_FRAMES
        mic_voiced, heard_voiced = (sum(v is not None for v in c) for c in (j["pitch"], j["pitch_denoised"]))
        assert heard_voiced >= mic_voiced + 10, (heard_voiced, mic_voiced)
        expected = model.prob_after(model.text_logit(j["text"], j["named"], pitch=j["pitch_denoised"]), j["silence_s"])
        assert j["p"] == pytest.approx(expected, abs=1e-4)
        assert not np.allclose(pitch_features(j["pitch"]), pitch_features(j["pitch_denoised"]))  # the choice matters
    with pytest.raises(ValueError, match="pitch_from='speaker'"):
        TurnEndModel(weights, -1.0, pitch_from="speaker")


def test_a_model_that_hears_smart_turn_decides_on_its_probability_of_the_turns_audio():
    """A model with Smart Turn columns gets Smart Turn's probability of the turn's audio up to the
    first look; ``record_smart_turn`` keeps it for ``collect``, and without it the stats go
    without (they go into every run's results)."""
    from fdenv.train.smart_turn import smart_turn_probability

    model = TurnEndModel(np.concatenate([np.zeros(N_FEATURES), [2.0, 1.0]]), -1.0, threshold=0.99)
    assert model.uses_smart_turn
    agent = TurnDetectorAgent(turn_end_model=model, transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    seen = []
    agent._judge = lambda turn, judge=agent._judge: seen.append(smart_turn_probability(turn["audio"])) or judge(turn)
    agent.record_smart_turn = True
    rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), agent)
    judged = agent.stats()["judged"]
    assert len(judged) == 2 and [j["smart_turn"] for j in judged] == seen
    for j in judged:
        assert 0.0 <= j["smart_turn"] <= 1.0
        expected = model.prob_after(model.text_logit(j["text"], j["named"], smart_turn=j["smart_turn"]), j["silence_s"])
        assert j["p"] == pytest.approx(expected, abs=1e-4)
    quiet = TurnDetectorAgent(turn_end_model=model, transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), quiet)
    assert all("smart_turn" not in j for j in quiet.stats()["judged"])
    assert [j["p"] for j in quiet.stats()["judged"]] == [j["p"] for j in judged]


def test_record_words_keeps_the_recognisers_words_with_their_probabilities():
    """``collect --words`` sets ``record_words``: each judged silence keeps the recogniser's words
    of the same transcript, with a probability each; without it the stats stay as they were."""
    agent = TurnDetectorAgent(turn_end_model=constant(-50.0), transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    agent.record_words = True
    rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), agent)
    judged = agent.stats()["judged"]
    assert [j["text"] for j in judged] == [CONTEXT, QUESTION]
    for j in judged:
        assert [w for w, _ in j["words"]] == j["text"].split() and all(p == 1.0 for _, p in j["words"])
    quiet = TurnDetectorAgent(turn_end_model=constant(-50.0), transcriber=FixedTranscriber([CONTEXT, QUESTION]))
    rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), quiet)
    assert all("words" not in j for j in quiet.stats()["judged"])


def test_a_model_that_reads_the_confidence_needs_a_transcriber_that_gives_it():
    class TextOnly:
        def transcribe(self, audio16k, prompt=None):
            return "hello"

    with pytest.raises(ValueError, match="single_user reads the recogniser's confidence.*TextOnly has no transcribe_words"):
        TurnDetectorAgent(checkpoint="single_user", transcriber=TextOnly())
    TurnDetectorAgent(transcriber=TextOnly())  # the default model reads words and silence alone


def test_the_recognisers_prompt_follows_the_checkpoint_unless_set():
    """A model fitted on transcripts made with the filler prompt (``collect --filler-prompt``; its
    ``meta["filler_prompt"]``) is judged on transcripts made the same way; the knob overrides."""
    prompts = []

    class Heard:
        def transcribe(self, audio16k, prompt=None):
            prompts.append(prompt)
            return CONTEXT

    fluent, filled = constant(-50.0), constant(-50.0)
    filled.meta["filler_prompt"] = True
    for model, knob, expected in ((fluent, None, False), (filled, None, True), (filled, False, False),
                                  (fluent, True, True)):
        agent = TurnDetectorAgent(turn_end_model=model, transcriber=Heard(), filler_prompt=knob)
        rollout(RoomEnv(scene=TWO_TURNS, behaviour="paper"), agent)
        assert agent.config()["filler_prompt"] is expected
        assert prompts and all(("Um, so, uh" in p) is expected for p in prompts), prompts
        prompts.clear()


def test_the_recogniser_follows_the_checkpoint_unless_set(tmp_path):
    """A model fitted on another recogniser's transcripts (``collect --asr``; its ``meta["asr"]``)
    listens with that recogniser; the cascade's ``model`` knob overrides; a checkpoint without it
    was fitted on Whisper tiny.en. A local model folder stands in for another recogniser."""
    from fdenv.score.asr import resolve_model

    other = tmp_path / "other-whisper"
    other.mkdir()
    for f in resolve_model("tiny.en").iterdir():
        (other / f.name).symlink_to(f)
    plain, fitted_on_other = constant(-50.0), constant(-50.0)
    fitted_on_other.meta["asr"] = str(other)
    for model, knob, expected in ((plain, None, resolve_model("tiny.en")), (fitted_on_other, None, other),
                                  (fitted_on_other, "tiny.en", resolve_model("tiny.en")), (plain, str(other), other)):
        agent = TurnDetectorAgent(turn_end_model=model, model=knob)
        assert Path(agent.transcriber.path).resolve() == Path(expected).resolve()
