"""Bring-your-own-model adapters over websockets, and the realtime JSON API client.

``RemoteAgent`` is the machinery both adapters share (``moshi.py`` builds on it): a background
thread runs its own asyncio event loop and websocket connection (``websockets``), so ``act()``
stays synchronous. Pacing, per step: send one frame, then collect what the server sends for at
most ``frame_timeout_ms`` of wall time (default 80), and return exactly one frame: audio beyond
a frame is buffered for the next steps, a shortfall is padded with silence. A padded step while
the server owes audio (Moshi: always; realtime: during a response) counts as a *late frame*.
``pace="fast"`` returns as soon as a frame is there (Moshi answers every frame it gets, so its
episodes run at the server's speed); ``pace="realtime"`` always collects for the whole
``frame_timeout_ms``, so that an episode runs in real time and the server's reactions (its VAD
hearing a barge-in, a new response) land at the right episode time even while a response
that arrived faster than real time is buffered (the realtime adapter's default).
``stats()`` reports the pacing (wait per step, late frames, buffered audio) for the results.

**These runs are not bit-reproducible**: what arrives within the timeout depends on the server's
speed, the network and the machine's load, so two runs of the same episode can differ.

``RealtimeAgent`` speaks an OpenAI-Realtime-style JSON protocol: ``session.update`` with audio
formats (PCM16 at ``server_rate``) and turn detection from config, ``input_audio_buffer.append``
with base64 PCM16 per frame, audio back in ``response.output_audio.delta`` (GA) or
``response.audio.delta`` (beta), transcripts in the matching ``*_transcript.delta`` events. When
the server reports ``input_audio_buffer.speech_started`` while the agent's audio is playing
(barge-in), the unplayed audio is dropped and ``conversation.item.truncate`` tells the server
how much of the item was heard (``audio_end_ms``).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import os
import threading
import time
from collections import deque

import numpy as np

from fdenv.errors import AgentError

from .base import Agent


PACES = ("fast", "realtime")


class RemoteAgentError(AgentError):
    """The server could not be reached, or closed the connection, or reported an error."""


class _LoopThread:
    """A daemon thread running an asyncio event loop."""

    def __init__(self, name: str):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro, timeout: float):
        if self.loop.is_closed() or not self.thread.is_alive():
            coro.close()  # it would never run: close it rather than leave it unawaited
            raise RemoteAgentError("the connection's event loop has stopped")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            if inspect.getcoroutinestate(coro) == inspect.CORO_CREATED:
                coro.close()  # the loop never got to it (busy, then stopped): nothing is left unawaited
            raise

    def stop(self):
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=2.0)
        if self.thread.is_alive() or self.loop.is_closed():
            return
        # Tasks the loop stopped before finishing are cancelled and unwound, as asyncio.run does,
        # so that none is collected pending (and warned about) in whatever code runs later.
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.wait(pending, timeout=1.0))
        self.loop.close()


class StreamResampler:
    """Causal streaming polyphase resampler (windowed-sinc FIR): every chunk of ``n`` input
    samples gives exactly ``n * dst / src`` output samples once the ratio divides, with a fixed
    latency of half the filter (under 1 ms). soxr's stream resampler hands its output out in
    uneven blocks (979, then 1468 samples for each 1920 in at 24 -> 16 kHz), which would pad
    frames that are not late at all."""

    def __init__(self, src: int, dst: int, taps_per_phase: int = 24):
        from math import gcd

        from scipy.signal import firwin

        g = gcd(int(src), int(dst))
        self.L, self.M = int(dst) // g, int(src) // g
        r = max(self.L, self.M)
        n = taps_per_phase * r + 1
        self.h = (firwin(n, 0.92 / r, window=("kaiser", 8.0)) * self.L).astype(np.float64)
        self.H = -(-(n - 1) // self.L) + 1  # input samples of history the filter reaches back
        self.hist = np.zeros(self.H, np.float64)
        self.T = 0  # input samples seen

    def __call__(self, x: np.ndarray) -> np.ndarray:
        from scipy.signal import upfirdn

        x = np.asarray(x, np.float64).reshape(-1)
        n = len(x)
        if n == 0:
            return np.zeros(0, np.float32)
        L, M, H, T = self.L, self.M, self.H, self.T
        cat = np.concatenate([self.hist, x])
        y = upfirdn(self.h, cat, up=L, down=1)
        k0 = -(-T * L // M)
        k1 = -(-(T + n) * L // M)
        start = k0 * M - (T - H) * L
        out = y[start : start + (k1 - k0) * M : M]
        self.hist = cat[-H:]
        self.T = T + n
        return out.astype(np.float32)


class RemoteAgent(Agent):
    """Base of the websocket adapters. Subclasses define ``server_rate``, ``_handshake(ws)``,
    ``_encode(frame) -> list of messages``, ``_on_message(msg)`` and ``_expecting()``."""

    name = "remote"
    server_rate = 24000
    protocol = "remote"

    def __init__(self, url: str, frame_timeout_ms: float = 80, connect_timeout_s: float = 10.0, pace: str = "fast"):
        if isinstance(frame_timeout_ms, bool) or not isinstance(frame_timeout_ms, (int, float)) or not 0 <= frame_timeout_ms <= 10000:
            raise ValueError(f"{self.name}: frame_timeout_ms={frame_timeout_ms!r}; expected milliseconds in [0, 10000]")
        if pace not in PACES:
            raise ValueError(f"{self.name}: pace={pace!r}; valid choices: {list(PACES)}")
        self.url = url
        self.frame_timeout_ms = frame_timeout_ms
        self.pace = pace
        self.connect_timeout_s = connect_timeout_s
        self._lt: _LoopThread | None = None
        self._ws = None
        self._stats: dict = {}

    # ---- lifecycle ---------------------------------------------------------------------
    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        self.close_connection()
        if self._lt is None:
            self._lt = _LoopThread(f"fdenv-{self.name}")
        self._cond = threading.Condition()
        self._buf: deque = deque()  # (item_id, samples at the env rate)
        self._buf_len = 0
        self._error: str | None = None
        self._texts: list[str] = []
        self._played: dict = {}  # item id -> samples played (env rate)
        self._waits: list[float] = []
        self._stats = {"frames": 0, "late_frames": 0, "received_s": 0.0, "sent_frames": 0, "truncations": 0,
                       "dropped_s": 0.0, "server_errors": []}
        self._in_rs = self._out_rs = None
        if sample_rate != self.server_rate:
            self._in_rs = StreamResampler(sample_rate, self.server_rate)
            self._out_rs = StreamResampler(self.server_rate, sample_rate)
        self._episode_reset()
        try:
            self._lt.call(self._open(), self.connect_timeout_s + 1.0)
        except (TimeoutError, asyncio.TimeoutError):
            raise RemoteAgentError(f"{self.name}: no connection or handshake from {self.url} within "
                                   f"{self.connect_timeout_s:g} s") from None
        except RemoteAgentError:
            raise
        except Exception as e:  # noqa: BLE001 - connection refused, DNS, HTTP status...
            raise RemoteAgentError(f"{self.name}: could not connect to {self.url}: {type(e).__name__}: {e}") from None

    def _episode_reset(self) -> None:
        """Per-episode protocol state (subclasses)."""

    async def _open(self):
        from websockets.asyncio.client import connect

        headers = self._headers()
        ws = await asyncio.wait_for(connect(self.url, additional_headers=headers or None, max_size=None,
                                            open_timeout=self.connect_timeout_s, compression=None),
                                    self.connect_timeout_s)
        self._ws = ws
        self._outq: asyncio.Queue = asyncio.Queue()
        await asyncio.wait_for(self._handshake(ws), self.connect_timeout_s)
        self._tasks = [asyncio.ensure_future(self._recv_loop(ws)), asyncio.ensure_future(self._send_loop(ws))]

    def _headers(self) -> dict:
        return {}

    async def _recv_loop(self, ws):
        from websockets.exceptions import ConnectionClosed

        try:
            async for msg in ws:
                self._on_message(msg)
        except ConnectionClosed:
            pass
        except Exception as e:  # noqa: BLE001 - a bad message must not hang the episode
            self._fail(f"{type(e).__name__} while reading from the server: {e}")
            return
        self._fail(f"the server at {self.url} closed the connection{_close_why(ws)}")

    async def _send_loop(self, ws):
        from websockets.exceptions import ConnectionClosed

        try:
            while True:
                msg = await self._outq.get()
                if msg is None:
                    return
                await ws.send(msg)
        except ConnectionClosed:  # (the reader may not have seen the close yet: its reason, either way)
            self._fail(f"the server at {self.url} closed the connection while sending{_close_why(ws)}")
        except Exception as e:  # noqa: BLE001
            self._fail(f"{type(e).__name__} while sending: {e}")

    def _fail(self, why: str) -> None:
        with self._cond:
            if self._error is None:
                self._error = why
            self._cond.notify_all()

    def _send(self, msg) -> None:
        self._lt.loop.call_soon_threadsafe(self._outq.put_nowait, msg)

    def _push_audio(self, pcm_server_rate: np.ndarray, item=None) -> None:
        """Called on the loop thread with decoded audio at ``server_rate``."""
        x = np.asarray(pcm_server_rate, np.float32).reshape(-1)
        if self._out_rs is not None:
            x = self._out_rs(x)
        if len(x) == 0:
            return
        with self._cond:
            self._buf.append((item, x))
            self._buf_len += len(x)
            self._stats["received_s"] += len(x) / self.sample_rate
            self._cond.notify_all()

    def _drop_buffer(self) -> int:
        """Drop all unplayed audio (barge-in); returns the samples dropped."""
        with self._cond:
            n = self._buf_len
            self._buf.clear()
            self._buf_len = 0
        self._stats["dropped_s"] += n / self.sample_rate
        return n

    def close_connection(self) -> None:
        if self._ws is not None and self._lt is not None:
            ws, self._ws = self._ws, None

            async def _close():
                for t in getattr(self, "_tasks", []):
                    t.cancel()
                await ws.close()

            try:
                self._lt.call(_close(), 3.0)
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass

    def close(self) -> None:
        """Close the connection and stop the background thread."""
        self.close_connection()
        if self._lt is not None:
            self._lt.stop()
            self._lt = None

    def __getstate__(self):
        state = self.__dict__.copy()
        for k in ("_lt", "_ws", "_cond", "_buf", "_outq", "_tasks", "_in_rs", "_out_rs"):
            state.pop(k, None)
        state["_lt"] = state["_ws"] = None
        return state

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    # ---- stepping ----------------------------------------------------------------------
    def act(self, observation, labels=None):
        if self._error is not None:
            raise RemoteAgentError(f"{self.name}: {self._error} after {self._stats['frames']} frames")
        obs = np.asarray(observation, np.float32)
        x = obs[0] if obs.ndim == 2 else obs
        if self._in_rs is not None:
            x = self._in_rs(x)
        for msg in self._encode(x):
            self._send(msg)
        N = self.frame_samples
        t0 = time.perf_counter()
        deadline = t0 + self.frame_timeout_ms / 1000.0
        with self._cond:
            while (self._buf_len < N or self.pace == "realtime") and self._error is None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                self._cond.wait(left)
            out = np.zeros(N, np.float32)
            got = 0
            while got < N and self._buf:
                item, chunk = self._buf[0]
                take = min(N - got, len(chunk))
                out[got : got + take] = chunk[:take]
                if take == len(chunk):
                    self._buf.popleft()
                else:
                    self._buf[0] = (item, chunk[take:])
                self._buf_len -= take
                got += take
                if item is not None:
                    self._played[item] = self._played.get(item, 0) + take
            buffered = self._buf_len
            error = self._error
        self._waits.append(time.perf_counter() - t0)
        self._stats["frames"] += 1
        if got < N and self._expecting():
            self._stats["late_frames"] += 1
        self._stats["buffered_s"] = buffered / self.sample_rate
        if error is not None and got == 0:
            raise RemoteAgentError(f"{self.name}: {error} after {self._stats['frames']} frames")
        return out

    def stats(self) -> dict:
        """Pacing and protocol counts of the current (or last) episode. Not reproducible."""
        w = np.asarray(self._waits or [0.0]) * 1000
        return {**self._stats, "wait_ms_mean": float(w.mean()), "wait_ms_p95": float(np.percentile(w, 95)),
                "wait_ms_max": float(w.max()), "text": "".join(self._texts), "reproducible": False}

    def config(self) -> dict:
        return {"protocol": self.protocol, "url": self.url, "frame_timeout_ms": self.frame_timeout_ms,
                "pace": self.pace, "server_rate": self.server_rate, "reproducible": False}

    # ---- protocol hooks ------------------------------------------------------------------
    async def _handshake(self, ws):
        raise NotImplementedError

    def _encode(self, frame_server_rate: np.ndarray) -> list:
        raise NotImplementedError

    def _on_message(self, msg) -> None:
        raise NotImplementedError

    def _expecting(self) -> bool:
        return True


def pcm16_b64(x: np.ndarray) -> str:
    return base64.b64encode((np.clip(x, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()).decode("ascii")


def b64_pcm16(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), dtype="<i2").astype(np.float32) / 32768.0


AUDIO_DELTAS = ("response.output_audio.delta", "response.audio.delta")
TEXT_DELTAS = ("response.output_audio_transcript.delta", "response.audio_transcript.delta",
               "response.output_text.delta", "response.text.delta")


class RealtimeAgent(RemoteAgent):
    """A client of an OpenAI-Realtime-style JSON API (see the module docstring).

    ``turn_detection``: sent as is in ``session.update`` (default: server VAD with 500 ms of
    silence, the cascade's endpointing default); ``api``: ``"ga"`` (``session.audio.input``
    layout, ``audio/pcm``) or ``"beta"`` (``input_audio_format: pcm16``). The API key is read
    from the environment variable named by ``api_key_env`` and sent as a bearer token; it never
    appears in ``config()``.
    """

    name = "realtime"
    protocol = "realtime-json"

    def __init__(self, url: str = "wss://api.openai.com/v1/realtime?model=gpt-realtime",
                 frame_timeout_ms: float = 80, connect_timeout_s: float = 10.0, api: str = "ga",
                 instructions: str | None = None, voice: str | None = None, turn_detection: dict | None = None,
                 server_rate: int = 24000, api_key_env: str = "OPENAI_API_KEY", truncate_on_barge_in: bool = True,
                 pace: str = "realtime"):
        super().__init__(url, frame_timeout_ms, connect_timeout_s, pace)
        if api not in ("ga", "beta"):
            raise ValueError(f"realtime: api={api!r}; valid choices: ['beta', 'ga']")
        self.api = api
        self.instructions = instructions
        self.voice = voice
        self.turn_detection = dict(turn_detection) if turn_detection is not None else {
            "type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 500}
        self.server_rate = int(server_rate)
        self.api_key_env = api_key_env
        self.truncate_on_barge_in = bool(truncate_on_barge_in)

    def config(self) -> dict:
        return {**super().config(), "api": self.api, "instructions": self.instructions, "voice": self.voice,
                "turn_detection": self.turn_detection, "truncate_on_barge_in": self.truncate_on_barge_in}

    def _headers(self) -> dict:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _episode_reset(self) -> None:
        self._responding = False
        self._current_item = None  # the assistant item whose audio is arriving / playing
        self.events: list[str] = []
        self.session: dict = {}

    def session_update(self) -> dict:
        instructions = self.instructions if self.instructions is not None else (self.duty or None)
        if self.api == "ga":
            fmt = {"type": "audio/pcm", "rate": self.server_rate}
            session = {"type": "realtime", "output_modalities": ["audio"],
                       "audio": {"input": {"format": fmt, "turn_detection": self.turn_detection},
                                 "output": {"format": fmt}}}
            if self.voice:
                session["audio"]["output"]["voice"] = self.voice
        else:
            session = {"modalities": ["audio", "text"], "input_audio_format": "pcm16", "output_audio_format": "pcm16",
                       "turn_detection": self.turn_detection}
            if self.voice:
                session["voice"] = self.voice
        if instructions:
            session["instructions"] = instructions
        return {"type": "session.update", "session": session}

    async def _handshake(self, ws):
        # Servers greet with session.created; send our session at once and wait for its
        # acknowledgement (session.updated), so that a dead or refusing endpoint fails at reset,
        # not mid-episode, and the first audio frame is read with our formats.
        await ws.send(json.dumps(self.session_update()))
        while True:
            msg = json.loads(await ws.recv())
            self.events.append(msg.get("type", "?"))
            if msg.get("type") == "error":
                raise RemoteAgentError(f"realtime: the server refused the session: {msg.get('error')}")
            if msg.get("type") == "session.updated":
                self.session = msg.get("session", {})
                return

    def _encode(self, x: np.ndarray) -> list:
        if len(x) == 0:
            return []
        self._stats["sent_frames"] += 1
        return [json.dumps({"type": "input_audio_buffer.append", "audio": pcm16_b64(x)})]

    def _on_message(self, raw) -> None:
        msg = json.loads(raw)
        kind = msg.get("type", "")
        self.events.append(kind)
        if kind in AUDIO_DELTAS:
            self._current_item = msg.get("item_id")
            self._responding = True
            self._push_audio(b64_pcm16(msg.get("delta", "")), item=self._current_item)
        elif kind in TEXT_DELTAS:
            self._texts.append(msg.get("delta", ""))
        elif kind == "response.created":
            self._responding = True
        elif kind in ("response.done", "response.cancelled"):
            self._responding = False
        elif kind == "input_audio_buffer.speech_started":
            self._barge_in()
        elif kind == "session.updated":
            self.session = msg.get("session", {})
        elif kind == "error":
            self._stats["server_errors"].append(msg.get("error"))

    def _barge_in(self) -> None:
        item = self._current_item
        with self._cond:
            pending = self._buf_len
        self._responding = False
        if item is None or pending == 0:
            return  # nothing of ours is playing: an ordinary user turn
        self._drop_buffer()
        self._stats["truncations"] += 1
        if self.truncate_on_barge_in:
            played_ms = int(1000 * self._played.get(item, 0) / self.sample_rate)
            self._outq.put_nowait(json.dumps({"type": "conversation.item.truncate", "item_id": item,
                                              "content_index": 0, "audio_end_ms": played_ms}))

    def _expecting(self) -> bool:
        return self._responding


def _close_why(ws) -> str:
    """`` (code 1011: reason)`` of a closed websocket, or ``""`` before its close is known."""
    code, reason = getattr(ws, "close_code", None), getattr(ws, "close_reason", None)
    return f" (code {code}{': ' + reason if reason else ''})" if code is not None else ""
