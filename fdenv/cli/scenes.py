"""``fdenv-scenes``: generate the shipped scene sets, validate scene files, list sets, render clips.

    fdenv-scenes generate all                 # rewrite scenes/<set>/ for every set
    fdenv-scenes generate mpe --n 200 --out /tmp/scenes
    fdenv-scenes mpe --backend claude --n 20 --out /tmp/scenes   # MPE scenes written by Claude
    fdenv-scenes validate scenes/ my_scene.yaml
    fdenv-scenes list
    fdenv-scenes render pause --split test    # TTS clips into the clip cache, so runs start warm
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _generate(args) -> int:
    from ..scene.generate import SET_NAMES, write_set
    from ..scene.sets import scenes_dir

    names = list(SET_NAMES) if args.set == "all" else [args.set]
    if args.set != "all" and args.set not in SET_NAMES:
        print(f"fdenv-scenes generate: unknown set {args.set!r}; choose one of {list(SET_NAMES)} or 'all'", file=sys.stderr)
        return 2
    if args.n is not None and args.set == "all":
        print("fdenv-scenes generate: --n applies to one set; give a set name with --n", file=sys.stderr)
        return 2
    if args.n is not None and args.n < 1:
        print("fdenv-scenes generate: --n must be at least 1", file=sys.stderr)
        return 2
    backend = getattr(args, "backend", "template")
    if backend != "template" and names != ["mpe"]:
        print(f"fdenv-scenes generate: --backend {backend} applies to the mpe set only", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else scenes_dir()
    for name in names:
        if name == "mpe":
            code = _generate_mpe(args, out)
            if code:
                return code
            continue
        folder, made, removed = write_set(name, out, n=args.n, seed=args.seed)
        extra = f", removed {len(removed)} stale file(s)" if removed else ""
        print(f"{name}: {len(made.scenes)} scenes -> {folder}{extra}")
    return 0


def _generate_mpe(args, out: Path) -> int:
    """The mpe set from the template back end (``scenes/mpe/``) or from Claude (``OUT/<name>/``)."""
    from ..scene.generate import mpe

    backend = getattr(args, "backend", "template")
    if backend == "template":
        name = getattr(args, "name", None) or "mpe"
        if name != "mpe":
            print("fdenv-scenes: --name applies to the claude back end; the template set is 'mpe'", file=sys.stderr)
            return 2
        from ..scene.generate import mpe_files

        files, scenes, _ = mpe_files(args.n, args.seed)
    else:
        from ..scene.generate import mpe_llm

        name = getattr(args, "name", None) or mpe_llm.SET_NAME
        n = args.n or 20
        try:
            from ..score.facts import gold_problems  # the offline judge must read the gold answer's own facts

            writer = mpe_llm.ClaudeSceneWriter(model=args.model or mpe_llm.DEFAULT_MODEL, max_attempts=args.max_attempts,
                                               gold_check=gold_problems)
            files, scenes, _ = mpe_llm.generate_claude_set(n, args.seed, name=name, writer=writer)
        except mpe_llm.GenerationError as e:
            print(f"fdenv-scenes: {e}", file=sys.stderr)
            return 1
        retried = sum(1 for entry in writer.log if entry["rejected"])
        cached = sum(1 for entry in writer.log if entry["cached"])
        print(f"{name}: {cached} pair(s) from the cache, {retried} needed another attempt")
    folder = out / name
    removed = mpe.write_files(folder, files, name)
    extra = f", removed {len(removed)} stale file(s)" if removed else ""
    print(f"{name}: {len(scenes)} scenes -> {folder}{extra}")
    return 0


def _scene_files(paths: list[str]) -> tuple[list[Path], list[str]]:
    files, missing = [], []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files.extend(f for f in sorted(path.rglob("*.y*ml")) if f.suffix in (".yaml", ".yml") and f.name != "manifest.yaml")
        elif path.is_file():
            files.append(path)
        else:
            missing.append(p)
    return files, missing


def known_voices() -> set[str]:
    """Every voice of every TTS back end (their lists need no model)."""
    from ..render.registry import BACKENDS, get_backend

    return {v for name in BACKENDS for v in get_backend(name).voices()}


def _validate(args) -> int:
    import yaml

    from ..scene.load import SceneError, load_scene

    files, missing = _scene_files(args.paths)
    bad = 0
    for m in missing:
        print(f"{m}: file: no such file or folder")
        bad += 1
    ids: dict[str, Path] = {}
    for f in files:
        try:
            scene = load_scene(f)
        except SceneError as e:
            print(e)
            bad += 1
            continue
        # ids are unique per collection of sets (scenes/, scenes/v1/): each version keeps its ids
        key = (f.parent.parent.resolve(), scene.id) if (f.parent / "manifest.yaml").is_file() else scene.id
        if key in ids:
            print(f"{f}: id: duplicate scene id {scene.id!r} (also in {ids[key]})")
            bad += 1
        ids[key] = f
        pinned = [(f"speakers[{i}].voice", s.voice) for i, s in enumerate(scene.speakers)] + [("duty_voice", scene.duty_voice)]
        for field, voice in pinned:
            if voice is not None and voice not in known_voices():
                print(f"{f}: {field}: unknown voice {voice!r}; no TTS back end has it (valid: {', '.join(sorted(known_voices()))})")
                bad += 1
    # a folder with a manifest: every listed scene has its file, and every file is listed
    for p in args.paths:
        for man in ([Path(p) / "manifest.yaml"] + sorted(Path(p).glob("*/manifest.yaml"))) if Path(p).is_dir() else []:
            if not man.is_file():
                continue
            try:
                listed = (yaml.safe_load(man.read_text(encoding="utf-8")) or {}).get("scenes") or {}
            except (yaml.YAMLError, AttributeError) as e:
                print(f"{man}: manifest: not a valid manifest ({e})")
                bad += 1
                continue
            present = {f.stem for f in man.parent.glob("*.yaml") if f.name != "manifest.yaml"}
            for sid in listed:
                if sid not in present:
                    print(f"{man}: scenes.{sid}: listed but {man.parent / (str(sid) + '.yaml')} is missing")
                    bad += 1
            for sid in sorted(present - set(map(str, listed))):
                print(f"{man.parent / (sid + '.yaml')}: id: not listed in {man}")
                bad += 1
    n = len(files)
    print(f"checked {n} scene file{'s' if n != 1 else ''}: {'all valid' if not bad else f'{bad} problem(s)'}", file=sys.stderr)
    return 1 if bad else 0


def _list(args) -> int:
    from ..scene.sets import list_sets, load_manifest, scenes_dir

    base = scenes_dir()
    sets = list_sets(base)
    if not sets:
        print(f"no scene sets under {base}")
        return 1
    for name in sets:
        m = load_manifest(name, base)
        counts: dict = {}
        for split in m["scenes"].values():
            counts[split] = counts.get(split, 0) + 1
        splits = " ".join(f"{k}={counts.get(k, 0)}" for k in ("train", "val", "test"))
        print(f"{name:14s} kind={m.get('kind', '?'):13s} scenes={len(m['scenes']):5d}  {splits}")
    return 0


def render_jobs(renderer, scenes, keys: set[str] | None = None):
    """``(texts, voice, keys)`` of every distinct turn ``scenes`` play (scripted turns and the
    natural humans' own clips), each once; ``keys`` collects the piece keys seen."""
    from ..render import turn_clips, voice_map
    from ..sim.behaviour import unscripted_clips

    keys = set() if keys is None else keys
    for scene in scenes:
        voices = voice_map(scene, renderer)
        extras = [(text, voice) for _, text, voice in unscripted_clips(scene, voices)]  # natural humans' own
        turns = [([t for t, _ in pieces], pieces[0][1]) for pieces in turn_clips(scene, voices)]
        for texts, voice in turns + [([text], voice) for text, voice in extras]:  # a turn is one utterance
            turn_keys = renderer.turn_keys(texts, voice)
            if turn_keys[0] in keys:
                continue
            keys.update(turn_keys)
            yield texts, voice, turn_keys


def uncached(tts: str, sets, split: str, sample_rate: int = 16000) -> tuple[int, int]:
    """(pieces not on disk, pieces) of every clip the ``sets``' ``split`` scenes play with ``tts``:
    what a run would synthesise as it goes (``fdenv-scenes render`` puts them there first)."""
    from ..render import Renderer
    from ..scene import load_set

    renderer = Renderer(tts, sample_rate)
    missing = total = 0
    for name in sets:
        for _, _, keys in render_jobs(renderer, load_set(name, split)):
            total += len(keys)
            missing += sum(not renderer.on_disk(k) for k in keys)
    return missing, total


def _render_set(renderer, name: str, scenes) -> tuple[int, int, int, int]:
    """Distinct clips of ``scenes``: how many, rendered now, on disk already, not writable to disk.
    A clip this process holds in memory but the disk lacks is written, so the next process finds it."""
    from tqdm import tqdm

    keys: set[str] = set()
    rendered = cached = unwritten = 0
    bar = tqdm(scenes, desc=name, unit="scene", leave=False, disable=None)  # no bar off a terminal
    for texts, voice, turn_keys in render_jobs(renderer, bar, keys):
        if all(renderer.on_disk(k) for k in turn_keys):
            cached += len(turn_keys)
            continue
        for piece in renderer.turn(texts, voice):
            unwritten += not renderer.save(piece)  # the cache warned once why
            rendered += 1
    return len(keys), rendered, cached, unwritten


def _render(args) -> int:
    """Every clip of a set's scenes into the on-disk clip cache; counts what was already there."""
    from ..render import BACKENDS, Renderer, TTSError
    from ..scene import SceneError, load_set
    from ..scene.sets import SPLIT_CHOICES, list_sets, scenes_dir
    from ..sim.options import SAMPLE_RATES

    err = None
    if args.split not in SPLIT_CHOICES:
        err = f"unknown split {args.split!r}; choose one of {list(SPLIT_CHOICES)}"
    elif args.tts not in BACKENDS:
        err = f"unknown TTS back end {args.tts!r}; choose one of {list(BACKENDS)}"
    elif args.sample_rate not in SAMPLE_RATES:
        err = f"--sample-rate {args.sample_rate}: fdenv steps at one of {list(SAMPLE_RATES)} Hz"
    names = list_sets() if args.set == "all" else [args.set]
    sets = {}
    for name in names if err is None else []:
        try:
            sets[name] = load_set(name, args.split)
        except SceneError as e:  # a broken file of a known set: a data problem, as in `validate`
            print(f"fdenv-scenes render: {e}", file=sys.stderr)
            return 1
        except ValueError as e:  # an unknown set
            err = str(e)
            break
    if err is None and not names:
        err = f"no scene sets under {scenes_dir()}; generate them with `fdenv-scenes generate all`"
    if err is not None:
        print(f"fdenv-scenes render: {err}", file=sys.stderr)
        return 2
    renderer = Renderer(args.tts, args.sample_rate)
    total = [0, 0, 0, 0, 0]  # scenes, clips, rendered, cached, unwritten
    t0 = time.perf_counter()
    for name, scenes in sets.items():
        t = time.perf_counter()
        try:
            counts = (len(scenes), *_render_set(renderer, name, scenes))
        except TTSError as e:  # back end not installed, a voice it lacks, silent output
            print(f"fdenv-scenes render: {name}: {e}", file=sys.stderr)
            return 1
        total = [a + b for a, b in zip(total, counts)]
        print(f"{name}/{args.split}: {counts[0]} scenes, {counts[1]} clips ({args.tts}, {args.sample_rate} Hz): "
              f"{counts[2]} rendered, {counts[3]} already cached, {time.perf_counter() - t:.2f} s")
    if len(sets) > 1:
        print(f"all/{args.split}: {total[0]} scenes, {total[1]} clips ({args.tts}, {args.sample_rate} Hz): "
              f"{total[2]} rendered, {total[3]} already cached, {time.perf_counter() - t0:.2f} s")
    if total[4]:
        print(f"fdenv-scenes render: {total[4]} clip(s) could not be written under {renderer.cache.clip_dir}; "
              "later runs will render them again", file=sys.stderr)
        return 1
    print(f"clip cache: {renderer.cache.clip_dir}")
    return 0


def _mpe_options(p) -> None:
    p.add_argument("--backend", choices=("template", "claude"), default="template",
                   help="mpe only: deterministic templates (default) or Claude through the anthropic SDK (needs ANTHROPIC_API_KEY; "
                        "answers are cached under $FDENV_CACHE_DIR/scenes)")
    p.add_argument("--model", help="claude back end: the model (default: fdenv.scene.generate.mpe_llm.DEFAULT_MODEL)")
    p.add_argument("--name", help="claude back end: the set's folder and id prefix (default mpe_claude)")
    p.add_argument("--max-attempts", type=int, default=3, help="claude back end: answers per scene before giving up (default 3)")


def build_parser() -> argparse.ArgumentParser:
    from ..scene.generate import SET_NAMES

    p = argparse.ArgumentParser(prog="fdenv-scenes", description="Generate, validate, list and render fdenv scene sets.")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write a shipped set (or all) from its template generator")
    g.add_argument("set", help=f"one of {', '.join(SET_NAMES)}, or 'all'")
    g.add_argument("--out", help="root folder; the set goes to OUT/<set>/ (default: the shipped scenes folder)")
    g.add_argument("--n", type=int, help="number of scenes (mpe: pairs); default: the set's shipped size")
    g.add_argument("--seed", type=int, default=0, help="generator seed (default 0, the shipped sets)")
    _mpe_options(g)
    g.set_defaults(func=_generate)
    m = sub.add_parser("mpe", help="write the multi-party (MPE) set: template or Claude back end")
    m.add_argument("--out", help="root folder; the set goes to OUT/<name>/ (default: the shipped scenes folder)")
    m.add_argument("--n", type=int, help="number of explicit/implicit pairs (default: 200 template, 20 claude)")
    m.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    _mpe_options(m)
    m.set_defaults(func=_generate, set="mpe")
    v = sub.add_parser("validate", help="check scene files; one line per problem, exit 1 if any")
    v.add_argument("paths", nargs="+", metavar="PATH", help="scene .yaml files or folders (searched recursively)")
    v.set_defaults(func=_validate)
    ls = sub.add_parser("list", help="list the shipped sets with their sizes and splits")
    ls.set_defaults(func=_list)
    r = sub.add_parser("render", help="render every clip of a set's scenes into the clip cache, so later runs start warm")
    r.add_argument("set", help="a set name (see `fdenv-scenes list`), or 'all'")
    r.add_argument("--split", default="all", help="all (default), train, val or test")
    r.add_argument("--tts", default="espeak", help="TTS back end: espeak (default) or kokoro, as the env's tts=")
    r.add_argument("--sample-rate", type=int, default=16000, help="clip rate, as the env's sample_rate= (16000 or 24000)")
    r.set_defaults(func=_render)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
