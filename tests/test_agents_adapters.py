"""The websocket adapters (Moshi, realtime JSON API) against small local fake servers.

Each fake runs ``websockets.serve`` on 127.0.0.1 (port 0) in its own thread and event loop and
speaks the protocol: the Moshi fake sends the handshake, decodes the client's Ogg/Opus frames
and answers every frame with a frame of a 440 Hz tone (plus text pieces); the realtime fake
acknowledges ``session.update``, detects speech in the appended PCM16 by energy, answers each
user turn with 2 s of a 440 Hz tone in base64 deltas, and records what the client sent
(``conversation.item.truncate`` included).
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import asyncio  # noqa: E402
import base64  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fdenv_agents import AGENTS, MoshiAgent, RealtimeAgent, RemoteAgentError, make_agent  # noqa: E402

TONE_HZ = 440.0


class FakeServer:
    """``websockets.serve(handler)`` on 127.0.0.1, port 0, in a thread with its own loop."""

    def __init__(self, handler):
        self.handler = handler
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def main():
            from websockets.asyncio.server import serve

            self.server = await serve(self.handler, "127.0.0.1", 0, compression=None, max_size=None)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            await self.server.wait_closed()

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(main()), daemon=True)
        self.thread.start()
        assert ready.wait(5)

    def url(self, path=""):
        return f"ws://127.0.0.1:{self.port}{path}"

    def close(self):
        self.loop.call_soon_threadsafe(self.server.close)
        self.thread.join(5)


def tone(n, sr, hz=TONE_HZ, start=0, level=0.3):
    t = (start + np.arange(n)) / sr
    return (level * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def peak_hz(x, sr):
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return np.argmax(spec) * sr / len(x)


# ---- Moshi -------------------------------------------------------------------------------
class MoshiFake:
    def __init__(self, close_after=None, delay_s=0.0, handshake=True):
        self.close_after, self.delay_s, self.handshake = close_after, delay_s, handshake
        self.received = []  # decoded client audio at 24 kHz
        self.kinds = []

    async def __call__(self, ws):
        import sphn

        if not self.handshake:
            await ws.send(b"\x02not a handshake")
        await ws.send(b"\x00")
        reader, writer = sphn.OpusStreamReader(24000), sphn.OpusStreamWriter(24000)
        pcm, n = np.zeros(0, np.float32), 0
        async for msg in ws:
            self.kinds.append(msg[0])
            if msg[0] != 1:
                continue
            got = reader.append_bytes(msg[1:])
            if got is not None and len(got):
                pcm = np.concatenate([pcm, got])
                self.received.append(got)
            while len(pcm) >= 1920:
                pcm = pcm[1920:]
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                data = writer.append_pcm(tone(1920, 24000, start=n * 1920))
                n += 1
                if len(data):
                    await ws.send(b"\x01" + data)
                if n % 5 == 0:
                    await ws.send(b"\x02" + f" word{n}".encode())
                if self.close_after and n >= self.close_after:
                    await ws.close(1011, "model crashed")
                    return


def serving(fake_class, path):
    """A fixture body: ``make(**kw) -> (fake, url)`` starts a fake server; all close at teardown."""
    servers = []

    def make(**kw):
        fake = fake_class(**kw)
        servers.append(FakeServer(fake))
        return fake, servers[-1].url(path)

    yield make
    for s in servers:
        s.close()


@pytest.fixture
def moshi_fake():
    yield from serving(MoshiFake, "/api/chat")


def run_frames(agent, frames, sr, signal=None):
    n = int(0.08 * sr)
    signal = tone(n * frames, sr, hz=300.0) if signal is None else signal
    out = [agent.act(signal[k * n : (k + 1) * n][None]) for k in range(frames)]
    return np.concatenate(out)


def test_registered():
    assert AGENTS["moshi"] is MoshiAgent and AGENTS["realtime"] is RealtimeAgent
    assert make_agent("moshi", url="ws://127.0.0.1:1/api/chat").config()["reproducible"] is False


@pytest.mark.parametrize("sr", [24000, 16000])
def test_moshi_handshake_audio_round_trip_and_text(moshi_fake, sr):
    fake, url = moshi_fake()
    agent = MoshiAgent(url)
    agent.reset("", sr, int(0.08 * sr))
    out = run_frames(agent, 40, sr)
    n = int(0.08 * sr)
    assert out.shape == (40 * n,) and out.dtype == np.float32
    late = out[20 * n :]
    assert np.sqrt(np.mean(late**2)) > 0.1  # the tone came back
    assert abs(peak_hz(late, sr) - TONE_HZ) < 15
    sent = np.concatenate(fake.received)
    assert len(sent) >= 30 * 1920 and abs(peak_hz(sent[-24000:], 24000) - 300.0) < 15  # our audio got there
    st = agent.stats()
    assert "word5" in st["text"] and st["frames"] == 40 and st["reproducible"] is False
    assert st["late_frames"] <= 5 and st["wait_ms_max"] <= 80 + 50
    assert set(fake.kinds) == {1}
    agent.close()


def test_moshi_server_disconnect_is_a_clear_error(moshi_fake):
    _, url = moshi_fake(close_after=10)
    agent = MoshiAgent(url)
    agent.reset("", 24000, 1920)
    with pytest.raises(RemoteAgentError, match="closed the connection.*1011.*model crashed"):
        run_frames(agent, 60, 24000)
    # a new episode connects again
    agent.reset("", 24000, 1920)
    run_frames(agent, 3, 24000)
    agent.close()


def test_moshi_slow_server_counts_late_frames_and_buffers(moshi_fake):
    _, url = moshi_fake(delay_s=0.12)
    agent = MoshiAgent(url, frame_timeout_ms=40)
    agent.reset("", 24000, 1920)
    t0 = time.perf_counter()
    out = run_frames(agent, 12, 24000)
    st = agent.stats()
    assert st["late_frames"] >= 6 and st["wait_ms_max"] < 40 + 40
    assert time.perf_counter() - t0 < 12 * 0.04 + 1.5
    assert out.shape == (12 * 1920,)
    agent.close()


def test_moshi_missing_handshake_and_no_server():
    srv = FakeServer(MoshiFake(handshake=False))
    try:
        with pytest.raises(RemoteAgentError, match="handshake"):
            MoshiAgent(srv.url("/api/chat"), connect_timeout_s=3).reset("", 24000, 1920)
    finally:
        srv.close()
    with pytest.raises(RemoteAgentError, match="could not connect"):
        MoshiAgent("ws://127.0.0.1:9/api/chat", connect_timeout_s=2).reset("", 24000, 1920)


def test_moshi_in_an_env_episode(moshi_fake):
    from fdenv.sim.env import RoomEnv

    from .helpers import rollout, scene

    _, url = moshi_fake()
    sc = scene([{"speaker": "Ann", "text": "Hello, can you hear me?", "label": "final"}], kind="turn_taking")
    agent = MoshiAgent(url)
    rec, frames = rollout(RoomEnv(scene=sc), agent)
    assert np.sqrt(np.mean(rec.assistant[-16000:] ** 2)) > 0.1
    agent.close()


# ---- realtime JSON API -----------------------------------------------------------------------
class RealtimeFake:
    def __init__(self, beta=False, rate=24000, close_after=None):
        self.beta, self.rate, self.close_after = beta, rate, close_after
        self.received: list[dict] = []
        self.session = None
        self.truncates: list[dict] = []
        self.responses = 0

    async def __call__(self, ws):
        await ws.send(json.dumps({"type": "session.created", "session": {"id": "sess_1"}}))
        speaking, quiet, appended = False, 0, 0
        async for raw in ws:
            msg = json.loads(raw)
            self.received.append(msg)
            kind = msg["type"]
            if kind == "session.update":
                self.session = msg["session"]
                await ws.send(json.dumps({"type": "session.updated", "session": msg["session"]}))
            elif kind == "conversation.item.truncate":
                self.truncates.append(msg)
            elif kind == "input_audio_buffer.append":
                appended += 1
                if self.close_after and appended >= self.close_after:
                    await ws.close(1011, "upstream failure")
                    return
                pcm = np.frombuffer(base64.b64decode(msg["audio"]), "<i2").astype(np.float32) / 32768
                loud = np.sqrt(np.mean(pcm**2)) > 0.02
                if loud and not speaking:
                    speaking, quiet = True, 0
                    await ws.send(json.dumps({"type": "input_audio_buffer.speech_started", "item_id": "user"}))
                elif speaking and not loud:
                    quiet += 1
                    if quiet >= 4:
                        speaking = False
                        await ws.send(json.dumps({"type": "input_audio_buffer.speech_stopped"}))
                        await self.respond(ws)
                elif loud:
                    quiet = 0

    async def respond(self, ws):
        self.responses += 1
        item = f"item_{self.responses}"
        await ws.send(json.dumps({"type": "response.created", "response": {"id": f"resp_{self.responses}"}}))
        audio = "response.audio.delta" if self.beta else "response.output_audio.delta"
        text = "response.audio_transcript.delta" if self.beta else "response.output_audio_transcript.delta"
        chunk = int(0.2 * self.rate)
        for i in range(10):  # 2 s, sent faster than real time as real servers do
            x = tone(chunk, self.rate, start=i * chunk)
            await ws.send(json.dumps({"type": audio, "item_id": item, "content_index": 0,
                                      "delta": base64.b64encode((x * 32767).astype("<i2").tobytes()).decode()}))
        await ws.send(json.dumps({"type": text, "item_id": item, "delta": "hello there"}))
        await ws.send(json.dumps({"type": "response.done", "response": {"id": f"resp_{self.responses}"}}))


@pytest.fixture
def realtime_fake():
    yield from serving(RealtimeFake, "/v1/realtime")


def speech_then_silence(sr, speech_s, silence_s):
    return np.concatenate([tone(int(speech_s * sr), sr, hz=300.0, level=0.2), np.zeros(int(silence_s * sr), np.float32)])


@pytest.mark.parametrize("api,sr", [("ga", 16000), ("beta", 24000)])
def test_realtime_session_round_trip_and_text(realtime_fake, api, sr):
    fake, url = realtime_fake(beta=api == "beta")
    td = {"type": "server_vad", "silence_duration_ms": 320}
    agent = RealtimeAgent(url, api=api, turn_detection=td, instructions="Be brief.", frame_timeout_ms=30)
    agent.reset("You are Aria.", sr, int(0.08 * sr))
    if api == "ga":
        fmt = fake.session["audio"]["input"]["format"]
        assert fmt == {"type": "audio/pcm", "rate": 24000} and fake.session["audio"]["input"]["turn_detection"] == td
    else:
        assert fake.session["input_audio_format"] == "pcm16" and fake.session["turn_detection"] == td
    assert fake.session["instructions"] == "Be brief."
    x = speech_then_silence(sr, 0.8, 3.0)
    out = run_frames(agent, len(x) // int(0.08 * sr), sr, signal=x)
    assert fake.responses == 1
    heard = out[int(1.6 * sr) : int(3.0 * sr)]
    assert np.sqrt(np.mean(heard**2)) > 0.1 and abs(peak_hz(heard, sr) - TONE_HZ) < 15
    appends = [m for m in fake.received if m["type"] == "input_audio_buffer.append"]
    assert len(appends) == len(x) // int(0.08 * sr)
    pcm = np.frombuffer(base64.b64decode(appends[3]["audio"]), "<i2")
    assert abs(len(pcm) - 1920) <= 64  # 80 ms at 24 kHz (the resampler's first chunks may be shorter)
    st = agent.stats()
    assert st["text"] == "hello there" and st["truncations"] == 0 and st["reproducible"] is False
    agent.close()


def test_realtime_barge_in_truncates_the_unplayed_audio(realtime_fake):
    fake, url = realtime_fake()
    sr, n = 24000, 1920
    agent = RealtimeAgent(url, frame_timeout_ms=30)
    agent.reset("", sr, n)
    first = speech_then_silence(sr, 0.8, 1.0)  # the server answers after 4 quiet frames
    out1 = run_frames(agent, len(first) // n, sr, signal=first)
    assert fake.responses == 1 and np.abs(out1[-n:]).max() > 0.1  # it is answering
    out2 = run_frames(agent, 12, sr, signal=tone(12 * n, sr, hz=300.0, level=0.2))  # the user talks over it
    deadline = time.time() + 2
    while not fake.truncates and time.time() < deadline:
        time.sleep(0.01)
    assert len(fake.truncates) == 1
    tr = fake.truncates[0]
    assert tr["item_id"] == "item_1" and tr["content_index"] == 0
    played_ms = 1000 * np.count_nonzero(np.abs(np.concatenate([out1, out2])) > 0) / sr
    assert abs(tr["audio_end_ms"] - played_ms) <= 200 and tr["audio_end_ms"] < 2000
    assert not out2[-6 * n :].any()  # the rest of the answer was dropped
    st = agent.stats()
    assert st["truncations"] == 1 and st["dropped_s"] > 0.3
    agent.close()


def test_realtime_server_disconnect_is_a_clear_error(realtime_fake):
    _, url = realtime_fake(close_after=8)
    agent = RealtimeAgent(url, frame_timeout_ms=20)
    agent.reset("", 16000, 1280)
    with pytest.raises(RemoteAgentError, match="realtime: the server at .* closed the connection.*upstream failure"):
        run_frames(agent, 30, 16000)
    agent.close()


def test_realtime_key_goes_in_a_header_not_in_config(realtime_fake, monkeypatch):
    monkeypatch.setenv("FAKE_KEY", "secret-123")
    agent = RealtimeAgent("ws://127.0.0.1:9", api_key_env="FAKE_KEY")
    assert agent._headers() == {"Authorization": "Bearer secret-123"}
    assert "secret-123" not in json.dumps(agent.config())


def test_a_call_after_the_event_loop_stopped_fails_and_leaves_no_coroutine_unawaited():
    """Closing a connection whose loop thread has already stopped used to schedule a coroutine
    that never ran; Python then warned "coroutine ... was never awaited" at garbage collection,
    in whichever test was running."""
    import gc
    import warnings

    from fdenv_agents.realtime import _LoopThread

    lt = _LoopThread("test-loop")
    assert lt.call(asyncio.sleep(0, result=7), 2.0) == 7
    lt.stop()

    async def never():
        return 1

    gc.collect()  # other tests' garbage first: only this coroutine's warning is looked for below
    coro = never()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RemoteAgentError, match="event loop has stopped"):
            lt.call(coro, 0.5)
        del coro
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message) and never.__qualname__ in str(w.message)]


def test_a_call_that_times_out_as_the_loop_stops_leaves_no_coroutine_unawaited(caplog):
    """A close that times out while the loop is busy, with the loop then stopped before it gets to
    the coroutine (as ``close`` does: ``close_connection``, then ``stop``), used to leave that
    coroutine never started; Python warned at garbage collection, in whichever test ran then."""
    import gc
    import warnings

    from fdenv_agents.realtime import _LoopThread

    lt = _LoopThread("test-loop")
    started, release = threading.Event(), threading.Event()

    async def busy():
        started.set()
        release.wait(5.0)  # holds the loop, as a stuck websocket write would

    async def never():
        return 1

    asyncio.run_coroutine_threadsafe(busy(), lt.loop)
    assert started.wait(5.0)
    lt.loop.call_soon_threadsafe(lt.loop.stop)  # the stop is queued before the call's coroutine
    gc.collect()
    coro = never()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TimeoutError):
            lt.call(coro, 0.05)  # the loop is held: this times out, however loaded the machine
        release.set()
        lt.stop()
        assert not lt.thread.is_alive()
        del coro, lt  # the loop and what it still holds go now, not in a later test
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message) and never.__qualname__ in str(w.message)]
    # only this test's task counts: the collection above may also log other tests' garbage
    assert not [r for r in caplog.records
                if "destroyed but it is pending" in r.getMessage() and never.__qualname__ in r.getMessage()]
