"""Does the word after a scripted pause start before it?

    python benchmarks/pause_word_onsets.py --split val --tts kokoro espeak   # a few minutes here

A turn with ``[pause=S]`` markers is synthesised in one piece and cut where the back end says the
word after each pause starts (``fdenv.render.renderer``). A person who hesitates stops after a
word; if the cut comes late, the audio before the pause already holds the start of the next one,
and a recogniser that hears the turn so far completes it ("... and honestly I didn't know." at
"I didn't [pause] know"), so the transcript at the pause reads as a finished sentence. For each
pause of a split's pause scenes, in the voice the env gives its speaker (``voice_map``), this
renders the turn as the env does, joins its pieces up to the pause with 0.5 s silences, adds
0.3 s of silence, and transcribes it as the cascade does (Whisper tiny.en, the assistant's name
as prompt; no room, no noise). A pause *leaks* when the transcript ends on the next piece's first
word, or on a start of it ("egg", "ch-" for "eggs", "chickpeas"), where the script has another
word, and is *whole* when it ends on the word said before the pause. The same again with the last
``--back-off`` milliseconds of each piece before a pause cut away: how much earlier a cut would
need to be, and whether it would cut into the word before. Deterministic.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SAMPLE_RATE = 16000
JOIN_S, TAIL_S = 0.5, 0.3


def whole(transcript: str, before: str) -> bool:
    """The transcript at a pause ends on the word said before it (``before``'s last)."""
    from fdenv.train.turn_end import bare_words

    heard, said = bare_words(transcript), bare_words(before)
    return bool(heard) and bool(said) and heard[-1] == said[-1]


def leaks(transcript: str, before: str, after: str) -> bool:
    """The transcript at a pause ends on the word after it (``after``'s first word, or a start of
    it of two letters or more), not on the word said before it."""
    from fdenv.train.turn_end import bare_words

    heard, next_ = bare_words(transcript), bare_words(after)
    if not heard or not next_ or whole(transcript, before):
        return False
    return heard[-1] == next_[0] or (len(heard[-1]) >= 2 and next_[0].startswith(heard[-1]))


def prefixes(pieces: list[np.ndarray], back_off_ms: float) -> list[np.ndarray]:
    """The turn so far at each pause: its pieces up to it, each with its last ``back_off_ms`` cut
    away, joined by ``JOIN_S`` of silence, with ``TAIL_S`` of silence after."""
    cut = int(round(back_off_ms * SAMPLE_RATE / 1000))
    join, tail = np.zeros(int(JOIN_S * SAMPLE_RATE), np.float32), np.zeros(int(TAIL_S * SAMPLE_RATE), np.float32)
    out, so_far = [], []
    for piece in pieces[:-1]:
        so_far += [piece[: max(1, len(piece) - cut)], join]
        out.append(np.concatenate(so_far[:-1] + [tail]))
    return out


def main(argv=None) -> None:
    from fdenv.render.renderer import Renderer
    from fdenv.render.voices import voice_map
    from fdenv.scene.sets import load_set
    from fdenv_agents.cascade.agent import DEFAULT_NAME
    from fdenv_agents.cascade.asr import WhisperTranscriber, name_prompt

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="val", choices=["train", "val", "test", "all"])
    ap.add_argument("--tts", nargs="+", default=["kokoro", "espeak"], choices=["kokoro", "espeak"])
    ap.add_argument("--back-off", nargs="+", type=float, default=[0, 40, 80, 120], metavar="MS")
    ap.add_argument("--limit", type=int, default=None, help="the first N pause scenes of the split")
    ap.add_argument("--show", action="store_true", help="print every leaking pause")
    args = ap.parse_args(argv)
    if any(ms < 0 for ms in args.back_off):
        ap.error(f"--back-off {args.back_off}: milliseconds to cut, 0 or more")
    if args.limit is not None and args.limit < 1:
        ap.error(f"--limit {args.limit}: at least one scene")
    asr = WhisperTranscriber("tiny.en")
    prompt = name_prompt(DEFAULT_NAME)
    scenes = load_set("pause", args.split)[: args.limit]
    print("| voices | pauses | " + " | ".join(f"leak / whole, cut {ms:g} ms earlier" for ms in args.back_off)
          + " |\n|---|---|" + "---|" * len(args.back_off))
    for tts in args.tts:
        renderer = Renderer(tts, SAMPLE_RATE)
        counts, wholes, n = {ms: 0 for ms in args.back_off}, {ms: 0 for ms in args.back_off}, 0
        for scene in scenes:
            voices = voice_map(scene, renderer)
            for turn in scene.turns:
                texts = [p.text for p in turn.pieces]
                if len(texts) < 2:
                    continue
                audio = [p.audio for p in renderer.turn(texts, voices[turn.speaker])]
                n += len(texts) - 1
                for ms in args.back_off:
                    for i, heard in enumerate(prefixes(audio, ms)):
                        text = asr.transcribe(heard, prompt)
                        wholes[ms] += whole(text, texts[i])
                        if leaks(text, texts[i], texts[i + 1]):
                            counts[ms] += 1
                            if args.show:
                                print(f"  {tts} {scene.id} -{ms:g} ms: ... {texts[i][-30:]} [pause] {texts[i + 1][:20]} "
                                      f"...: heard {text[-40:]!r}")
        print(f"| {tts} | {n} | " + " | ".join(f"{counts[ms]} / {wholes[ms]}" for ms in args.back_off) + " |",
              flush=True)


if __name__ == "__main__":
    main()
