"""Streaming Silero VAD: one 512-sample window (32 ms at 16 kHz) at a time.

The ONNX model that ships in the ``silero-vad`` wheel, run through ``onnxruntime`` directly with
numpy arrays (the same computation as ``silero_vad``'s ``OnnxWrapper``: a 64-sample context
carried between windows and the recurrent state), single-threaded: about 0.1 ms a window here.
"""

from __future__ import annotations

import os

import numpy as np

WINDOW = 512
CONTEXT = 64
SAMPLE_RATE = 16000

_sessions: dict = {}


def _session():
    if "s" not in _sessions:
        import onnxruntime as ort
        import silero_vad

        path = os.path.join(os.path.dirname(silero_vad.__file__), "data", "silero_vad.onnx")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        _sessions["s"] = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])
    return _sessions["s"]


class StreamingVAD:
    """``prob(window)`` -> speech probability of one 512-sample window at 16 kHz."""

    def __init__(self):
        self.session = _session()
        self._sr = np.array(SAMPLE_RATE, np.int64)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros((2, 1, 128), np.float32)
        self._input = np.zeros((1, CONTEXT + WINDOW), np.float32)

    def prob(self, window: np.ndarray) -> float:
        x = self._input
        x[0, :CONTEXT] = x[0, WINDOW:]  # the last 64 samples of the previous window
        x[0, CONTEXT:] = window
        out, self._state = self.session.run(None, {"input": x, "state": self._state, "sr": self._sr})
        return float(out[0, 0])
