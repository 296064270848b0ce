"""Smart Turn v3: a turn-end model trained on real people's speech, heard at a turn's end.

``smart_turn_probability(windows)``: P(the turn is complete) from the last ``WINDOW_S`` of a turn's
audio, as Smart Turn v3 (Daily's open audio end-of-turn model, BSD 2-Clause: a Whisper tiny
encoder with a small classifier, trained on human speech in 23 languages, incomplete phrases cut
at pauses and filler words among them) gives it. It hears what our own features cannot learn from
a few hundred synthetic silences: how a phrase that goes on sounds, the lengthened syllable before
a pause, a filler's hesitation. The turn-end model takes it as columns
(``fdenv.train.turn_end.smart_turn_features``) and learns how far to trust it beside the words.

The weights are not ours and not in this repository: ``pipecat-ai`` ships them in its wheel
(``pipecat/audio/turn/smart_turn/data/``), and only that file is read; nothing of pipecat is
imported. Install it without its dependencies (``make install`` does; they pin packages below
ours): ``pip install --no-deps pipecat-ai==1.14.0``. Its input is what the model card asks:
16 kHz audio, the last 8 s left-padded with zeros, scaled to zero mean and unit variance, as
Whisper's 80-band log-mel (faster-whisper's own extractor, so no second copy of Whisper's
front end lives here). One thread, so a probability is the same bit for bit on every run.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np

PACKAGE, VERSION = "pipecat-ai", "1.14.0"
WEIGHTS = "audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"  # inside the installed ``pipecat`` package
RATE = 16000
WINDOW_S = 8  # the model's receptive field: the last 8 s of the turn
NORM_EPS = 1e-7  # Whisper's feature extractor: variance floor of its zero-mean unit-variance scaling


def weights_path() -> Path:
    """The ONNX file pipecat-ai ships; a clear error naming the fix when it is not installed."""
    spec = importlib.util.find_spec("pipecat")  # finds the package without running its __init__
    path = Path(spec.submodule_search_locations[0]) / WEIGHTS if spec and spec.submodule_search_locations else None
    if path is None or not path.is_file():
        raise ModuleNotFoundError(
            f"Smart Turn v3's weights ({WEIGHTS}) come with {PACKAGE}, which is not installed: "
            f"pip install --no-deps {PACKAGE}=={VERSION} (its own dependencies are not needed), or use a "
            "turn-end checkpoint without the smart_turn columns")
    return path


@functools.lru_cache(maxsize=1)
def _session():
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(str(weights_path()), sess_options=options, providers=["CPUExecutionProvider"])


@functools.lru_cache(maxsize=1)
def _log_mel():
    from faster_whisper.feature_extractor import FeatureExtractor

    return FeatureExtractor(chunk_length=WINDOW_S)


def model_input(audio: np.ndarray) -> np.ndarray:
    """``(1, 80, 800)`` log-mel of the last ``WINDOW_S`` of ``audio`` (16 kHz), as the model takes it."""
    x = np.asarray(audio, np.float32)[-WINDOW_S * RATE:]
    x = np.pad(x, (WINDOW_S * RATE - len(x), 0))
    x = (x - x.mean()) / np.sqrt(x.var() + NORM_EPS)
    return _log_mel()(x, padding=0)[None].astype(np.float32)


def smart_turn_probability(windows: list[np.ndarray]) -> float:
    """P(complete) for a turn whose 16 kHz audio so far is ``windows`` (its 32 ms windows, oldest
    first, up to the decision); 4 decimals."""
    if not windows:
        raise ValueError("smart_turn_probability: no audio windows")
    heard = WINDOW_S * RATE // len(windows[-1]) + 1  # the windows that reach into the model's last 8 s
    audio = np.concatenate([np.asarray(w, np.float32) for w in windows[-heard:]])
    p = _session().run(None, {"input_features": model_input(audio)})[0]
    return round(float(np.asarray(p).ravel()[0]), 4)
