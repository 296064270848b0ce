"""Template generators for the shipped scene sets.

``generate_set(name, n, seed)`` builds a whole set in memory (scene files and manifest, as text);
``write_set(name, out_root)`` writes it to ``out_root/<name>/``. Both are deterministic: the same
(name, n, seed) gives the same bytes on every machine, and scene ``i`` depends only on
(name, seed, i), so a larger ``n`` keeps the scenes (and splits) a smaller one had.

Sets: ``pause``, ``backchannel``, ``turn_taking``, ``interruption`` (Full-Duplex-Bench's four
dimensions, one scene per item), ``overlap`` (Full-Duplex-Bench v1.5's four overlap events) and ``mpe`` (Duplex-MPE multi-party scenes, ``n`` counts
explicit/implicit pairs). Splits are fixed at about 70/15/15 (train/val/test) by scene, or 4/1/1
by pair for ``mpe`` so that both members of a pair share a split.

No scored sentence repeats within a set (``variety.py``): scene ``i`` is drawn again (attempt 1,
2, ...) while one of its scored sentences was already used by scenes ``0..i-1``, so no sentence
repeats within a split and val/test share none with train; nor while another of its sentences
already occurs ``share_cap`` times in its split, so none takes more than 2 % of a turn type. Scene ``i`` therefore depends on
(set, seed, i) and the scenes before it: a larger ``n`` still keeps the scenes a smaller one had.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..load import scene_from_dict
from ..schema import LABELS, SILENCE_LABELS, markers
from . import backchannel, interruption, mpe, overlap, pause, turn_taking
from ._common import assign_splits, dump_yaml, flow_map, scene_rng
from .variety import SCORED_LABELS, sentences, share_cap

MAX_ATTEMPTS = 400  # draws of one scene before a generator is declared out of variety

GENERATORS = {
    "pause": pause,
    "backchannel": backchannel,
    "turn_taking": turn_taking,
    "interruption": interruption,
    "mpe": mpe,
    "overlap": overlap,
}
SET_NAMES = tuple(GENERATORS)
DEFAULT_SEED = 0
MANIFEST = "manifest.yaml"

_DESCRIPTIONS = {
    "pause": "FDB pause handling: a user turn with 1-3 mid-sentence pauses of 0.6-1.5 s; the assistant should not take the turn.",
    "backchannel": "FDB backchannel: a 60-110 word monologue with 4-8 TRPs; the assistant may backchannel, not take over.",
    "turn_taking": "FDB smooth turn-taking: context, then a final question with a short gold answer; the assistant should answer promptly.",
    "interruption": "FDB user interruption: a final request inviting a long answer, then an interrupt that changes it; the assistant should yield and answer the new request.",
    "mpe": "Duplex-MPE multi-party scenes in explicit/implicit pairs: answer the one T request, stay silent in N1/N2/N3, answer N4Q and yield at N4R.",
    "overlap": "Overlap behaviours (FDB v1.5): a request needing a long answer, and 1-4 s into the answer an interruption, a user backchannel, a side conversation or background speech; yield to the first, hold the floor through the others.",
}


@dataclass
class GeneratedSet:
    name: str
    n: int
    seed: int
    scenes: list[dict]
    splits: dict[str, str]  # scene id -> split
    files: dict[str, str] = field(default_factory=dict)  # file name -> text (scenes and manifest)

    @property
    def manifest(self) -> str:
        return self.files[MANIFEST]


def _check_name(name: str) -> None:
    if name not in GENERATORS:
        raise ValueError(f"unknown scene set {name!r}; generated sets are {list(SET_NAMES)}")


def generate_set(name: str, n: int | None = None, seed: int = DEFAULT_SEED) -> GeneratedSet:
    """Build set ``name``: ``n`` scenes (``mpe``: ``n`` pairs, 2n scenes), validated."""
    _check_name(name)
    gen = GENERATORS[name]
    n = gen.DEFAULT_N if n is None else int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    shares = getattr(gen, "SPLIT_SHARES", None) or assign_splits.__defaults__[0]
    split_of_item = assign_splits(n, shares)
    scenes: list[dict] = []
    splits: dict[str, str] = {}
    used: set[str] = set()
    counts: dict = {}  # (split, sentence) -> occurrences of an unscored sentence
    # caps from the default size, so that a set's first scenes do not depend on n
    default_splits = assign_splits(gen.DEFAULT_N, shares)
    caps = {sp: share_cap(default_splits.count(sp)) for sp, _ in shares}
    for i in range(n):
        sid = f"{name}-{i + 1:04d}"
        sp = split_of_item[i]
        blockers: Counter = Counter()
        for attempt in range(MAX_ATTEMPTS):
            rng = scene_rng(name, gen.VERSION, seed, i if attempt == 0 else f"{i}.{attempt}")
            made = gen.make_pair(i, rng, sid, seed=seed, used=used) if name == "mpe" else [gen.make(i, rng, sid, seed=seed)]
            said = sentences(made)
            scored = [x for lab, x in said if lab in SCORED_LABELS]
            other = [x for lab, x in said if lab not in SCORED_LABELS]
            blocked = [x for x in scored if x in used or scored.count(x) > 1] + \
                [x for x in other if counts.get((sp, x), 0) + other.count(x) > caps[sp]]
            if not blocked:
                break
            blockers.update(blocked)
        else:
            top = ", ".join(repr(x) for x, _ in blockers.most_common(3))
            raise RuntimeError(f"generator {name}: scene #{i} repeats a sentence in {MAX_ATTEMPTS} draws (most often {top}); "
                               f"its pools are too small for n={n}")
        used.update(scored)
        for x in other:
            counts[(sp, x)] = counts.get((sp, x), 0) + 1
        for d in made:
            scene_from_dict(d, source=f"generator {name} #{i}")  # a generator bug fails here, loudly
            scenes.append(d)
            splits[d["id"]] = split_of_item[i]
    out = GeneratedSet(name, n, seed, scenes, splits)
    for d in scenes:
        out.files[f"{d['id']}.yaml"] = dump_yaml(d)
    out.files[MANIFEST] = dump_yaml(_manifest(name, gen, n, seed, scenes, splits))
    return out


def _manifest(name, gen, n, seed, scenes, splits) -> dict:
    labels = {lab: 0 for lab in LABELS}
    n_markers = {"pause": 0, "trp": 0}
    n4_scenes = silence = 0
    for d in scenes:
        seen = set()
        for t in d["turns"]:
            labels[t["label"]] += 1
            seen.add(t["label"])
            silence += t["label"] in SILENCE_LABELS
            for m in markers(t["text"]):
                n_markers["trp" if m == "trp" else "pause"] += 1
        n4_scenes += "N4Q" in seen
    split_counts = {s: sum(1 for v in splits.values() if v == s) for s in ("train", "val", "test")}
    counts: dict = {"scenes": len(scenes)}
    if name == "mpe":
        counts["pairs"] = n
        counts["n4_scenes"] = n4_scenes
        counts["silence_windows"] = silence
    counts["splits"] = flow_map(split_counts)
    events = [d.get("attributes", {}).get("event") for d in scenes]
    if any(events):
        counts["events"] = flow_map({e: events.count(e) for e in dict.fromkeys(e for e in events if e)})
    counts["turns"] = flow_map({k: v for k, v in labels.items() if v})
    counts["markers"] = flow_map({k: v for k, v in n_markers.items() if v}) if any(n_markers.values()) else None
    if counts["markers"] is None:
        del counts["markers"]
    return {
        "set": name,
        "kind": gen.KIND,
        "description": _DESCRIPTIONS[name],
        "generator": flow_map({"name": f"fdenv.scene.generate.{gen.__name__.rsplit('.', 1)[-1]}", "version": gen.VERSION,
                               "seed": seed, "n": n}),
        "regenerate": f"fdenv-scenes generate {name} --out scenes/"
        + (f" --n {n}" if n != gen.DEFAULT_N else "") + (f" --seed {seed}" if seed != DEFAULT_SEED else ""),
        "counts": counts,
        "scenes": dict(splits),
    }


def write_set(name: str, out_root: str | Path, n: int | None = None, seed: int = DEFAULT_SEED) -> tuple[Path, GeneratedSet, list[str]]:
    """Write set ``name`` under ``out_root/<name>/``; scene files of this set that the new
    generation no longer has are removed. Returns (folder, the set, removed file names)."""
    made = generate_set(name, n, seed)
    folder = Path(out_root) / name
    folder.mkdir(parents=True, exist_ok=True)
    removed = []
    for old in sorted(folder.glob(f"{name}-*.yaml")):
        if old.name not in made.files:
            old.unlink()
            removed.append(old.name)
    for fname, text in made.files.items():
        path = folder / fname
        data = text.encode("utf-8")
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
    return folder, made, removed


def mpe_files(n: int | None = None, seed: int = DEFAULT_SEED) -> tuple[dict[str, str], list[dict], dict[str, str]]:
    """The template set ``mpe`` as files (scene YAML and the manifest with MPE's counts)."""
    made = generate_set(mpe.KIND, n, seed)
    regenerate = f"fdenv-scenes generate {mpe.KIND} --out scenes/" + (
        f" --n {made.n}" if made.n != mpe.DEFAULT_N else "") + (f" --seed {seed}" if seed != DEFAULT_SEED else "")
    man = mpe.manifest(mpe.KIND, made.scenes, made.splits, made.n, seed,
                       {"name": mpe.__name__, "version": mpe.VERSION, "seed": seed, "n": made.n}, regenerate,
                       _DESCRIPTIONS[mpe.KIND])
    files = {k: v for k, v in made.files.items() if k != MANIFEST}
    files[MANIFEST] = dump_yaml(man)
    return files, made.scenes, made.splits
