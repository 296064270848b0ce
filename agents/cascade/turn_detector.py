"""The ``turn_detector`` agent: the cascade with a learned end-of-turn decision on words.

The cascade ends a user's turn after a fixed silence. Here, ``min_endpoint_ms`` into each silence
of a turn the recogniser transcribes the turn so far (the partial transcript a streaming
recogniser would hold then), and from then on, at every 32 ms window of the silence, a learned
model (``fdenv.train.turn_end``: the transcript's ending, its words, whether the assistant's name
was heard, and how long the silence has lasted) gives P(answer now). The first time it reaches
``threshold`` the turn ends and is answered (within the checkpoint's ``answer_within_s`` of
silence, when it has one: at 0.3 s the model decides once, at its first look); if it never does,
the turn ends, as in the cascade,
after ``endpoint_silence_ms``, its maximum delay (2 s: longer than the cascade's usual endpoint,
because the model answers the turns whose words say they are over well before it, and this wait
only decides the ambiguous ones; in road noise a 1.6 s wait took pauses the model had held). When
the user speaks again before that, the next silence is judged anew. Everything else (echo
handling, barge-in, responder, voice) is the cascade's, so a frontier of the two compares only
the endpointing.

``checkpoint``: a turn-end model: a file, or the name of a shipped one (``fdenv.train.turn_end.SHIPPED``:
``words``, the default, or ``single_user``, faster for one user, not fitted for several people,
and ``single_user_seed1`` / ``_seed2``, its recipe on two more draws of training rooms, and
``single_user_enhanced`` (and ``_seed1``, ``_seed2``), the same three heard through the cascade's
speech enhancement, and ``single_user_first_look`` (and ``_seed1``, ``_seed2``), those three deciding
once per silence, at their first look; its hash is in ``config()``). ``threshold``: default the checkpoint's own, chosen on the
validation split. ``filler_prompt`` (the cascade's knob: the recogniser's prompt is written with
fillers, so that it writes the "um" it hears) and ``model`` (the cascade's recogniser): default as
the checkpoint was fitted (``meta["filler_prompt"]``, ``meta["asr"]``; a checkpoint without it
was fitted on Whisper tiny.en), since its model learnt from transcripts made one way; so is
``enhance_db`` (the cascade's speech enhancement before the recogniser, ``meta["enhance_db"]``;
none without it), and the group model's episodes are heard as its own checkpoint's were.

``group_checkpoint`` (default none) and ``group_threshold``: a second model for the episodes whose
``reset`` gives the assistant a duty. The duty is the assistant's instructions (the text a
responder takes as its system prompt), and fdenv gives one only in a multi-party room (SPEC 2:
"People near you are talking to each other, and sometimes to you"); a room with one user gives
none. So ``checkpoint=single_user group_checkpoint=words`` answers one user fast and leaves other
people's turns to the model fitted on them, as a product would pick its mode from how it is
deployed. It reads no label and no scene text beyond those instructions; it does not tell the two
rooms apart by ear. ``stats()["judged"]``: every judged silence, with its frame, transcript, the
probability at the first look and, when it answered early, after how long a silence
(``python -m fdenv.cli.turn_end collect`` labels them to train the model; it sets ``record_sound``,
and each entry then keeps the sound descriptor of the turn's end, from the microphone and
noise-suppressed, and its pitch contour, from both, as well). A model with sound columns gets that descriptor
at its first look at each silence, from the signal its checkpoint names (``sound_from``: the
microphone, as the recogniser hears it, or noise-suppressed, as the voice-activity detector
does), one with pitch columns that contour (``fdenv.train.turn_end.pitch_descriptor``), from the
signal its checkpoint names likewise (``pitch_from``). A model
that reads the recogniser's confidence (``fdenv.train.turn_end.confidence_features``) gets the
words of a second recognition of the same audio, with their probabilities (``record_words``
keeps them in the entry too). A model that hears Smart Turn (``fdenv.train.smart_turn``) gets its probability that
the turn is complete, from the turn's audio up to the first look (``record_smart_turn`` keeps it).

Like the cascade, its compute does not delay it: the partial transcript is taken as available
at the decision, as from a streaming recogniser that keeps up with the audio.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .agent import WINDOW_MS, CascadeAgent
from .asr import DEFAULT_MODEL
from .text import name_heard


# ``stats()["judged"]`` keeps each probability to this many decimals: a threshold within one unit
# of the last of them may lie on either side of the probability the agent compared
P_DECIMALS = 4


class TurnDetectorAgent(CascadeAgent):
    name = "turn_detector"

    def __init__(self, checkpoint: str | None = None, threshold: float | None = None, min_endpoint_ms: float = 250,
                 endpoint_silence_ms: float = 2000, group_checkpoint: str | None = None,
                 group_threshold: float | None = None, filler_prompt: bool | None = None, model: str | None = None,
                 enhance_db: float | None = None, *, turn_end_model=None, group_turn_end_model=None, **cascade):
        """Knobs as the module docstring says; the cascade's knobs too. ``model`` (the cascade's
        recogniser), ``filler_prompt`` and ``enhance_db`` None: as the single-user checkpoint's
        transcripts were made, its ``meta["asr"]`` (default ``tiny.en``), ``meta["filler_prompt"]``
        and ``meta["enhance_db"]`` (default none).
        ``turn_end_model``, ``group_turn_end_model``: ``fdenv.train.turn_end.TurnEndModel``
        objects instead of checkpoints (tests, ``collect``)."""
        single = self._load(checkpoint, turn_end_model)
        made = single[0].meta  # how the model's training transcripts were made
        super().__init__(endpoint_silence_ms=endpoint_silence_ms,
                         model=made.get("asr", DEFAULT_MODEL) if model is None else model,
                         filler_prompt=bool(made.get("filler_prompt", False) if filler_prompt is None else filler_prompt),
                         enhance_db=made.get("enhance_db") if enhance_db is None else enhance_db, **cascade)
        if isinstance(min_endpoint_ms, bool) or not isinstance(min_endpoint_ms, (int, float)) \
                or not WINDOW_MS <= min_endpoint_ms <= endpoint_silence_ms:
            raise ValueError(f"turn_detector: min_endpoint_ms={min_endpoint_ms!r}; expected a number in "
                             f"[{WINDOW_MS:.0f}, endpoint_silence_ms={endpoint_silence_ms}]")
        self.checkpoint_knob, self.threshold_knob = checkpoint, threshold
        self.group_checkpoint_knob, self.group_threshold_knob = group_checkpoint, group_threshold
        self._single = self._model("checkpoint", checkpoint, single, "threshold", threshold)
        self._group = (self._model("group_checkpoint", group_checkpoint,
                                   self._load(group_checkpoint, group_turn_end_model), "group_threshold",
                                   group_threshold)
                       if group_checkpoint is not None or group_turn_end_model is not None else None)
        first_look_ms = np.ceil(min_endpoint_ms / WINDOW_MS) * WINDOW_MS  # the first window past min_endpoint_ms
        for field, loaded in (("checkpoint", self._single), ("group_checkpoint", self._group)):
            within = loaded[0].answer_within_s if loaded is not None else None
            if within is not None and within * 1000 < first_look_ms - 1e-6:
                raise ValueError(f"turn_detector: the {field} answers only within {within} s of silence, before its "
                                 f"first look at {first_look_ms:.0f} ms (min_endpoint_ms={min_endpoint_ms}); lower "
                                 "min_endpoint_ms or calibrate the checkpoint with a longer --answer-within-s")
        self.turn_end, self.threshold = self._single[:2]  # the episode's model: reset picks it
        # each model's episodes are heard as its training transcripts were: a group model without
        # the single-user model's speech enhancement keeps hearing the turns as they are
        self._enhancers = {False: getattr(self.transcriber, "enhancer", None)}
        if self._group is not None and hasattr(self.transcriber, "enhancer"):
            from .enhance import SpeechEnhancer

            group_db = self._group[0].meta.get("enhance_db") if enhance_db is None else enhance_db
            self._enhancers[True] = SpeechEnhancer(group_db) if group_db else None
        self.in_group = False
        self.min_endpoint_ms = min_endpoint_ms
        self.record_sound = False  # collect sets it: each judged silence keeps its sound descriptor
        self.record_words = False  # collect --words sets it: each judged silence keeps the recogniser's words
        self.record_smart_turn = False  # collect --smart-turn sets it: ... and Smart Turn's probability

    @staticmethod
    def _load(checkpoint: str | None, model) -> tuple:
        """(model, hash): the given model, or the checkpoint's (a file or a shipped name)."""
        from fdenv.train.turn_end import checkpoint_path, load

        if model is not None:
            return model, "given"
        path = checkpoint_path(checkpoint or None)
        return load(path), hashlib.sha256(path.read_bytes()).hexdigest()[:12]

    def _model(self, field: str, checkpoint: str | None, loaded: tuple, threshold_field: str,
               threshold: float | None) -> tuple:
        """(model, threshold, hash) for one of the two checkpoint knobs, with bad values named."""
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                      or not 0.0 <= threshold <= 1.0):
            raise ValueError(f"turn_detector: {threshold_field}={threshold!r}; a probability in [0, 1], or null for "
                             "the checkpoint's own")
        model, sha = loaded
        if model.uses_confidence and not hasattr(self.transcriber, "transcribe_words"):
            raise ValueError(f"turn_detector: the {field} {checkpoint or 'given'} reads the recogniser's confidence, "
                             f"and the transcriber {type(self.transcriber).__name__} has no transcribe_words(audio16k, "
                             "prompt) -> [(word, probability)]; give it one, or use a checkpoint without confidence")
        return model, float(model.threshold if threshold is None else threshold), sha

    def config(self) -> dict:
        group = {}
        if self._group is not None:
            enhancer = self._enhancers.get(True)
            group = {"group_checkpoint": self.group_checkpoint_knob or "given", "group_checkpoint_sha": self._group[2],
                     "group_threshold": self._group[1],
                     "group_enhance_db": None if enhancer is None else enhancer.attenuation_db}
        return {**super().config(), "checkpoint": self.checkpoint_knob or "shipped:turn_end.json",
                "checkpoint_sha": self._single[2], "threshold": self._single[1], "min_endpoint_ms": self.min_endpoint_ms,
                **group}

    def plays_alike(self, their_config: dict, line: dict) -> bool:
        """Whether this agent would play the episode of ``line`` (a run folder's line, played by a
        turn detector configured as ``their_config``) exactly as it was played, so that
        ``fdenv.run.run(reuse_alike=True)`` copies it instead: a threshold sweep then plays only
        the episodes a threshold changes. The configurations may differ only in ``threshold``. An
        episode of the group model never reads it. Otherwise the model must decide once per
        silence (its window closes before its first silence step, so the probability it compares
        cannot change within a silence), and then each silence is decided alike when its
        probability lies on the same side of both thresholds."""
        from fdenv.runs import jsonable

        theirs = {k: v for k, v in their_config.items() if k != "name"}
        mine = jsonable(self.config())  # as their configuration was stored: JSON
        if {k: v for k, v in mine.items() if k != "threshold"} != {k: v for k, v in theirs.items() if k != "threshold"}:
            return False
        stats = line.get("agent_stats")
        if not isinstance(stats, dict) or not isinstance(stats.get("judged"), list):
            return False
        if stats.get("turn_end_model") == "group":
            return True
        if stats.get("turn_end_model") != "single" or not self._decides_once(self._single[0]):
            return False
        other = theirs.get("threshold")
        if isinstance(other, bool) or not isinstance(other, (int, float)):
            return False
        lo, hi = sorted((float(other), self._single[1]))
        kept_to = 10.0 ** -P_DECIMALS
        return all(isinstance(j, dict) and isinstance(j.get("p"), (int, float)) and not isinstance(j["p"], bool)
                   and (j["p"] + kept_to < lo or j["p"] - kept_to >= hi) for j in stats["judged"])

    @staticmethod
    def _decides_once(model) -> bool:
        """The model's probability is the same at every window it answers in: its window closes
        before the silence's first step (``fdenv.train.turn_end.SILENCE_STEPS_S``)."""
        from fdenv.train.turn_end import SILENCE_STEPS_S

        return model.answer_within_s is not None and model.answer_within_s < min(SILENCE_STEPS_S) - 1e-9

    def reset(self, duty, sample_rate, frame_samples, scene=None):
        super().reset(duty, sample_rate, frame_samples, scene)
        # instructions mean a room of several people (the class docstring): the group model, if any
        self.in_group = self._group is not None and bool((duty or "").strip())
        self.turn_end, self.threshold = (self._group if self.in_group else self._single)[:2]
        if hasattr(self.transcriber, "enhancer"):
            self.transcriber.enhancer = self._enhancers.get(self.in_group, self._enhancers[False])
        self._stats["judged"] = []
        self._stats["early_ends"] = 0
        self._stats["turn_end_model"] = "group" if self.in_group else "single"

    def _ends_early(self, turn: dict) -> bool:
        if turn["silence_ms"] < self.min_endpoint_ms:
            turn.pop("judged", None)  # speech again: the next silence is judged anew
            return False
        if turn["overlapped"]:
            return False
        judged = turn.get("judged") or self._judge(turn)  # the words do not change within a silence
        if self.turn_end.prob_after(judged["logit"], turn["silence_ms"] / 1000) < self.threshold:
            return False
        self._stats["judged"][-1]["answered_after_s"] = round(turn["silence_ms"] / 1000, 3)
        turn["text"] = judged["text"]
        self._stats["early_ends"] += 1
        return True

    def _judge(self, turn: dict) -> dict:
        """What was said, at the first window of a silence past ``min_endpoint_ms``: the transcript
        and its part of the logit, kept on the turn; an entry in ``stats()["judged"]``."""
        text = self._transcribe(turn)
        named = name_heard(text, self.assistant_name)
        from fdenv.train.smart_turn import smart_turn_probability
        from fdenv.train.turn_end import pitch_descriptor, sound_descriptor

        heard = {"microphone": turn["audio"], "denoised": turn["heard"]}  # fdenv.train.turn_end.SOUND_SOURCES
        # collect keeps both descriptors; a model hears the one its checkpoint names
        sources = heard if self.record_sound else [self.turn_end.sound_from] if self.turn_end.uses_sound else []
        sounds = {src: sound_descriptor(heard[src]) for src in sources}
        sound = sounds.get(self.turn_end.sound_from)
        # the pitch contour likewise: collect keeps both, a model hears the one its checkpoint names
        sources = heard if self.record_sound else [self.turn_end.pitch_from] if self.turn_end.uses_pitch else []
        pitches = {src: pitch_descriptor(heard[src]) for src in sources}
        pitch = pitches.get(self.turn_end.pitch_from)
        words = self._transcribe_words(turn) if self.record_words or self.turn_end.uses_confidence else None
        smart = smart_turn_probability(turn["audio"]) if self.record_smart_turn or self.turn_end.uses_smart_turn \
            else None
        logit = self.turn_end.text_logit(text, named, sound, words, pitch, smart)
        silence_s = turn["silence_ms"] / 1000
        self._stats["judged"].append({"frame": self._k, "t_s": round(self._windows * WINDOW_MS / 1000, 3),
                                      "silence_s": round(silence_s, 3), "text": text, "named": named,
                                      "p": round(self.turn_end.prob_after(logit, silence_s), P_DECIMALS)})
        if self.record_sound:
            self._stats["judged"][-1]["sound"] = np.round(sounds["microphone"], 2).tolist()
            self._stats["judged"][-1]["sound_denoised"] = np.round(sounds["denoised"], 2).tolist()
            self._stats["judged"][-1]["pitch"] = pitches["microphone"]
            self._stats["judged"][-1]["pitch_denoised"] = pitches["denoised"]
        if self.record_smart_turn:
            self._stats["judged"][-1]["smart_turn"] = smart
        if self.record_words:
            self._stats["judged"][-1]["words"] = [[w, round(p, 3)] for w, p in words]
        turn["judged"] = {"text": text, "logit": logit}
        return turn["judged"]
