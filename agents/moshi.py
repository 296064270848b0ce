"""A client of Moshi's websocket protocol (kyutai-labs/moshi ``moshi.server``, path ``/api/chat``).

Binary messages whose first byte is the kind: ``0`` handshake (sent by the server first, when the
model is ready), ``1`` audio (an Ogg/Opus stream at 24 kHz; Moshi steps in 80 ms frames of
1920 samples), ``2`` text (UTF-8 pieces of Moshi's inner monologue). Opus is encoded and decoded
with ``sphn`` (``OpusStreamWriter.append_pcm`` -> bytes, ``OpusStreamReader.append_bytes`` ->
PCM). Other sample rates are resampled to and from 24 kHz (``StreamResampler``).

Pacing as for every ``RemoteAgent`` (``realtime.py``): one frame sent per step, then at most
``frame_timeout_ms`` of wall time to collect a frame back; Moshi owes a frame for every frame
it gets, so every padded step counts as late. **Runs are not bit-reproducible** (they depend on
the server's speed within the timeout, and on Moshi's sampling).
"""

from __future__ import annotations

import numpy as np

from .realtime import RemoteAgent, RemoteAgentError

FRAME = 1920  # 80 ms at 24 kHz
KIND_HANDSHAKE, KIND_AUDIO, KIND_TEXT = 0, 1, 2


class MoshiAgent(RemoteAgent):
    name = "moshi"
    protocol = "moshi"
    server_rate = 24000

    def __init__(self, url: str = "ws://localhost:8998/api/chat", frame_timeout_ms: float = 80,
                 connect_timeout_s: float = 30.0, pace: str = "fast"):
        super().__init__(url, frame_timeout_ms, connect_timeout_s, pace)

    def _episode_reset(self) -> None:
        import sphn

        self._writer = sphn.OpusStreamWriter(self.server_rate)
        self._reader = sphn.OpusStreamReader(self.server_rate)
        # Whole 1920-sample frames go to the encoder (the resampler turns each 80 ms frame into
        # exactly one).
        self._pending = np.zeros(0, np.float32)
        self._handshaken = False

    async def _handshake(self, ws):
        msg = await ws.recv()
        if not isinstance(msg, (bytes, bytearray)) or len(msg) == 0 or msg[0] != KIND_HANDSHAKE:
            head = msg[:16] if isinstance(msg, (bytes, bytearray, str)) else type(msg).__name__
            raise RemoteAgentError(f"moshi: expected the handshake (a message of kind 0) first, got {head!r}")
        self._handshaken = True

    def _encode(self, x: np.ndarray) -> list:
        self._pending = np.concatenate([self._pending, x.astype(np.float32)])
        out = []
        while len(self._pending) >= FRAME:
            chunk, self._pending = self._pending[:FRAME], self._pending[FRAME:]
            data = self._writer.append_pcm(chunk)
            self._stats["sent_frames"] += 1
            if len(data):
                out.append(bytes([KIND_AUDIO]) + data)
        return out

    def _on_message(self, msg) -> None:
        if isinstance(msg, str) or len(msg) == 0:
            return
        kind, payload = msg[0], bytes(msg[1:])
        if kind == KIND_AUDIO:
            pcm = self._reader.append_bytes(payload)
            if pcm is not None and len(pcm):
                self._push_audio(np.asarray(pcm, np.float32).reshape(-1))
        elif kind == KIND_TEXT:
            self._texts.append(payload.decode("utf-8", errors="replace"))
        # other kinds (control, metadata, ping) are ignored, as Moshi's own client does

    def _expecting(self) -> bool:
        return self._handshaken
