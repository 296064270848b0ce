"""Whisper's decoder as a language model: how likely a transcript's words end where they stop.

``end_probability(text)``: the probability that, after ``text``'s words, the next token closes
the sentence (``.``, ``?``, ``!`` or the end of the text), as the recogniser's own decoder gives
it when it hears nothing. Whisper's decoder is a language model trained on the transcripts of
680,000 hours of speech; over a silent clip its next-token distribution is its prior on text
alone. So "Would you give me" gets about 0.03 and "how many days will it take me to finish it"
about 0.8, whatever punctuation the recogniser wrote (it closes a phrase cut by a pause as if
it were a sentence: "Would you give me?"). Lexical completeness is the classic end-of-turn cue
where prosody is ambiguous (Gravano & Hirschberg 2011; LiveKit's turn detector is a small
language model over the transcript); this one needs no model beyond the recogniser fdenv
already ships, offline.

The text's closing marks are dropped, its first letter raised, and at most ``MAX_TOKENS`` of its
last tokens are read. The decoder is run teacher-forced over them plus one token more, so that
the distribution after the last word is among the returned ones. Deterministic (CTranslate2 on
the CPU, one clip, greedy).
"""

from __future__ import annotations

import threading

import numpy as np

MAX_TOKENS = 60  # the last words read: a turn's last sentence or two
CLOSING = ".?!,;:…"  # marks the recogniser adds, dropped before the words are read
END_TOKENS = ("<|endoftext|>", ".", "?", "!")

_lock = threading.Lock()
_decoders: dict = {}


class _Decoder:
    """One recogniser's decoder, with the encoding of a silent 30 s clip (computed once)."""

    def __init__(self, model):
        import ctranslate2

        from ..score.asr import load

        whisper = load(model)
        self.tokenizer, self.model = whisper.hf_tokenizer, whisper.model
        features = whisper.feature_extractor(np.zeros(whisper.feature_extractor.n_samples, np.float32))
        self.silence = self.model.encode(ctranslate2.StorageView.from_array(
            np.ascontiguousarray(features[None, :, :whisper.feature_extractor.nb_max_frames], np.float32)), to_cpu=True)
        vocab = self.tokenizer.get_vocab()
        multilingual = "<|en|>" in vocab and whisper.model.is_multilingual
        self.prefix = [vocab["<|startoftranscript|>"]] + (
            [vocab["<|en|>"], vocab["<|transcribe|>"]] if multilingual else []) + [vocab["<|notimestamps|>"]]
        self.ends = [vocab[t] for t in END_TOKENS if t in vocab]
        self.filler = self.ids(" the")[0]  # the one forced token after the words (any will do)

    def ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def end_probability(self, text: str) -> float:
        words = text.strip().rstrip(CLOSING).strip()
        if not words:
            return 1.0  # nothing said: nothing to go on
        ids = self.ids(" " + words[0].upper() + words[1:])[-MAX_TOKENS:]
        prompt = self.prefix + ids + [self.filler]
        # teacher-forced over the prompt: logits[k] is the distribution of the k-th forced token,
        # so logits[len(ids)] is what follows the last word (max_length generous: CTranslate2
        # counts the forced tokens in it)
        out = self.model.generate(self.silence, [prompt], max_length=2 * len(prompt) + 2, beam_size=1,
                                  return_logits_vocab=True, suppress_blank=False, suppress_tokens=[])[0]
        logits = np.asarray(out.logits[0][len(ids)], np.float64).reshape(-1)
        logp = logits - np.logaddexp.reduce(logits)
        return float(np.exp(np.logaddexp.reduce(logp[self.ends])))


def end_probability(text: str, model=None) -> float:
    """P(the words of ``text`` end a sentence where they stop), from the decoder of the recogniser
    ``model`` (None: fdenv's default, ``fdenv.score.asr.DEFAULT_MODEL``); 1.0 for no words."""
    from ..score.asr import resolve_model

    key = str(resolve_model(model))
    with _lock:
        if key not in _decoders:
            _decoders[key] = _Decoder(model)
        decoder = _decoders[key]
    return decoder.end_probability(text)
