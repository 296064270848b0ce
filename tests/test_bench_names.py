"""The intelligibility benchmark (``benchmarks/bench_intelligibility.py``): word error rates are
pooled over turns and seeds for each decoding; with ``--names`` its prompted recogniser is given
the prompt the cascade assistant gives its own, and false alarms are counted on turns that do not
say the name. Whisper is replaced by stand-ins here; the benchmark itself runs the real one."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest  # noqa: E402

from fdenv.score.text import normalise  # noqa: E402
from fdenv.sim.env import RoomEnv  # noqa: E402
from fdenv_agents import CascadeAgent  # noqa: E402

from .helpers import benchmark, rollout, scene  # noqa: E402


@pytest.fixture(scope="module")
def bench():
    return benchmark("bench_intelligibility")


class Recording:
    """A transcriber that keeps every prompt it is given."""

    def __init__(self, *args, text="", **kwargs):
        self.prompts, self.text = [], text

    def transcribe(self, audio16k, prompt=None):
        self.prompts.append(prompt)
        return self.text  # nothing heard: the cascade does not answer, the test stays short


def test_the_prompted_recogniser_gets_the_cascades_prompt(bench, monkeypatch):
    """The prompt the cascade hands its recogniser in an episode is the one the benchmark's
    prompted recogniser hands the same recogniser class."""
    sc = scene([{"speaker": "Ann", "text": "Nova, what time is it?", "label": "T", "gold_answer": "noon"}],
               kind="mpe", assistant_name="Nova")
    heard = Recording()
    rollout(RoomEnv(scene=sc, behaviour="paper"), CascadeAgent(transcriber=heard))
    assert heard.prompts and set(heard.prompts) == {"Nova is the assistant."}

    made = []
    monkeypatch.setattr(bench, "WhisperTranscriber",
                        lambda *a, **k: made.append(Recording(text="Nova, what time is it?")) or made[-1])
    hear = bench.recognisers("tiny.en")
    assert hear["prompted"](None, "Nova") == normalise("Nova, what time is it?")
    assert made[0].prompts == heard.prompts[:1]


def test_false_alarms_are_counted_on_name_free_turns_of_the_same_scenes(bench):
    req = bench.requests(6)
    free = bench.name_free(None, req)
    assert len(req) == 6 and len(free) > 20
    sources = {r.id.rsplit("-t", 1)[0] for r in req}
    for sc in free:
        assert len(sc.turns) == 1 and sc.id.rsplit("-t", 1)[0] in sources
        assert normalise(sc.assistant_name)[0] not in normalise(sc.turns[0].text)

    def always(x, name):  # writes the name in every turn
        return normalise(f"{name} said {x.turns[0].text}")

    def faithful(x, name):  # writes what was said
        return normalise(x.turns[0].text)

    def respelt(x, name):  # another spelling of the same sound is no match
        return [w if w != normalise(name)[0] else w + "h" for w in normalise(x.turns[0].text)]

    res = bench.names("anechoic", "espeak", {"always": always, "faithful": faithful, "respelt": respelt},
                      req, free, audio=lambda sc, room, tts: sc)
    for k, m in res.items():
        assert sum(v[0] for v in m["per"].values()) == 6 and m["free"] == len(free)
    assert len(res["always"]["alarms"]) == len(free) and sum(v[1] for v in res["always"]["per"].values()) == 6
    assert res["faithful"]["alarms"] == [] and sum(v[1] for v in res["faithful"]["per"].values()) == 6
    assert res["respelt"]["alarms"] == [] and sum(v[1] for v in res["respelt"]["per"].values()) == 0
    with pytest.raises(ValueError, match="says the name"):
        bench.names("anechoic", "espeak", {"faithful": faithful}, [], req, audio=lambda sc, room, tts: sc)


def test_word_error_rates_pool_turns_and_seeds_for_each_decoding(bench, monkeypatch):
    from fdenv.score import asr

    sc = scene([{"speaker": "Ann", "text": "Nova, what time is it?", "label": "T", "gold_answer": "noon",
                       "addressee": "Nova"}],
               kind="mpe", assistant_name="Nova")
    seen = []

    def fake(x, model=None, snap=True, decode=None):  # Whisper's decoding hears all, the scorer's two words
        seen.append(decode)
        assert x.size > 16000 * 0.5 and abs(x).max() > 0.01  # the turn's audio, cut from the microphone
        text = "Nova, what time is it?" if decode == bench.DECODINGS["whisper"] else "what time"
        return [asr.Word(w, 0.0, 0.1) for w in text.split()]

    monkeypatch.setattr(asr, "transcribe", fake)
    m = bench.measure("anechoic", "espeak", [sc], "tiny.en", seeds=(0, 1))
    w, s = m["whisper"], m["scorer"]
    assert (w["wer"], w["words"]) == (0.0, 10)
    assert (s["wer"], s["words"]) == (pytest.approx(3 / 5), 10)
    assert seen == [bench.DECODINGS["whisper"], bench.DECODINGS["scorer"]] * 2


def test_word_error_rates_by_voice_pool_each_speakers_turns(bench, monkeypatch):
    """``by_voice`` splits Whisper's decoding's errors by the voice of each turn's speaker."""
    from fdenv.render import voice_map
    from fdenv.score import asr

    sc = scene([{"speaker": "Ann", "text": "Nova, what time is it?", "label": "T", "gold_answer": "noon",
                 "addressee": "Nova"},
                {"speaker": "Bob", "text": "I think it is late.", "label": "ctx"}],
               kind="mpe", assistant_name="Nova")
    calls = []

    def fake(x, model=None, snap=True, decode=None):  # Ann's turns heard right, Bob's as two words
        calls.append(decode)
        ann = (len(calls) - 1) // len(bench.DECODINGS) % 2 == 0  # turns play in order, each decoded twice
        text = "Nova, what time is it?" if ann else "I think"
        return [asr.Word(w, 0.0, 0.1) for w in text.split()]

    monkeypatch.setattr(asr, "transcribe", fake)
    m = bench.measure("anechoic", "espeak", [sc], "tiny.en", seeds=(0, 1))
    voices = voice_map(sc, "espeak")
    assert voices["Ann"] != voices["Bob"]
    assert m["by_voice"] == {voices["Ann"]: {"wer": 0.0, "words": 10}, voices["Bob"]: {"wer": 0.6, "words": 10}}
    assert m["whisper"] == {"wer": 6 / 20, "words": 20}


def test_room_changes_reach_every_measured_room_and_the_table_says_so(bench, monkeypatch, capsys):
    """``--set FIELD=VALUE`` reads values as JSON (else strings) and measures each room with them;
    a bad field stops the run before any room is played, naming the field."""
    assert bench.room_overrides(["noise=none", "noise_sources=[]", "snr_db=5"]) == {
        "noise": "none", "noise_sources": [], "snr_db": 5}
    with pytest.raises(ValueError, match="FIELD=VALUE"):
        bench.room_overrides(["noise"])
    rooms = []

    def fake(room, tts, scene_list, asr, seeds=(0,), cascade=None):
        rooms.append(room)
        return {"whisper": {"wer": 0.1, "words": 10}, "scorer": {"wer": 0.2, "words": 10}, "by_voice": {}, "asr_s": 0.0}

    monkeypatch.setattr(bench, "measure", fake)
    monkeypatch.setattr(bench, "scenes", lambda per_set, split="test": [])
    bench.main(["--rooms", "office,kitchen", "--seeds", "0", "--set", "noise=none", "--set", "noise_sources=[]"])
    assert rooms == [{"preset": p, "noise": "none", "noise_sources": []} for p in ("office", "kitchen")]
    out = capsys.readouterr().out
    assert "not the presets" in out and out.count("a changed room") == 2 and "<= 0.25" not in out
    rooms.clear()
    bench.main(["--rooms", "office", "--seeds", "0"])
    out = capsys.readouterr().out
    assert rooms == ["office"] and "not the presets" not in out and "| <= 0.25 yes |" in out
    rooms.clear()
    for argv in (["--set", "noise_sourcez=[]"], ["--names", "--set", "noise=none"]):
        with pytest.raises(SystemExit):
            bench.main(["--rooms", "kitchen", *argv])
        assert ("noise_sourcez" if "noise_sourcez=[]" in argv else "--names") in capsys.readouterr().err
    assert rooms == []


def test_the_cascades_recogniser_is_measured_as_it_is_and_enhanced_on_the_same_turns(bench, monkeypatch, capsys):
    """``--enhance-db``: the cascade's own recogniser, plain and at each attenuation limit, hears
    every turn the other decodings hear, with the cascade's prompt; its columns are in the table;
    the scenes come from ``--split``."""
    from fdenv.score import asr

    sc = scene([{"speaker": "Ann", "text": "Nova, what time is it?", "label": "T", "gold_answer": "noon",
                 "addressee": "Nova"}], kind="mpe", assistant_name="Nova")
    lengths = {"scorer's": [], "cascade's": []}
    monkeypatch.setattr(asr, "transcribe", lambda x, model=None, snap=True, decode=None:
                        lengths["scorer's"].append(len(x)) or [asr.Word(w, 0.0, 0.1) for w in "Nova what time is it".split()])
    made = []

    class Transcriber(Recording):
        def __init__(self, model, enhance_db=None):
            super().__init__(text="what time is it" if enhance_db else "what")
            self.enhance_db = enhance_db
            made.append(self)

        def transcribe(self, audio16k, prompt=None):
            lengths["cascade's"].append(len(audio16k))
            return super().transcribe(audio16k, prompt)

    monkeypatch.setattr(bench, "WhisperTranscriber", Transcriber)
    splits = []
    monkeypatch.setattr(bench, "scenes", lambda per_set, split="test": splits.append(split) or [sc])
    monkeypatch.setattr(bench, "ASSISTANT", "Aria")
    bench.main(["--rooms", "anechoic", "--tts", "espeak", "--seeds", "0,1", "--split", "val", "--enhance-db", "6,12"])
    out = capsys.readouterr().out
    assert splits == ["val"] and "1 val scenes" in out
    assert [t.enhance_db for t in made] == [None, 6.0, 12.0]
    assert all(t.prompts == ["Aria is the assistant."] * 2 for t in made)  # one turn, two seeds
    assert "| WER, the cascade's | WER, enhanced, 6 dB | WER, enhanced, 12 dB |" in out
    assert "| anechoic | 0.000 | 0.000 | 0.800 | 0.200 | 0.200 |" in out
    # the cascade's recogniser hears the turn from its prefix padding (0.5 s) before the start
    assert bench.CASCADE_PRE_S == 0.5 and len(set(lengths["scorer's"])) == len(set(lengths["cascade's"])) == 1
    # (up to the episode's start: this turn begins a fraction of a second in)
    assert 0 < lengths["cascade's"][0] - lengths["scorer's"][0] <= int(0.5 * 16000) - int(0.1 * 16000)
    with pytest.raises(SystemExit):
        bench.main(["--rooms", "anechoic", "--enhance-db", "6,loud"])
    assert "--enhance-db" in capsys.readouterr().err


def test_every_voice_reads_the_same_train_sentences(bench):
    """``--voices``: each voice is heard on the same sentences, all from train splits, with its
    speaker's voice pinned; the rate is per voice."""
    from fdenv.scene import list_sets, load_set

    sentence_list = bench.sentences(5)
    assert len(sentence_list) == 5 and all(len(sc.turns) == 1 for sc in sentence_list)
    train = {f"{sc.id}-{t.id}" for name in list_sets() for sc in load_set(name, "train") for t in sc.turns}
    assert {sc.id for sc in sentence_list} <= train
    heard = []

    def audio(sc, room, tts):  # the scene itself stands for its audio
        heard.append((sc.id, next(s.voice for s in sc.speakers if s.name == sc.turns[0].speaker)))
        return sc

    def hear(sc):  # voice "b" loses every word after the first two
        words = normalise(sc.turns[0].spoken_text)
        return words if heard[-1][1] == "a" else words[:2]

    sc = scene([{"speaker": "Ann", "text": "Can you [pause=0.8] help me?", "label": "pause"}])
    paused = bench.one_turn(sc, sc.turns[0])
    sentence_list = [*sentence_list, paused]  # a pause marker is not a word anyone says
    m = bench.voices_wer("office", "espeak", sentence_list, hear, ("a", "b"), audio=audio)
    words = sum(len(normalise(sc.turns[0].spoken_text)) for sc in sentence_list)
    assert len(normalise(paused.turns[0].spoken_text)) == 4
    assert m == {"a": {"wer": 0.0, "words": words}, "b": {"wer": (words - 12) / words, "words": words}}
    assert [i for i, v in heard if v == "a"] == [i for i, v in heard if v == "b"] == [sc.id for sc in sentence_list]


def test_voices_prints_every_voice_of_the_back_end_per_room(bench, monkeypatch, capsys):
    from fdenv.render import get_backend

    voices = tuple(get_backend("espeak").voices())
    calls = []

    def fake(room, tts, sentence_list, hear, vs, audio=None):
        calls.append((room, tts, vs))
        return {v: {"wer": 0.125, "words": 8} for v in vs}

    monkeypatch.setattr(bench, "voices_wer", fake)
    monkeypatch.setattr(bench, "sentences", lambda n: [None] * n)
    bench.main(["--voices", "--tts", "espeak", "--rooms", "kitchen,anechoic", "--sentences", "3"])
    out = capsys.readouterr().out
    assert calls == [("kitchen", "espeak", voices), ("anechoic", "espeak", voices)]
    assert out.startswith(f"3 train sentences read by each of {len(voices)} voices, tts=espeak")
    for room in ("kitchen", "anechoic"):
        row = next(x for x in out.splitlines() if x.startswith(f"| {room} |"))
        assert all(f"{v} 0.125" in row for v in voices) and "8 words each" in row
