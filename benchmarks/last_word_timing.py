"""Where does the recogniser put the last word of a phrase cut by a pause?

    python benchmarks/last_word_timing.py --split val [--tts kokoro] [--limit 30]

Each pause scene's words up to each of its pauses, and each turn-taking scene's final turn, are
synthesised in one voice (the first of the back end's voices, as the renderer cuts a turn's
pieces), followed by 0.3 s of digital silence (about when the turn detector first judges a
silence), with no room, and transcribed by the cascade's own recogniser (``WhisperTranscriber``:
Whisper tiny.en, greedy, its voice-activity filter) with word timestamps. Per silence: the last
word's end against the end of the speech, the last word's duration and its probability. Printed: each
silence, the medians per kind, and each measure's ROC AUC as a score of "a pause" (the end's
offset and the duration as they are, the probability reversed). A probe of a cue the turn-end
model does not have: timing comes from Whisper's cross-attention alignment, and a word Whisper
makes up to close a cut phrase tends to sit in the silence after the speech. Deterministic.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

RATE = 16000
TAIL_S = 0.3  # silence after the words, as when the turn detector first judges a silence


def silences(split: str, limit: int | None) -> list[tuple[str, str, list, int]]:
    """(kind, scene id, the turn's pieces, how many of them are heard before the silence) for each
    pause of the pause scenes and each final turn of the turn-taking scenes of ``split``
    (``limit`` scenes per set)."""
    from fdenv.train.envs import load_scenes

    out = []
    for sc in load_scenes(["pause"], split)[:limit]:
        for turn in (t for t in sc.turns if t.label == "pause"):
            out += [("pause", sc.id, turn.pieces, i + 1) for i, p in enumerate(turn.pieces) if p.silence_after_s > 0]
    for sc in load_scenes(["turn_taking"], split)[:limit]:
        out += [("end", sc.id, t.pieces, len(t.pieces)) for t in sc.turns if t.label == "final"]
    return out


def last_word(audio: np.ndarray, transcriber) -> tuple[str, float, float, float] | None:
    """The last word the cascade's recogniser (``transcriber``) hears in ``audio`` (16 kHz), as
    ``(word, start s, end s, probability)``, or None."""
    words = transcriber.timed_words(audio)
    return words[-1] if words else None


def measure(tts: str, split: str, limit: int | None) -> list[dict]:
    from fdenv.render.renderer import Renderer
    from fdenv_agents.cascade.asr import WhisperTranscriber

    renderer, transcriber = Renderer(tts, sample_rate=RATE), WhisperTranscriber()
    voice = sorted(renderer.voices)[0]
    rows = []
    for kind, scene, pieces, heard in silences(split, limit):
        # the whole turn in one piece, cut at its pauses (the words before a pause keep the prosody
        # of a phrase that goes on), the pieces heard with the script's silences between them
        audio = renderer.turn([p.text for p in pieces], voice)
        parts = []
        for p, a in zip(pieces[:heard], audio[:heard]):
            parts += [a.audio, np.zeros(int(p.silence_after_s * RATE), np.float32)]
        speech = np.concatenate(parts[:-1])  # up to the end of the last word heard
        w = last_word(np.concatenate([speech, np.zeros(int(TAIL_S * RATE), np.float32)]), transcriber)
        if w is None:
            continue
        word, start, end, probability = w
        rows.append({"kind": kind, "scene": scene, "said": " ".join(p.text for p in pieces[:heard]),
                     "heard_last": word, "end_offset_s": end - len(speech) / RATE, "duration_s": end - start,
                     "probability": probability})
    return rows


def summary(rows: list[dict]) -> list[str]:
    from fdenv.cli.turn_end import roc_auc

    y = np.array([r["kind"] == "pause" for r in rows], int)
    lines = []
    for kind in ("pause", "end"):
        group = [r for r in rows if r["kind"] == kind]
        if group:
            lines.append(f"{kind}: {len(group)} silences; median end offset "
                         f"{np.median([r['end_offset_s'] for r in group]):+.2f} s, duration "
                         f"{np.median([r['duration_s'] for r in group]):.2f} s, probability "
                         f"{np.median([r['probability'] for r in group]):.2f}")
    if 0 < y.sum() < len(y):
        aucs = {"end offset": [r["end_offset_s"] for r in rows], "duration": [r["duration_s"] for r in rows],
                "1 - probability": [1 - r["probability"] for r in rows]}
        lines.append("ROC AUC as a score of a pause: " + ", ".join(
            f"{name} {roc_auc(np.array(v), y):.3f}" for name, v in aucs.items()))
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="val", choices=["train", "val", "test"])
    ap.add_argument("--tts", default="kokoro")
    ap.add_argument("--limit", type=int, default=None, help="scenes per set (default: all in the split)")
    args = ap.parse_args(argv)
    rows = measure(args.tts, args.split, args.limit)
    for r in rows:
        print(f"{r['kind']:5} {r['scene']:18} {r['said'][-34:]!r:38} heard {r['heard_last']!r:14} "
              f"end {r['end_offset_s']:+.2f} s, {r['duration_s']:.2f} s long, p {r['probability']:.2f}")
    print("\n".join(summary(rows)))


if __name__ == "__main__":
    main()
