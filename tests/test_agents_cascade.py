"""The cascade agent: endpointing, answering, barge-in, the addressee gate, backchannels, echo.

Fast tests replace Whisper with a ``FixedTranscriber`` (what the user said, in order); the tests
marked slow run real faster-whisper tiny.en on the same episodes.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv.sim.env import RoomEnv  # noqa: E402
from fdenv_agents import AGENTS, CascadeAgent, make_agent  # noqa: E402
from fdenv_agents.cascade import FixedTranscriber, OfflineResponder, make_responder  # noqa: E402
from fdenv_agents.cascade.responder import ClaudeResponder, arithmetic  # noqa: E402
from fdenv_agents.cascade.speaker import Speaker  # noqa: E402
from fdenv_agents.cascade.text import name_from_duty, name_heard, number_words  # noqa: E402

from .helpers import rollout, scene  # noqa: E402

SR, N = 16000, 1280

QUESTION = "Can you tell me about the history of trains?"
TURN_TAKING = scene([
    {"speaker": "Ann", "text": "I was reading about railways yesterday.", "label": "ctx"},
    {"speaker": "Ann", "text": QUESTION, "label": "final", "gap": 1.5},
], kind="turn_taking", speakers=("Ann",))
INTERRUPTION = scene([
    {"speaker": "Ann", "text": QUESTION, "label": "final"},
    {"speaker": "Ann", "text": "Wait, only the steam ones please.", "label": "interrupt"},
], kind="interruption", speakers=("Ann",))
FACTS = "We bought four tickets at twelve each."


def request(text):
    return scene([
        {"speaker": "Ann", "text": FACTS, "label": "ctx"},
        {"speaker": "Bob", "text": text, "label": "T", "gold_answer": "48", "gap": 1.5},
        {"speaker": "Cat", "text": "Anyway, let us go.", "label": "ctx"},
    ], kind="mpe", assistant_name="Aria")


def activity(rec):
    """Per-frame activity of the assistant track (RMS above -45 dBFS, SPEC 3 without hold)."""
    n = len(rec.assistant) // rec.frame_samples * rec.frame_samples
    a = rec.assistant[:n].reshape(-1, rec.frame_samples).astype(np.float64)
    return np.sqrt((a**2).mean(axis=1)) > 10 ** (-45 / 20)


def onsets(rec):
    act = activity(rec).astype(int)
    return [i * rec.frame_samples / rec.sample_rate for i in np.flatnonzero(np.diff(np.concatenate([[0], act])) == 1)]


def turn(rec, label):
    return [t for t in rec.turns if t.label == label][0]


def fixed(*texts):
    return CascadeAgent(transcriber=FixedTranscriber(texts))


# ---- configuration -------------------------------------------------------------------------
def test_registered_with_livekit_defaults_and_every_knob_in_config():
    assert AGENTS["cascade"] is CascadeAgent
    agent = make_agent("cascade", transcriber=FixedTranscriber())
    cfg = agent.config()
    assert cfg["endpoint_silence_ms"] == 500 and cfg["barge_in_ms"] == 500
    assert cfg["addressee_gate"] is False and cfg["backchannels"] is False
    import inspect

    knobs = [p for p, v in inspect.signature(CascadeAgent).parameters.items() if v.kind is v.POSITIONAL_OR_KEYWORD]
    for knob in knobs:
        assert knob in cfg, knob
    assert "name" not in cfg  # the runner puts the agent's name ("cascade") under that key
    assert cfg["responder_used"] == "offline"


@pytest.mark.parametrize("kwargs,field", [({"endpoint_silence_ms": -1}, "endpoint_silence_ms"),
                                          ({"echo": "magic"}, "echo"), ({"responder": "gpt"}, "responder"),
                                          ({"barge_in_ms": "fast"}, "barge_in_ms")])
def test_bad_knobs_fail_with_the_field_name(kwargs, field):
    with pytest.raises(ValueError, match=field):
        CascadeAgent(transcriber=FixedTranscriber(), **kwargs)


def test_missing_local_model_fails_clearly(tmp_path):
    from fdenv.score.asr import ASRUnavailable

    with pytest.raises(ASRUnavailable, match="model"):
        CascadeAgent(model=str(tmp_path / "nowhere"))


# ---- text, responders, streamed speech -------------------------------------------------------
def test_names_numbers_and_questions():
    assert name_from_duty("You are Aria, the assistant of this family.") == "Aria"
    assert name_from_duty("Your name is Max. Help when asked.") == "Max"
    assert name_from_duty("Help the people in the room.") is None
    assert name_heard("Area, how much did we spend?", "Aria") and name_heard("hey arya what", "Aria")
    assert not name_heard("How much did we spend?", "Aria")
    assert number_words("three hundred and forty, four tickets at $12 each") == \
        ["340", "4", "tickets", "at", "12", "each"]


def test_offline_responder_does_the_arithmetic_from_facts_heard():
    r = OfflineResponder()
    hist = [{"role": "user", "text": "We bought four tickets at twelve each."}]
    assert "48" in r.respond("Aria, how much did we spend?", hist, "", "Aria")
    hist = [{"role": "user", "text": "I'd like four shots at eighty-five each."}]
    assert r.respond("Aria, what does that come to?", hist) == "4 shots at 85 each comes to 340."
    assert "30" in arithmetic("How much is that per person?", ["Dinner was 120 dollars for the four of us."])
    assert arithmetic("What is the capital of France?", []) is None


def test_offline_responder_recalls_what_it_heard():
    r = OfflineResponder()
    hist = [{"role": "user", "text": "I should call my mother. Hugo, you've got the tickets, right?"},
            {"role": "user", "text": "Hugo took the ticket this morning."}]
    assert r.respond("Orin, who has the tickets again?", hist, "", "Orin") == \
        "From what I heard: Hugo took the ticket this morning."


def test_offline_responder_reuses_the_request_words_deterministically():
    r = OfflineResponder()
    a = r.respond(QUESTION, [], "", "Aria")
    assert a == r.respond(QUESTION, [], "", "Aria")
    assert "history" in a and "trains" in a
    assert "steam" in r.respond("Wait, only the steam ones please.", [])


def test_claude_responder_through_the_sdk_with_a_faked_transport(monkeypatch):
    import httpx2

    seen = {}

    def handler(req):
        import json

        seen["body"] = json.loads(req.content)
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "That comes to 48."}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}})

    import anthropic

    client = anthropic.Anthropic(api_key="test-key", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    agent = CascadeAgent(responder="claude", responder_client=client, transcriber=FixedTranscriber([FACTS, "Aria, how much?"]))
    assert agent.config()["responder_used"].startswith("claude:")
    hist = [{"role": "user", "text": FACTS}, {"role": "user", "text": "Aria, how much?"}]
    assert agent.responder.respond("Aria, how much?", hist, "You are Aria.", "Aria") == "That comes to 48."
    body = seen["body"]
    assert body["messages"] == [{"role": "user", "content": f"{FACTS}\nAria, how much?"}]
    assert "Aria" in body["system"] and body["model"] == "claude-haiku-4-5"

    def broken(req):
        return httpx2.Response(400, json={"type": "error", "error": {"type": "invalid_request_error", "message": "no"}})

    bad = ClaudeResponder(client=anthropic.Anthropic(api_key="k", http_client=httpx2.Client(transport=httpx2.MockTransport(broken))))
    with pytest.warns(UserWarning, match="offline answer"):
        assert "48" in bad.respond("how much did we spend?", [{"role": "user", "text": FACTS}])
    assert bad.failures == 1


def test_claude_without_a_key_falls_back_to_offline(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.warns(UserWarning, match="ANTHROPIC_API_KEY"):
        assert make_responder("claude").name == "offline"


def test_speaker_renders_sentence_by_sentence_and_stops():
    from fdenv.render import Renderer

    r = Renderer("espeak", SR)
    sp = Speaker(r, r.voices[-1], N)
    sp.say("First sentence here. Second one follows. And a third.", at=3 * N)
    assert sp.rendered == 0 and not sp.frame(0).any()
    frames = [sp.frame(m) for m in range(1, 6)]
    assert not frames[0].any() and frames[2].any()  # starts at frame 3
    assert sp.rendered == 1  # only the first sentence so far
    sp.stop()
    assert not sp.busy() and not sp.frame(6).any()


# ---- episodes ----------------------------------------------------------------------------
def test_answers_after_the_final_turn_within_the_endpointing_window():
    env = RoomEnv(scene=TURN_TAKING, behaviour="paper")  # the script's 1.5 s gap, exactly
    for silence_ms in (500, 1000):
        agent = CascadeAgent(endpoint_silence_ms=silence_ms,
                             transcriber=FixedTranscriber(["I was reading about railways yesterday.", QUESTION]))
        rec, _ = rollout(env, agent)
        e = turn(rec, "final").end
        after = [t for t in onsets(rec) if t > e]
        assert after, "no answer"
        assert silence_ms / 1000 <= after[0] - e <= silence_ms / 1000 + 1.0, (silence_ms, after[0] - e)
        heard = agent.stats()["heard"]
        assert heard[-1]["answered"] and "history" in heard[-1]["reply"]
    # the 1.5 s gap before the final turn endpointed the context turn, which was answered too
    assert agent.stats()["turns"] == 2


def test_stops_when_the_user_barges_in_and_answers_the_interruption():
    agent = fixed(QUESTION, "Wait, only the steam ones please.")
    rec, _ = rollout(RoomEnv(scene=INTERRUPTION), agent)
    s, f = turn(rec, "interrupt").start, turn(rec, "interrupt").end
    act = activity(rec)
    fr = lambda t: int(t * SR / N)  # noqa: E731
    assert act[fr(s) - 2], "the agent was answering when the user barged in"
    stop = fr(s) + np.flatnonzero(~act[fr(s):])[0]
    assert stop * N / SR - s <= 0.5 + 0.5  # barge_in_ms plus detection
    assert not act[stop : fr(f)].any(), "spoke again before the user finished"
    assert any(t > f for t in onsets(rec)), "did not answer the interruption"
    st = agent.stats()
    assert st["barge_ins"] == 1 and "steam" in st["heard"][-1]["reply"]


def test_a_longer_barge_in_threshold_lets_the_user_talk_over_it():
    agent = CascadeAgent(barge_in_ms=5000, transcriber=FixedTranscriber([QUESTION, "Wait."]))
    rec, _ = rollout(RoomEnv(scene=INTERRUPTION), agent)
    s, f = turn(rec, "interrupt").start, turn(rec, "interrupt").end
    act = activity(rec)
    assert act[int(s * SR / N) + 1 : int(f * SR / N)].mean() > 0.7  # kept talking over the user
    assert agent.stats()["barge_ins"] == 0


def test_addressee_gate_answers_only_when_named():
    texts = [FACTS, "How much did we spend?", "Anyway, let us go."]
    # paper: the script's gaps, so each turn is endpointed on its own (no drawn overlaps)
    env = RoomEnv(scene=request("How much did we spend?"), behaviour="paper")
    gated = CascadeAgent(addressee_gate=True, transcriber=FixedTranscriber(texts))
    rec, _ = rollout(env, gated)
    assert not activity(rec).any()
    assert gated.stats()["not_addressed"] == 3 and gated.stats()["responses"] == 0
    named = CascadeAgent(addressee_gate=True, transcriber=FixedTranscriber([FACTS, "Aria, how much did we spend?", "Anyway, let us go."]))
    rec, _ = rollout(RoomEnv(scene=request("Aria, how much did we spend?"), behaviour="paper"), named)
    e = turn(rec, "T").end
    assert [t for t in onsets(rec) if e < t < e + 2.0]
    answered = [h for h in named.stats()["heard"] if h["answered"]]
    assert len(answered) == 1 and "48" in answered[0]["reply"]
    # without the gate it answers every turn it hears
    ungated = CascadeAgent(transcriber=FixedTranscriber(texts))
    rollout(env, ungated)
    assert ungated.stats()["responses"] == 3


def test_name_comes_from_the_duty_text_or_the_knob():
    agent = fixed()
    agent.reset("You are Nova, a helpful assistant.", SR, N)
    assert agent.assistant_name == "Nova"
    agent.reset("", SR, N)
    assert agent.assistant_name == "Aria"
    named = CascadeAgent(assistant_name="Max", transcriber=FixedTranscriber())
    named.reset("You are Nova.", SR, N)
    assert named.assistant_name == "Max" and named.config()["assistant_name"] == "Max"


def test_the_spoken_duty_preamble_is_not_answered():
    duty = "You are Aria. Listen to the family and answer only when someone asks you something."
    sc = scene([{"speaker": "Ann", "text": duty, "label": "duty"},
                {"speaker": "Ann", "text": "Aria, what time is it?", "label": "T", "gap": 1.0, "gold_answer": "noon"}],
               kind="mpe", duty=duty)
    agent = fixed(duty, "Aria, what time is it?")
    rec, _ = rollout(RoomEnv(scene=sc, behaviour="paper"), agent)  # the script's 1 s gap after the duty
    st = agent.stats()
    assert st["duty_turns"] == 1 and st["responses"] == 1
    assert all(t > turn(rec, "T").end for t in onsets(rec))


def test_backchannels_at_pauses_only_when_enabled():
    mono = scene([{"speaker": "Bob", "label": "monologue", "text":
                   "My week was long. [trp] First the car broke down on the motorway. [trp] "
                   "Then it rained all day long and the roof leaked. [trp] And then my cat got sick as well."}],
                 kind="backchannel", speakers=("Bob",))
    env = RoomEnv(scene=mono)
    counts = {}
    for bc in (False, True):
        # the detector without noise suppression: behind it, the first backchannel comes at an
        # earlier pause, and the rule (one per 3 s of speech) then allows a second in the silence
        # after the monologue, which this count of backchannels inside it would not see
        agent = CascadeAgent(backchannels=bc, noise_suppression="off", transcriber=FixedTranscriber(["My week was long."]))
        rec, _ = rollout(env, agent)
        m = turn(rec, "monologue")
        counts[bc] = sum(m.start < t < m.end for t in onsets(rec))
        assert agent.stats()["backchannels"] == counts[bc]
        assert agent.stats()["turns"] == 1  # the monologue stays one turn, answered at its end
    assert counts == {False: 0, True: counts[True]} and counts[True] >= 1


def test_runs_at_24k():
    # 700 ms: the gap the scene's humans draw before the question (0.54 s) is not an end of turn;
    # at 500 ms it is one 32 ms window from being one, and the detector's windows fall either way
    agent = CascadeAgent(endpoint_silence_ms=700,
                         transcriber=FixedTranscriber(["I was reading about railways yesterday.", QUESTION]))
    rec, _ = rollout(RoomEnv(scene=TURN_TAKING, sample_rate=24000), agent)
    e = turn(rec, "final").end
    assert [t for t in onsets(rec) if 0.5 <= t - e <= 1.5]


# ---- echo: its own output is the reference -------------------------------------------------
def decaying_ir(seed=0, rt60=0.5, length_s=0.4, delay=24, tail_db=-6.0, sr=SR):
    """A direct path of 1 at ``delay`` samples and a random exponentially decaying tail."""
    rng = np.random.default_rng(seed)
    n = int(length_s * sr)
    t = np.arange(n) / sr
    ir = rng.normal(size=n) * np.exp(-6.9 * t / rt60)
    ir[: delay + 1] = 0.0
    ir *= np.sqrt(10 ** (tail_db / 10) / np.sum(ir**2))
    ir[delay] = 1.0
    return ir


def with_echo(agent, user, gain=0.5, ir=None, sr=SR):
    """Run ``agent`` on observations = ``user`` + ``gain`` x (its own output convolved with ``ir``),
    with the env's timing (the action for frame k+1 is decided after observing frame k)."""
    n = int(0.08 * sr)
    ir = decaying_ir(sr=sr) if ir is None else ir
    frames = len(user) // n + 1
    user = np.concatenate([user, np.zeros(frames * n + n - len(user), np.float32)])
    track = np.zeros((frames + 2) * n, np.float32)
    agent.reset("", sr, n)
    for k in range(frames):
        lo, hi = k * n, (k + 1) * n
        seg = track[max(0, lo - len(ir) + 1) : hi]
        echo = np.convolve(seg, ir)[len(seg) - n : len(seg)] if seg.any() else np.zeros(n)
        track[hi : hi + n] = agent.act((user[lo:hi] + gain * echo).astype(np.float32)[None])
    return track


@pytest.fixture(scope="module")
def clips():
    from fdenv.render import Renderer

    r = Renderer("espeak", SR)
    return r.clip("Can you tell me about the history of trains in this country?", r.voices[0]), \
        r.clip("Wait, only the steam ones please, nothing else.", r.voices[0])


@pytest.mark.parametrize("gain,seed", [(0.5, 0), (0.5, 1), (1.0, 2)])
def test_echo_does_not_make_it_barge_in_on_itself(clips, gain, seed):
    q, _ = clips
    user = np.concatenate([np.zeros(SR // 2, np.float32), q, np.zeros(SR * 11, np.float32)])
    agent = fixed(QUESTION)
    track = with_echo(agent, user, gain=gain, ir=decaying_ir(seed))
    st = agent.stats()
    assert st["barge_ins"] == 0 and st["responses"] == 1 and st["turns"] - st["false_interruptions"] == 1
    # the whole answer was played
    from fdenv.render import Renderer

    r = Renderer("espeak", SR)
    answer = sum(len(r.clip(s, r.voices[-1])) for s in st["heard"][0]["reply"].split(". "))
    assert np.count_nonzero(np.abs(track) > 1e-4) > 0.8 * answer


def test_without_echo_handling_it_does_stop_itself(clips):
    q, _ = clips
    user = np.concatenate([np.zeros(SR // 2, np.float32), q, np.zeros(SR * 8, np.float32)])
    agent = CascadeAgent(echo="off", transcriber=FixedTranscriber([QUESTION]))
    with_echo(agent, user, gain=0.5)
    assert agent.stats()["barge_ins"] >= 1  # the control: the echo is loud enough to matter


def test_with_echo_a_real_barge_in_still_stops_it(clips):
    q, q2 = clips
    user = np.concatenate([np.zeros(SR // 2, np.float32), q, np.zeros(int(SR * 2.5), np.float32)])
    s2 = len(user) / SR
    user = np.concatenate([user, q2, np.zeros(SR * 8, np.float32)])
    agent = fixed(QUESTION, "Wait, only the steam ones please.")
    track = with_echo(agent, user, gain=0.5)
    act = np.abs(track.reshape(-1, N)).max(axis=1) > 1e-3
    k = int(s2 * SR / N)
    assert act[k - 1]
    stop = k + np.flatnonzero(~act[k:])[0]
    assert stop * N / SR - s2 <= 1.2
    assert agent.stats()["barge_ins"] == 1 and agent.stats()["responses"] == 2


ONE_QUESTION = scene([{"speaker": "Ann", "text": QUESTION, "label": "final"}], kind="turn_taking", speakers=("Ann",))


def _room_env(scene_, **room):
    return RoomEnv(scene=scene_, room={"preset": "office", "mics": "circular4", "echo_gain": 0.5, **room})


@pytest.mark.parametrize("seed", [0, 1])
def test_in_a_room_with_echo_it_does_not_stop_itself(seed):
    agent = fixed(QUESTION)
    rec, frames = rollout(_room_env(ONE_QUESTION), agent, seed=seed)
    assert frames[0][0].shape[0] == 4
    st = agent.stats()
    assert st["barge_ins"] == 0 and st["responses"] == 1 and st["turns"] - st["false_interruptions"] == 1
    e = turn(rec, "final").end
    starts = onsets(rec)
    assert [t for t in starts if 0.5 <= t - e <= 1.5]
    act = activity(rec)
    first = int(starts[0] * SR / N)
    assert act[first : first + int(5.0 * SR / N)].mean() > 0.85  # the answer plays on (gaps between sentences)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_in_a_room_with_echo_a_user_still_barges_in(seed):
    """The echo canceller and gate, with the room's echo and reverberation but only the
    microphones' self-noise: in the office's ventilation noise too the cascade misses some
    barge-ins (3 of seeds 0-5; the README's cascade section)."""
    agent = fixed(QUESTION, "Wait, only the steam ones please.")
    rec, _ = rollout(_room_env(INTERRUPTION, noise="self"), agent, seed=seed)
    s = turn(rec, "interrupt").start
    act = activity(rec)
    k = int(s * SR / N)
    assert act[k - 1]
    assert (k + np.flatnonzero(~act[k:])[0]) * N / SR - s <= 1.2
    assert agent.stats()["barge_ins"] == 1


def road_noise(n: int, seed: int, rms: float = 0.02) -> np.ndarray:
    """Brown noise (falling 6 dB per octave, like road noise) without its slow drift."""
    x = np.cumsum(np.random.default_rng(seed).normal(size=n))
    x -= np.convolve(x, np.ones(801) / 801, mode="same")
    return rms * x / np.sqrt(np.mean(x**2))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("snr_db", [10.0, 5.0, 0.0])
def test_in_road_noise_the_gate_hears_a_user_over_the_answer_and_not_the_noise(snr_db, seed):
    """The double-talk gate alone, no echo: 2 s of low-frequency noise, then the agent talks and a
    user starts 1.5 s into its answer, as loud as the noise in total energy or up to 10 dB over
    it. The user's windows pass (the earlier rule, noise folded into the echo and totals
    compared, passed none of them at 10 dB for seed 1 and at most 7 % at 0 dB); the noise alone
    under the same answer never does."""
    from fdenv.render import Renderer
    from fdenv_agents.cascade.echo import EchoGate

    r = Renderer("espeak", SR)
    answer = r.clip("The first railways carried coal from the mines to the rivers, and then came the passengers.",
                    r.voices[-1])
    user = r.clip("Wait, stop there please, I only want to hear about the old steam engines.", r.voices[0])
    w, lead, start = 512, 2 * SR, 3 * SR // 2
    noise = road_noise(lead + len(answer), seed)
    over = np.zeros(len(answer))
    over[start:start + len(user)] = user[: len(answer) - start]
    over *= 0.02 * 10 ** (snr_db / 20) / np.sqrt(np.mean(user**2))
    alone, talked_over = EchoGate(), EchoGate()
    for k in range(lead // w):
        alone.update(noise[k * w:(k + 1) * w], np.zeros(w))
        talked_over.update(noise[k * w:(k + 1) * w], np.zeros(w))
    noise_passes, user_passes = [], []
    loud = np.sqrt(np.mean(over[start:start + len(user)] ** 2))
    for k in range(len(answer) // w):
        mic, ref = noise[lead + k * w: lead + (k + 1) * w], answer[k * w:(k + 1) * w]
        noise_passes.append(alone.update(mic, ref)[1])
        ok = talked_over.update(mic + over[k * w:(k + 1) * w], ref)[1]
        if np.sqrt(np.mean(over[k * w:(k + 1) * w] ** 2)) > 0.3 * loud:  # the user's voiced windows
            user_passes.append(ok)
    assert len(user_passes) > 50
    assert np.mean(user_passes) > 0.75
    assert not any(noise_passes)


LONG_INTERRUPTION = ("Wait, stop there please, I only want to hear about the old steam engines and nothing "
                     "at all about the modern lines.")


class LongAnswer:
    """A responder whose answer lasts about ten seconds, so that a barge-in has something to stop."""

    failures = 0

    def respond(self, text, history, duty, name):
        return ("The first railways carried coal from the mines to the rivers and the ports, and then came the "
                "passengers, and within twenty years the lines reached every large town in the whole country.")


def test_in_the_car_cabins_road_noise_a_user_barges_in():
    """The car cabin preset (road noise 5 dB(A) under the speech, no echo): a user who talks over
    the answer for seven seconds stops it, and the agent answers the interruption. 4 of seeds 0-4
    (the earlier gate: none, ``benchmarks/bench_barge_in.py`` for the shipped scenes)."""
    scene_ = scene([{"speaker": "Ann", "text": QUESTION, "label": "final"},
                    {"speaker": "Ann", "text": LONG_INTERRUPTION, "label": "interrupt"}],
                   kind="interruption", speakers=("Ann",))
    stopped = 0
    for seed in range(5):
        agent = fixed(QUESTION, LONG_INTERRUPTION)
        agent.responder = LongAnswer()
        rec, _ = rollout(RoomEnv(scene=scene_, room="car_cabin"), agent, seed=seed)
        k = int(turn(rec, "interrupt").start * SR / N)
        assert activity(rec)[k - 1], "the agent was answering when the user barged in"
        st = agent.stats()
        stopped += st["barge_ins"] == 1 and st["responses"] == 2
    assert stopped >= 4


# ---- real Whisper ------------------------------------------------------------------------
@pytest.mark.slow
def test_whisper_turn_taking_episode():
    agent = CascadeAgent(endpoint_silence_ms=700)  # the drawn gap before the question (0.54 s) is not an end
    rec, _ = rollout(RoomEnv(scene=TURN_TAKING), agent)
    e = turn(rec, "final").end
    after = [t for t in onsets(rec) if t > e]
    assert after and 0.5 <= after[0] - e <= 1.5
    last = agent.stats()["heard"][-1]
    # tiny.en on espeak speech is rough ("the history of trains" may come out as "the first three"):
    # check that it heard the request, not every word
    assert last["answered"] and len({"tell", "about", "history", "trains"} & set(last["text"].lower().split())) >= 2


@pytest.mark.slow
def test_whisper_interruption_episode():
    agent = CascadeAgent()
    rec, _ = rollout(RoomEnv(scene=INTERRUPTION), agent)
    s, f = turn(rec, "interrupt").start, turn(rec, "interrupt").end
    act = activity(rec)
    stop = int(s * SR / N) + np.flatnonzero(~act[int(s * SR / N):])[0]
    assert stop * N / SR - s <= 1.0 and agent.stats()["barge_ins"] == 1
    assert any(t > f for t in onsets(rec))


@pytest.mark.slow
def test_whisper_in_a_room_with_echo():
    agent = CascadeAgent()
    rec, _ = rollout(_room_env(ONE_QUESTION), agent)
    st = agent.stats()
    assert st["barge_ins"] == 0 and st["responses"] == 1, st["heard"]
    assert [t for t in onsets(rec) if 0.5 <= t - turn(rec, "final").end <= 1.5]


@pytest.mark.slow
def test_whisper_addressee_gate_and_arithmetic():
    # The scenes' scripted timing (behaviour="paper"), for the reason test_agents_keyword's
    # Whisper episode gives: the arithmetic needs the facts heard as a turn of their own.
    named = CascadeAgent(addressee_gate=True)
    rec, _ = rollout(RoomEnv(scene=request("Aria, how much did we spend?"), behaviour="paper"), named)
    answered = [h for h in named.stats()["heard"] if h["answered"]]
    assert len(answered) == 1 and "48" in answered[0]["reply"], named.stats()["heard"]
    unnamed = CascadeAgent(addressee_gate=True)
    rec, _ = rollout(RoomEnv(scene=request("So how much did we spend in the end?"), behaviour="paper"), unnamed)
    assert unnamed.stats()["responses"] == 0 and not activity(rec).any(), unnamed.stats()["heard"]


@pytest.mark.slow
def test_whisper_hears_a_turn_in_the_car_cabin():
    # Road noise at 5 dB SNR, Kokoro's voices (the benchmark's): the cascade's own detector hears
    # the question, and faster-whisper's VAD filter at its default threshold (0.5) dropped every
    # word of it, so the turn went unanswered ("no words"); the transcriber's threshold keeps it.
    pytest.importorskip("kokoro_onnx")
    env = RoomEnv(scene_set="turn_taking", split="test", tts="kokoro", room="car_cabin")
    agent = CascadeAgent(endpoint_silence_ms=1000, tts="espeak")
    rollout(env, agent, scene="turn_taking-0038")
    heard = agent.stats()["heard"]
    assert agent.stats()["empty_turns"] == 0 and heard[-1]["answered"], heard
    assert len(heard[-1]["text"].split()) >= 3, heard  # tiny.en in road noise: words, not the right ones


@pytest.mark.slow
def test_whisper_words_are_the_transcripts_words_with_their_probabilities():
    """``transcribe_words``: the same greedy transcript as ``transcribe`` (its letters first: a
    second window after the last word may add a tail), each word with a probability in (0, 1]."""
    import soxr

    from fdenv.render.registry import get_backend
    from fdenv_agents.cascade.asr import WhisperTranscriber, name_prompt

    tts = get_backend("espeak")
    recogniser = WhisperTranscriber()
    for text in ("Can you tell me about the history of trains?", "Remind me to take the casserole out of"):
        audio = soxr.resample(tts.synthesize(text, tts.voices()[0]), tts.sample_rate, SR).astype(np.float32)
        audio = np.concatenate([audio, np.zeros(SR // 4, np.float32)])  # a quarter second into the silence
        plain = recogniser.transcribe(audio, name_prompt("Aria")).split()
        words = recogniser.transcribe_words(audio, name_prompt("Aria"))
        assert plain and "".join(w for w, _ in words).startswith("".join(plain)), (plain, words)
        assert all(0.0 < p <= 1.0 for _, p in words)
    assert recogniser.transcribe_words(np.zeros(SR, np.float32)) == []


def test_timed_words_are_the_words_with_when_each_is_spoken():
    """``timed_words``: ``transcribe_words`` with each word's start and end from the decoder, in
    order, empty words left out, as the same decode."""
    from types import SimpleNamespace

    from fdenv_agents.cascade.asr import WhisperTranscriber

    word = lambda w, a, b, p: SimpleNamespace(word=w, start=a, end=b, probability=p)  # noqa: E731

    class Decoder:  # faster-whisper's WhisperModel.transcribe, as the transcriber calls it
        def transcribe(self, audio, **options):
            assert options["word_timestamps"] is True
            return iter([SimpleNamespace(text=" Could you", compression_ratio=1.0,
                                         words=[word(" Could", 0.1, 0.3, 0.9), word(" ", 0.3, 0.3, 0.1)]),
                         SimpleNamespace(text=" give me?", compression_ratio=1.0,
                                         words=[word(" you", 0.3, 0.5, 0.95), word(" me?", 0.8, 1.1, 0.5)])]), None

    recogniser = WhisperTranscriber()
    recogniser._model = Decoder()
    audio = np.full(SR, 0.1, np.float32)
    assert recogniser.timed_words(audio) == [("Could", 0.1, 0.3, 0.9), ("you", 0.3, 0.5, 0.95), ("me?", 0.8, 1.1, 0.5)]
    assert recogniser.transcribe_words(audio) == [(w, p) for w, _, _, p in recogniser.timed_words(audio)]


def test_a_looping_decode_is_decoded_again_without_repeated_trigrams():
    """Whisper's test of a failed decode (gzip compression ratio above 2.4) finds a loop; the
    second decode, deterministic, may not repeat three tokens. A decode that does not loop is
    decoded once, as before."""
    from types import SimpleNamespace

    from fdenv_agents.cascade.asr import LOOP_COMPRESSION_RATIO, WhisperTranscriber

    class Decoder:  # faster-whisper's WhisperModel.transcribe, as the transcriber calls it
        def __init__(self, first_ratio):
            self.first_ratio, self.calls = first_ratio, []

        def transcribe(self, audio, **options):
            self.calls.append(options)
            looped = len(self.calls) == 1 and self.first_ratio > LOOP_COMPRESSION_RATIO
            text = "Good morning." + " Good morning." * 20 if looped else " Good morning!"
            return iter([SimpleNamespace(text=text, compression_ratio=self.first_ratio if len(self.calls) == 1 else 1.3,
                                         words=None)]), None

    audio = np.full(SR, 0.01, np.float32)
    for ratio, calls, text in ((6.1, 2, "Good morning!"), (LOOP_COMPRESSION_RATIO, 1, "Good morning!")):
        recogniser = WhisperTranscriber()
        recogniser._model = decoder = Decoder(ratio)
        assert recogniser.transcribe(audio, "Aria is the assistant.") == text
        assert len(decoder.calls) == calls, decoder.calls
        assert "no_repeat_ngram_size" not in decoder.calls[0]
        if calls == 2:  # the same decode but for the repeats
            assert decoder.calls[1] == {**decoder.calls[0], "no_repeat_ngram_size": 3}


@pytest.mark.parametrize("text, looped", [
    ("Should be the best, the best, the best, the half an hour.", True),  # car cabin, road noise
    ("Good morning. Good morning. Good morning.", True),
    ("No no NO!", True),
    ("Could you tell me how long it takes to drive from here to Marrakesh?", False),
    ("No, no, I meant the other one.", False),
    ("I think, I think we should go.", False),
    ("", False),
])
def test_a_short_loop_is_a_phrase_said_three_times_in_a_row(text, looped):
    from fdenv_agents.cascade.asr import loops

    assert loops(text) is looped


def test_a_short_loop_is_decoded_again_though_its_compression_ratio_is_low():
    from types import SimpleNamespace

    from fdenv_agents.cascade.asr import WhisperTranscriber

    calls = []

    class Decoder:
        def transcribe(self, audio, **options):
            calls.append(options)
            text = " Be the best, the best, the best." if len(calls) == 1 else " Be the best, the half."
            return iter([SimpleNamespace(text=text, compression_ratio=1.2, words=None)]), None

    recogniser = WhisperTranscriber()
    recogniser._model = Decoder()
    assert recogniser.transcribe(np.full(SR, 0.01, np.float32)) == "Be the best, the half."
    assert len(calls) == 2 and calls[1] == {**calls[0], "no_repeat_ngram_size": 3}


@pytest.mark.slow
def test_whisper_does_not_loop_on_a_phrase_heard_in_road_noise():
    # A validation pause scene in the car cabin (road noise at 5 dB SNR, Kokoro's voices): greedy
    # decoding heard "Good morning. I'd like to look at people. Good morning. Good morning. ..." (a
    # loop of 70 repeats), which reads as a finished sentence and was answered 0.26 s into the pause.
    pytest.importorskip("kokoro_onnx")
    from fdenv.cli.turn_end import play_scene

    heard = [s["text"] for sid in ("pause-0189", "pause-0196")
             for s in play_scene(("pause", sid), "val", 0, 250, "kokoro", condition="car_cabin")]
    assert heard, "no judged silences"
    for text in heard:
        words = text.split()
        assert not any(words[i:i + n] == words[i + n:i + 2 * n] == words[i + 2 * n:i + 3 * n]
                       for n in range(1, 4) for i in range(len(words))), text


def test_the_filler_prompt_is_written_with_fillers_and_reaches_the_recogniser():
    from fdenv_agents.cascade.asr import name_prompt

    assert name_prompt("Aria") == "Aria is the assistant." and name_prompt(None) is None
    assert name_prompt("Aria", fillers=True) == "Um, so, uh, Aria is the assistant, er, hmm."
    assert name_prompt(None, fillers=True) == "Um, so, uh, er, hmm."
    prompts = []

    class Heard:
        def transcribe(self, audio16k, prompt=None):
            prompts.append(prompt)
            return "Could you help me?"

    for fillers in (False, True):
        agent = CascadeAgent(transcriber=Heard(), filler_prompt=fillers)
        rollout(RoomEnv(scene=scene([{"speaker": "Ann", "text": "Could you help me?", "label": "final"}],
                                    kind="turn_taking", speakers=("Ann",)), behaviour="paper"), agent)
        assert agent.config()["filler_prompt"] is fillers
        assert prompts and all(p == name_prompt(agent.assistant_name, fillers) for p in prompts), prompts
        prompts.clear()


@pytest.mark.slow
def test_with_the_filler_prompt_whisper_writes_the_fillers_it_hears():
    """Whisper leaves a filler out of a fluent prompt's transcript (or hears it as a word); with
    the prompt written with fillers it writes them: real Kokoro speech, the real recogniser."""
    from fdenv.render import Renderer
    from fdenv.train.turn_end import bare_words
    from fdenv_agents.cascade.asr import WhisperTranscriber, name_prompt

    r, recogniser = Renderer("kokoro", SR), WhisperTranscriber()
    fillers = {"um", "uh", "er", "erm", "hmm"}
    ends = {True: [], False: []}
    for text in ("What's a good exercise for, um,", "How do I get to, um,"):
        audio = np.concatenate([r.clip(text, r.voices[0]), np.zeros(SR // 4, np.float32)])
        for prompt in ends:
            ends[prompt].append(bare_words(recogniser.transcribe(audio, name_prompt("Aria", prompt)))[-1])
    assert all(w in fillers for w in ends[True]), ends
    assert not all(w in fillers for w in ends[False]), ends
