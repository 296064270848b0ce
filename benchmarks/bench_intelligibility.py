"""How well a small recogniser understands the simulated humans, per room preset.

    python benchmarks/bench_intelligibility.py [--tts kokoro] [--per-set 5] [--seeds 0,1] [--rooms all] [--asr tiny.en] [--by-voice]
    python benchmarks/bench_intelligibility.py --rooms kitchen --set noise=none --set 'noise_sources=[]'
    python benchmarks/bench_intelligibility.py --names [--rooms anechoic,office] [--max-requests 80] [--name-free 120]
    python benchmarks/bench_intelligibility.py --voices [--rooms kitchen] [--sentences 24]
    python benchmarks/bench_intelligibility.py --rooms car_cabin,office,anechoic --split val --seeds 0 --enhance-db 6,12,18

For each room preset, the first ``--per-set`` test scenes (``--split``) of every shipped set are played with a
silent assistant (``behaviour=paper``: no human talks over another, so each turn is heard on its
own; one episode per ``--seeds`` entry: each seed draws the room's geometry and noise anew). Every
human turn is cut from microphone 0 at its played times (0.1 s before, up to 0.25 s of
reverberation after, never into the next turn) and transcribed with Whisper
(``fdenv.score.asr.transcribe``) in two decodings (``DECODINGS``): Whisper's own (beam search with
5 beams, as Whisper is evaluated and faster-whisper's default beam size, with no fallback to
sampling; no voice-activity filter, since the turn is already cut at its played times) and the
scorer's (greedy, with faster-whisper's Silero VAD filter, chosen for word times on the
assistant's clean track: in loud noise the filter drops speech before Whisper hears it). Both at
temperature 0, so deterministic. The targets are read on Whisper's decoding. Word error rate:
word-level edit distance over the reference words, both normalised as the judges normalise
(``fdenv.score.text.normalise``: lower case, no punctuation, number words to digits), pooled over
all turns and seeds. Prints a Markdown table
with the targets. ``--enhance-db``: more columns, the cascade assistant's own recogniser
(``fdenv_agents.cascade.asr.WhisperTranscriber``: greedy, its voice-activity filter and its
initial prompt) as it is and with its speech enhancement (DeepFilterNet3) at each attenuation
limit, on the same turns, each heard as the cascade hands a turn to its recogniser, from its
``prefix_padding_ms`` (0.5 s) before the turn; ``--split val`` picks the limit on scenes the test
never plays.
``--set FIELD=VALUE`` (repeatable; the value read as JSON, else a string)
changes a field of every measured room, to see which part of a room costs how many words (its
reverberation alone, one noise source alone); the table's header then says it is not the presets.

``--names``: the rate at which the assistant's name is recognised, on every request of every test
split (a turn addressed to the assistant that says its name: ``T``, ``N4Q``, ``final``), each played
as a scene of its own (the scene's speakers, so the same voice; one turn) in each room; per name and
in all. Two recognisers hear the same audio: ``plain`` (the scorer's, no prompt) and ``prompted``
(the cascade assistant's recogniser with its own initial prompt,
``fdenv_agents.cascade.asr.name_prompt``: the name as a keyword). False alarms: of the turns of the
same scenes that do not say the name (``--name-free`` of them, evenly spaced), the share whose
transcript holds it. The name is matched as whole words after normalisation (no other spelling
counts).

``--voices``: every voice of the back end reads the same ``--sentences`` human turns (4-16 words,
evenly spaced over the train splits of every set), each played as a scene of its own in each room
(one draw of geometry and noise per sentence, the same for every voice); Whisper's decoding, word
error rate per voice. Unlike ``--by-voice``, where each voice speaks its own scenes' turns, this
compares voices on the same words in the same rooms.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from fdenv_agents.cascade.agent import DEFAULT_NAME as ASSISTANT, CascadeAgent  # noqa: E402
from fdenv_agents.cascade.asr import WhisperTranscriber, name_prompt  # noqa: E402  (the assistant's own)

PRESETS = ("anechoic", "office", "meeting_room", "living_room", "kitchen", "car_cabin")
TARGET_WER = {"anechoic": 0.12, "car_cabin": 0.35}  # the others: 0.25
PRE_S, POST_S = 0.10, 0.25
# the audio before a turn's start that the cascade hands its recogniser (its prefix_padding_ms);
# its speech enhancement settles on the noise in it (cut 0.1 s before, enhanced turns lost words)
CASCADE_PRE_S = inspect.signature(CascadeAgent).parameters["prefix_padding_ms"].default / 1000
# faster-whisper arguments over the scorer's (``fdenv.score.asr.DECODE``): see the docstring
DECODINGS = {"whisper": {"beam_size": 5, "vad_filter": False}, "scorer": {}}


def room_overrides(pairs: list[str]) -> dict:
    """``["noise=none", "noise_sources=[]"]`` -> ``{"noise": "none", "noise_sources": []}``: each
    value read as JSON, else kept as a string. The room checks the fields when it is built."""
    out = {}
    for pair in pairs:
        field, sep, value = pair.partition("=")
        if not sep or not field.strip():
            raise ValueError(f"--set: expected FIELD=VALUE (e.g. noise=none), got {pair!r}")
        try:
            out[field.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[field.strip()] = value
    return out


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    d = np.arange(len(hyp) + 1)
    for i, r in enumerate(ref, 1):
        prev, d[0] = d.copy(), i
        for j, h in enumerate(hyp, 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (r != h))
    return int(d[-1])


def scenes(per_set: int, split: str = "test"):
    from fdenv.scene import list_sets, load_set

    return [sc for name in list_sets() for sc in load_set(name, split)[:per_set]]


def play(scene, room: str, tts: str, sr: int = 16000, seed: int = 0):
    """(microphone 0, played turns) of one episode with a silent assistant."""
    from fdenv.sim.env import RoomEnv

    env = RoomEnv(scene=scene, room=room, tts=tts, behaviour="paper", sample_rate=sr)
    obs, info = env.reset(seed=seed)
    frames, done = [obs[0]], False
    silence = np.zeros(env.frame_samples, np.float32)
    while not done:
        obs, _, done, _, info = env.step(silence)
        frames.append(obs[0])
    env.close()
    return np.concatenate(frames), info["record"].turns


def measure(room: str, tts: str, scene_list, asr: str, sr: int = 16000, seeds=(0,), cascade: dict | None = None
            ) -> dict:
    """Per decoding (``DECODINGS``): word error rate and words, pooled over ``scene_list`` x
    ``seeds``; ``by_voice``: the same for Whisper's decoding per TTS voice (the voice each turn's
    speaker has, ``voice_map``); ``asr_s``: the recogniser's seconds, all decodings. ``cascade``:
    more recognisers, by name, each a ``WhisperTranscriber`` (the cascade's own decoding, with its
    initial prompt for the default assistant name), measured on the same turns, each heard from
    ``CASCADE_PRE_S`` before its start, as the cascade hands its recogniser a turn."""
    from fdenv.render import voice_map
    from fdenv.score.asr import transcribe
    from fdenv.score.text import normalise

    hear = {k: (PRE_S, lambda x, decode=decode: " ".join(w.text for w in transcribe(x, model=asr, snap=False,
                                                                                   decode=decode)))
            for k, decode in DECODINGS.items()}
    hear |= {k: (CASCADE_PRE_S, lambda x, r=r: r.transcribe(x, name_prompt(ASSISTANT)))
             for k, r in (cascade or {}).items()}
    counts = {k: {"errors": 0, "words": 0} for k in hear}
    by_voice: dict[str, dict] = {}
    asr_s = 0.0
    for seed in seeds:
        for scene in scene_list:
            voices = voice_map(scene, tts)
            mic, turns = play(scene, room, tts, sr, seed)
            starts = sorted(t.start for t in turns)
            for t in turns:
                later = [s for s in starts if s > t.start + 1e-6]
                stop = min(t.end + POST_S, (later[0] - 0.02) if later else t.end + POST_S)
                ref = normalise(t.text)
                for k, (pre_s, recognise) in hear.items():
                    x = mic[max(0, int((t.start - pre_s) * sr)) : int(max(stop, t.end) * sr)]
                    c = time.perf_counter()
                    hyp = normalise(recognise(x))
                    asr_s += time.perf_counter() - c
                    errors = edit_distance(ref, hyp)
                    tallies = [counts[k]]
                    if k == "whisper":
                        tallies.append(by_voice.setdefault(voices[t.speaker], {"errors": 0, "words": 0}))
                    for n in tallies:
                        n["errors"] += errors
                        n["words"] += len(ref)

    def rate(n):
        return {"wer": n["errors"] / max(1, n["words"]), "words": n["words"]}

    return {"asr_s": asr_s, "by_voice": {v: rate(n) for v, n in sorted(by_voice.items())},
            **{k: rate(n) for k, n in counts.items()}}


def holds(tokens: list[str], name: list[str]) -> bool:
    """Whether the normalised ``tokens`` hold the normalised ``name`` as whole words, in order."""
    n = len(name)
    return n > 0 and any(tokens[i : i + n] == name for i in range(len(tokens) - n + 1))


def one_turn(sc, t):
    """``t`` of scene ``sc`` played as a scene of its own (the scene's speakers, so the same voice)."""
    from dataclasses import replace

    turn = replace(t, label="ctx", addressee=None, gold_answer=None, gold_facts=None, pair_id=None,
                   resolves=None, gap_s=0.3)
    return replace(sc, id=f"{sc.id}-{t.id}", kind="custom", turns=(turn,), duty="", condition=None,
                   pair_id=None, bc_distribution=None)


def spaced(items: list, limit: int | None) -> list:
    """At most ``limit`` of ``items``, evenly spaced over the list."""
    if limit is not None and limit < len(items):
        items = [items[int(i)] for i in np.linspace(0, len(items) - 1, limit).round()]
    return items


def requests(limit: int | None = None):
    """One-turn scenes: every request of every test split that says the assistant's name (at most
    ``limit``, evenly spaced over that list)."""
    from fdenv.scene import list_sets, load_set
    from fdenv.score.text import normalise

    out = []
    for name in list_sets():
        for sc in load_set(name, "test"):
            nm = normalise(sc.assistant_name)
            for t in sc.turns:
                if t.addressee == sc.assistant_name and holds(normalise(t.spoken_text), nm):
                    out.append(one_turn(sc, t))
    return spaced(out, limit)


def name_free(limit: int | None = None, request_list=None):
    """One-turn scenes: the turns of the requests' own scenes that do not say the assistant's name
    (other humans' turns, turns to the assistant without its name; at most ``limit``, evenly spaced).
    Where the recogniser writes the name in one of these, it heard a name nobody said."""
    from fdenv.scene import list_sets, load_set
    from fdenv.score.text import normalise

    ids = {sc.id for sc in (requests() if request_list is None else request_list)}
    out = []
    for name in list_sets():
        for sc in load_set(name, "test"):
            if any(f"{sc.id}-{t.id}" in ids for t in sc.turns):
                nm = normalise(sc.assistant_name)
                out += [one_turn(sc, t) for t in sc.turns if not holds(normalise(t.spoken_text), nm)]
    return spaced(out, limit)


RECOGNISERS = ("plain", "prompted")


def recognisers(asr: str) -> dict:
    """name -> hear(audio16k, assistant_name) -> normalised tokens. ``plain``: the scorer's
    recogniser (``fdenv.score.asr.transcribe``), no prompt. ``prompted``: the cascade assistant's
    own recogniser with its own initial prompt (``name_prompt``), as the shipped assistant hears."""
    from fdenv.score.asr import transcribe
    from fdenv.score.text import normalise

    cascade = WhisperTranscriber(asr)
    return {"plain": lambda x, name: normalise(" ".join(w.text for w in transcribe(x, model=asr, snap=False))),
            "prompted": lambda x, name: normalise(cascade.transcribe(x, name_prompt(name)))}


def cut(scene, room: str, tts: str, sr: int = 16000) -> np.ndarray:
    """The one turn of a one-turn scene, from microphone 0 (0.1 s before, 0.25 s after)."""
    mic, turns = play(scene, room, tts, sr)
    t = turns[0]
    return mic[max(0, int((t.start - PRE_S) * sr)) : int((t.end + POST_S) * sr)]


def names(room: str, tts: str, hear: dict, request_list, free_list, audio=cut) -> dict:
    """Per recogniser: per assistant name (requests, recognised) and what was written instead;
    false alarms: name-free turns whose transcript holds the name (with the transcripts)."""
    from fdenv.score.text import normalise

    out = {k: {"per": {}, "instead": {}, "alarms": [], "free": 0} for k in hear}
    for scene in request_list:
        x = audio(scene, room, tts)
        ref, nm = normalise(scene.turns[0].text), normalise(scene.assistant_name)
        for k, fn in hear.items():
            hyp = fn(x, scene.assistant_name)
            ok = holds(hyp, nm)
            n = out[k]["per"].setdefault(scene.assistant_name, [0, 0])
            n[0] += 1
            n[1] += ok
            if not ok:
                i = ref.index(nm[0])
                key = f"{scene.assistant_name}: {' '.join(hyp[max(0, i - 1) : i + 2])}"
                out[k]["instead"][key] = out[k]["instead"].get(key, 0) + 1
    for scene in free_list:
        x = audio(scene, room, tts)
        nm = normalise(scene.assistant_name)
        if holds(normalise(scene.turns[0].text), nm):
            raise ValueError(f"{scene.id}: a name-free turn says the name {scene.assistant_name!r}")
        for k, fn in hear.items():
            hyp = fn(x, scene.assistant_name)
            out[k]["free"] += 1
            if holds(hyp, nm):
                out[k]["alarms"].append(f"{scene.id}: {' '.join(hyp)}")
    for m in out.values():
        m["instead"] = sorted(m["instead"].items(), key=lambda kv: -kv[1])
    return out


def sentences(limit: int) -> list:
    """One-turn scenes of human turns of 4-16 words from the train splits of every set (never a
    duty preamble), ``limit`` of them, evenly spaced."""
    from fdenv.scene import list_sets, load_set

    out = [one_turn(sc, t) for name in list_sets() for sc in load_set(name, "train") for t in sc.turns
           if t.label != "duty" and 4 <= len(t.spoken_text.split()) <= 16]
    return spaced(out, limit)


def read_by(sc, voice: str):
    """The one-turn scene ``sc`` with its speaker's voice pinned to ``voice``."""
    from dataclasses import replace

    who = sc.turns[0].speaker
    return replace(sc, speakers=tuple(replace(s, voice=voice) if s.name == who else s for s in sc.speakers))


def voices_wer(room, tts: str, sentence_list, hear, voices, audio=cut) -> dict:
    """voice -> {"wer", "words"}: ``hear(audio) -> normalised tokens`` on each of ``sentence_list``
    read by each voice in ``room``."""
    from fdenv.score.text import normalise

    out = {}
    for v in voices:
        errors = words = 0
        for sc in sentence_list:
            ref = normalise(sc.turns[0].spoken_text)
            errors += edit_distance(ref, hear(audio(read_by(sc, v), room, tts)))
            words += len(ref)
        out[v] = {"wer": errors / max(1, words), "words": words}
    return out


def main_voices(rooms, tts: str, asr: str, n: int) -> None:
    from fdenv.render import get_backend
    from fdenv.score.asr import transcribe
    from fdenv.score.text import normalise

    voices = tuple(get_backend(tts).voices())
    sentence_list = sentences(n)

    def hear(x):
        return normalise(" ".join(w.text for w in transcribe(x, model=asr, snap=False, decode=DECODINGS["whisper"])))

    print(f"{len(sentence_list)} train sentences read by each of {len(voices)} voices, tts={tts}, asr={asr}, "
          f"Whisper's decoding {DECODINGS['whisper']}")
    for room in rooms:
        t = time.perf_counter()
        m = voices_wer(room, tts, sentence_list, hear, voices)
        print(f"| {room} | " + ", ".join(f"{v} {r['wer']:.3f}" for v, r in m.items())
              + f" | {m[voices[0]]['words']} words each |  <!-- {time.perf_counter() - t:.0f} s -->", flush=True)


def main_names(rooms, tts: str, asr: str, limit: int | None, free_limit: int) -> None:
    req = requests(limit)
    free = name_free(free_limit, req)
    print(f"{len(req)} of the {len(requests())} requests that say the name (every test split); "
          f"{len(free)} of the {len(name_free(None, req))} turns of their scenes that do not say it; "
          f"tts={tts}, asr={asr}, seed 0; prompt: {name_prompt('<name>')!r}")
    hear = recognisers(asr)
    for room in rooms:
        t = time.perf_counter()
        res = names(room, tts, hear, req, free)
        for k, m in res.items():
            total = [sum(v[0] for v in m["per"].values()), sum(v[1] for v in m["per"].values())]
            cells = ", ".join(f"{n} {v[1]}/{v[0]}" for n, v in sorted(m["per"].items()))
            fa = len(m["alarms"])
            print(f"{room}, {k}: recognised {total[1]}/{total[0]} = {total[1] / max(1, total[0]):.0%} ({cells}); "
                  f"false alarms {fa}/{m['free']} = {fa / max(1, m['free']):.1%}")
            print("  missed, written as: " + "; ".join(f"{a!r} x{v}" for a, v in m["instead"][:12]))
            for a in m["alarms"]:
                print(f"  false alarm: {a}")
        print(f"  <!-- {room}: {time.perf_counter() - t:.0f} s -->", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tts", default="kokoro", choices=("espeak", "kokoro"))
    ap.add_argument("--per-set", type=int, default=5, help="scenes of each shipped set, from --split (default 5)")
    ap.add_argument("--split", default="test", choices=("train", "val", "test"),
                    help="the scenes' split (default test; pick a setting on val)")
    ap.add_argument("--enhance-db", default=None, metavar="DB,...",
                    help="also the cascade's own recogniser, as it is and with its speech enhancement at each "
                         "attenuation limit (DeepFilterNet3), on the same turns")
    ap.add_argument("--seeds", default="0,1", help="episode seeds, each a new draw of geometry and noise (default 0,1)")
    ap.add_argument("--rooms", default="all", help="comma-separated presets, or all")
    ap.add_argument("--asr", default="tiny.en")
    ap.add_argument("--noise", default=None, help="replace every room's diffuse noise with this kind "
                    "(e.g. pink), at the room's own SNR: to compare spectra (the same as --set noise=KIND)")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="change a field of every measured room (repeatable), e.g. --set 'noise_sources=[]'")
    ap.add_argument("--by-voice", action="store_true",
                    help="also print, per room, Whisper's decoding's word error rate for each TTS voice")
    ap.add_argument("--names", action="store_true", help="the name rate on the requests of the test splits")
    ap.add_argument("--max-requests", type=int, default=None, help="--names: at most this many, evenly spaced")
    ap.add_argument("--voices", action="store_true",
                    help="every voice reads the same train sentences in each room: word error rate per voice")
    ap.add_argument("--sentences", type=int, default=24, help="--voices: how many (default 24)")
    ap.add_argument("--name-free", type=int, default=120,
                    help="--names: at most this many turns without the name, for false alarms (default 120)")
    args = ap.parse_args(argv)
    rooms = PRESETS if args.rooms == "all" else tuple(args.rooms.split(","))
    try:
        changes = room_overrides(args.set)
    except ValueError as e:
        ap.error(str(e))
    if args.noise is not None:
        changes["noise"] = args.noise
    if args.names or args.voices:
        if changes:
            ap.error("--set and --noise change the rooms of the word error rate table only")
        if args.voices:
            return main_voices(rooms, args.tts, args.asr, args.sentences)
        return main_names(rooms, args.tts, args.asr, args.max_requests, args.name_free)
    if changes:  # fail on a bad field now, not after the first room's minutes of work
        from fdenv.room import RoomSpec

        for room in rooms:
            try:
                RoomSpec.from_config({"preset": room, **changes})
            except ValueError as e:
                ap.error(str(e))
    scene_list = scenes(args.per_set, args.split)
    try:
        seeds = tuple(int(x) for x in args.seeds.split(","))
        limits = [] if args.enhance_db is None else [float(x) for x in args.enhance_db.split(",")]
    except ValueError:
        ap.error(f"--seeds, --enhance-db: comma-separated numbers, got {args.seeds!r}, {args.enhance_db!r}")
    try:
        cascade = {"the cascade's": WhisperTranscriber(args.asr)} if limits else {}
        cascade |= {f"enhanced, {db:g} dB": WhisperTranscriber(args.asr, enhance_db=db) for db in limits}
    except ValueError as e:
        ap.error(f"--enhance-db: {e}")
    print(f"{len(scene_list)} {args.split} scenes ({args.per_set} per set) x seeds {list(seeds)}, tts={args.tts}, "
          f"asr={args.asr}, behaviour=paper; decodings {DECODINGS}"
          + (f"; every room changed: {json.dumps(changes)} (not the presets)" if changes else ""))
    more = "".join(f" WER, {k} |" for k in cascade)
    print(f"| room | WER | WER, scorer's decoding |{more} target | words |")
    print("|---|---|---|" + "---|" * len(cascade) + "---|---|")
    for room in rooms:
        t = time.perf_counter()
        m = measure({"preset": room, **changes} if changes else room, args.tts, scene_list, args.asr, seeds=seeds,
                    cascade=cascade)
        w, sc = m["whisper"], m["scorer"]
        wer_t = TARGET_WER.get(room, 0.25)
        ok = "yes" if w["wer"] <= wer_t else "NO"
        target = "- (a changed room)" if changes else f"<= {wer_t:.2f} {ok}"  # targets are the presets'
        cells = "".join(f" {m[k]['wer']:.3f} |" for k in cascade)
        print(f"| {room} | {w['wer']:.3f} | {sc['wer']:.3f} |{cells} {target} | {w['words']} |"
              f"  <!-- {time.perf_counter() - t:.0f} s, asr {m['asr_s']:.0f} s -->", flush=True)
        if args.by_voice:
            print(f"  {room}, by voice: " + ", ".join(f"{v} {r['wer']:.3f} ({r['words']})"
                                                      for v, r in m["by_voice"].items()), flush=True)


if __name__ == "__main__":
    main()
