"""Voices: what one-piece turns do to prosody, silences inside clips, and the cost of a render.

    python benchmarks/bench_voices.py [--tts kokoro] [--per-set 3] [--pause-scenes 6]
    python benchmarks/bench_voices.py --tts kokoro --per-set 0 --pause-scenes 30   # prosody only

On the first ``--per-set`` test scenes of every shipped set, rendered fresh (a temporary clip
cache) at 16 kHz with the voice map's voices:

- render cost: seconds of synthesis per second of speech, and the whole corpus (every split of
  every set) extrapolated from it by its number of characters (the subset's seconds per character);
- the longest silence inside any clip (``fdenv.render.prosody.longest_inner_silence``) and how
  many clips hold one over 0.25 s;
- on the ``pause`` set's multi-piece turns: F0 over the last 300 ms of each piece before a
  ``[pause=S]`` over the piece's median F0, with the turn in one piece (as the env renders it)
  and with each piece spoken on its own (the old way); as the measure's reference on the same
  renders, the ratio at words inside a piece (a phrase that goes on, no pause) and at the end of
  a turn that is a statement (where a final fall belongs);
- on the same turns, as a judge trained on people's speech rather than on these voices: Smart
  Turn v3's P(complete) (``fdenv.train.smart_turn``) 0.25 s into the silence after each piece
  before a pause (the turn so far, as the turn detector first looks at it; one piece, and each
  piece alone) and after the turn's end. Dry renders, no room.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SR = 16000


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tts", default="kokoro", choices=("espeak", "kokoro"))
    ap.add_argument("--per-set", type=int, default=3, help="render cost and silences on this many test scenes per set (0: skip)")
    ap.add_argument("--pause-scenes", type=int, default=6)
    args = ap.parse_args(argv)
    os.environ["FDENV_CACHE_DIR"] = tempfile.mkdtemp(prefix="fdenv-bench-voices-")

    from fdenv.render import Renderer

    r = Renderer(args.tts, SR)
    r.clip("Warm up.", r.voices[0])  # model load and graph edit are not part of the per-clip cost
    if args.per_set > 0:
        cost(r, args.tts, args.per_set)
    if args.pause_scenes > 0:
        pause_prosody(r, args.pause_scenes)


def cost(r, tts: str, per_set: int) -> None:
    from fdenv.render import turn_clips, voice_map
    from fdenv.render.prosody import longest_inner_silence
    from fdenv.scene import list_sets, load_set

    turns, chars = [], 0
    for name in list_sets():
        for scene in load_set(name, "test")[: per_set]:
            for pieces in turn_clips(scene, voice_map(scene, r)):
                turns.append(([t for t, _ in pieces], pieces[0][1]))
                chars += sum(len(t) for t, _ in pieces)
    t0, c0 = time.perf_counter(), time.process_time()
    rendered = [r.turn(texts, voice) for texts, voice in turns]
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    audio_s = sum(len(p.audio) for ps in rendered for p in ps) / SR
    gaps = [longest_inner_silence(p.audio, SR) for ps in rendered for p in ps]
    from fdenv.cli.scenes import render_jobs

    # what `fdenv-scenes render all` renders: every distinct turn once, the natural humans' own clips too
    corpus = sum(len(t) for texts, _, _ in render_jobs(r, [sc for n in list_sets() for sc in load_set(n, "all")])
                 for t in texts)
    print(f"{tts}: {len(turns)} turns, {len(gaps)} clips, {audio_s:.0f} s of speech, {chars} characters")
    print(f"  render: {wall:.1f} s wall ({wall / audio_s:.3f} x real time), {cpu:.1f} s CPU of this process "
          f"({cpu / audio_s:.3f} x real time)")
    print(f"  whole corpus ({corpus} characters, distinct clips of every split of every set): about "
          f"{corpus * wall / chars / 3600:.1f} h wall at this rate ({corpus * cpu / chars / 3600:.1f} h CPU)")
    print(f"  longest silence inside a clip: {max(gaps):.3f} s; clips over 0.25 s: {sum(g > 0.25 for g in gaps)}")


def pause_prosody(r, n_scenes: int) -> None:
    """End F0 / median F0 of the pieces before a pause (one piece, and each piece alone), and,
    as the measure's reference on the same one-piece renders, of prefixes ending at a word inside
    a piece (the phrase goes on, no pause, no punctuation) and of the turns' ends (statements)."""
    from fdenv.render import turn_clips, voice_map
    from fdenv.render.prosody import end_f0_ratio
    from fdenv.scene import load_set

    from fdenv.train.smart_turn import smart_turn_probability

    def heard_complete(audio: np.ndarray) -> float:  # 0.25 s into the silence after it
        x = np.concatenate([audio, np.zeros(int(0.25 * SR), np.float32)]).astype(np.float32)
        return smart_turn_probability(list(x[len(x) % 512:].reshape(-1, 512)))

    one, alone = [], []
    inner, last = [], []
    st_one, st_alone, st_end = [], [], []
    for scene in load_set("pause", "test")[:n_scenes]:
        for pieces in turn_clips(scene, voice_map(scene, r)):
            if len(pieces) < 2:
                continue
            texts, voice = [t for t, _ in pieces], pieces[0][1]
            said = r.turn(texts, voice)
            one += [end_f0_ratio(p.audio, SR) for p in said[:-1]]
            alone += [end_f0_ratio(r.clip(t, voice), SR) for t in texts[:-1]]
            if texts[-1].endswith("."):  # a statement's end: where a final fall belongs
                last.append(end_f0_ratio(said[-1].audio, SR))
            inner += [end_f0_ratio(p.audio[: int(w.end * SR)], SR) for p in said for w in p.words[:-1]
                      if w.end >= 0.8 and not w.text.endswith((",", ".", "?", "!", ";", ":"))]
            so_far = [np.concatenate([p.audio for p in said[: k + 1]]) for k in range(len(said))]
            st_one += [heard_complete(a) for a in so_far[:-1]]
            st_alone += [heard_complete(r.clip(t, voice)) for t in texts[:-1]]
            st_end.append(heard_complete(so_far[-1]))
    for label, v in (("one piece (the env)", one), ("each piece alone", alone),
                     ("reference: at a word inside a piece", inner), ("reference: a statement's end", last)):
        v = np.asarray(v)
        print(f"  end F0 / median F0, {label}: median {np.nanmedian(v):.2f}, "
              f"10-90 % [{np.nanpercentile(v, 10):.2f}, {np.nanpercentile(v, 90):.2f}], "
              f"under 0.85: {int((v < 0.85).sum())} of {len(v)}")
    for label, v in (("before a pause, one piece (the env)", st_one), ("before a pause, each piece alone", st_alone),
                     ("at the turn's end", st_end)):
        v = np.asarray(v)
        print(f"  Smart Turn P(complete), {label}: median {np.median(v):.2f}, heard as complete (over 0.5): "
              f"{int((v > 0.5).sum())} of {len(v)}")


if __name__ == "__main__":
    main()
