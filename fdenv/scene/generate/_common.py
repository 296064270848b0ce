"""Shared pieces of the template generators: seeded randomness, word pools, numbers, YAML output.

Everything here is deterministic: a scene is a pure function of (set, seed, index), so a set can
grow (a larger ``n``) without changing the scenes it already had.
"""

from __future__ import annotations

import random
import re

import yaml

# ---------------------------------------------------------------------------------------------
# Randomness


def scene_rng(set_name: str, version: int, seed: int, index: int) -> random.Random:
    """The generator of scene ``index``: string seeds are hashed with SHA-512 by ``random``,
    so the stream is the same on every platform and Python version."""
    return random.Random(f"fdenv-scenes/{set_name}/v{version}/seed{seed}/{index}")


def pick(rng: random.Random, items):
    return items[rng.randrange(len(items))]


def chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def block_flag(set_name: str, seed: int, index: int, block: int = 10) -> bool:
    """True for exactly one index in each block of ``block`` consecutive indices (seeded).
    Used for exact proportions that stay fixed when a set grows (MPE: no N4 in 1 of 10)."""
    b = index // block
    r = random.Random(f"fdenv-scenes/{set_name}/block/seed{seed}/{b}")
    return r.randrange(block) == index % block


def assign_splits(n: int, shares=(("train", 0.70), ("val", 0.15), ("test", 0.15))) -> list[str]:
    """A fixed split for items 0..n-1, as close to ``shares`` as possible for every prefix:
    item i goes to the split furthest below its target share. Growing ``n`` keeps old items
    where they were."""
    counts = {name: 0 for name, _ in shares}
    out = []
    for i in range(n):
        name = max(shares, key=lambda s: (s[1] * (i + 1) - counts[s[0]], s[1]))[0]
        counts[name] += 1
        out.append(name)
    return out


def gap(rng: random.Random, lo: float = 0.2, hi: float = 0.7) -> float:
    """A turn gap on a 50 ms grid."""
    steps = int(round((hi - lo) / 0.05))
    return round(lo + 0.05 * rng.randint(0, steps), 2)


# ---------------------------------------------------------------------------------------------
# Word pools

NAMES = (
    "Maya", "Ben", "Priya", "Tom", "Lena", "Omar", "Sofia", "Jonas", "Aisha", "Daniel", "Mei",
    "Lucas", "Hannah", "Ravi", "Clara", "Diego", "Nora", "Felix", "Amara", "Sam", "Julia", "Kenji",
    "Rosa", "Ethan", "Layla", "Marco", "Ingrid", "Tariq", "Chloe", "Victor", "Zara", "Hugo",
    "Elena", "Kwame", "Lily", "Mateo", "Freya", "Arjun", "Grace", "Nico", "Yuki", "Leo", "Fatima",
    "Oscar", "Ruth", "Ali", "Emma", "Pablo", "Anya", "Theo", "Imani", "Jack", "Selin", "Noah",
    "Vera", "Dev", "Paula", "Isaac", "Mira", "Sean", "Lucia", "Max", "Nadia", "Carlos", "Beth",
    "Ivan", "Keiko", "Ahmed", "Tessa", "Milan",
)
ASSISTANT_NAMES = ("Aria", "Nova", "Juno", "Echo", "Orin", "Lumi", "Sage", "Tala", "Remy", "Kira")
DEVICES = (("Hey Siri", "Siri"), ("Alexa", "Alexa"), ("Hey Google", "Google"), ("Okay Google", "Google"))
NARRATOR = "Narrator"

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PLACES = (
    "the station", "the river", "the old market", "the library", "the park", "the harbour",
    "the town hall", "the museum", "the stadium", "the bakery on the corner", "the bridge",
    "the university", "the hospital", "the shopping centre", "the beach",
)
VENUES = (
    "the Thai place", "the little Italian restaurant", "the sushi bar", "the taco stand",
    "the Greek taverna", "the noodle shop", "the pizza place", "the Indian restaurant",
    "the burger joint", "the vegetarian café", "the Lebanese grill", "the ramen bar",
)
CITIES = (
    "Lisbon", "Vienna", "Kyoto", "Montreal", "Edinburgh", "Barcelona", "Prague", "Copenhagen",
    "Seoul", "Dublin", "Marrakesh", "Buenos Aires", "Istanbul", "Oslo", "Athens", "Melbourne",
)
RELATIVES = (
    "my sister", "my brother", "my mom", "my dad", "my aunt", "my uncle", "my cousin",
    "my grandmother", "my grandfather", "my neighbour", "my best friend", "my boss", "my roommate",
)
ANIMALS = ("dog", "cat", "rabbit", "parrot", "hamster", "tortoise", "puppy", "kitten")

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def num_word(n: int) -> str:
    """English words for 0..999."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        t, o = divmod(n, 10)
        return _TENS[t] + ("-" + _ONES[o] if o else "")
    h, r = divmod(n, 100)
    return _ONES[h] + " hundred" + (" and " + num_word(r) if r else "")


def say_num(n: int) -> str:
    """How a number is written in spoken text: words up to twenty, digits above."""
    return num_word(n) if n <= 20 else str(n)


def clock(minutes: int, style: str = "12h") -> str:
    """Minutes after midnight as spoken clock time: 'seven fifteen', 'nine o'clock', 'half past six'."""
    minutes %= 24 * 60
    h, m = divmod(minutes, 60)
    h12 = h % 12 or 12
    if style == "digits":
        return f"{h12}:{m:02d}"
    if m == 0:
        return f"{num_word(h12)} o'clock"
    if m == 30 and style == "casual":
        return f"half past {num_word(h12)}"
    if m < 10:
        return f"{num_word(h12)} oh {num_word(m)}"
    return f"{num_word(h12)} {num_word(m)}"


def plural(n: int, word: str, plural_form: str | None = None) -> str:
    return f"{say_num(n)} {word if n == 1 else (plural_form or word + 's')}"


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def fill(template: str, slots: dict) -> str:
    """``str.format`` with the slots, then tidy spaces before punctuation."""
    out = template.format(**slots)
    out = re.sub(r"\s+", " ", out)
    return re.sub(r"\s+([,.?!])", r"\1", out).strip()


def word_count(text: str) -> int:
    return len(re.sub(r"\[[^\]]*\]", " ", text).split())


# ---------------------------------------------------------------------------------------------
# YAML output: small, stable, readable


class _Flow(list):
    """A list written on one line."""


class _FlowMap(dict):
    """A mapping written on one line."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(_FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v.items(), flow_style=True))


def flow(items) -> _Flow:
    return _Flow(items)


def flow_map(items: dict) -> _FlowMap:
    return _FlowMap(items)


def dump_yaml(data) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False)


# ---------------------------------------------------------------------------------------------
# Scene dictionaries in the file layout (keys in a fixed, readable order; defaults left out)


def make_turn(tid: str, speaker: str, label: str, text: str, *, gap: float | None = None,
              addressee: str | None = None, gold_answer: str | None = None,
              resolves: str | None = None, gold_facts: list[str] | None = None) -> dict:
    t = {"id": tid, "speaker": speaker, "label": label}
    if addressee is not None:
        t["addressee"] = addressee
    t["text"] = text
    if gold_answer is not None:
        t["gold_answer"] = gold_answer
    if gold_facts:
        t["gold_facts"] = flow(gold_facts)
    if resolves is not None:
        t["resolves"] = resolves
    if gap is not None and gap != 0.3:
        t["gap"] = gap
    return t


def make_scene(sid: str, kind: str, speakers: list[str], turns: list[dict], *, assistant_name: str = "Aria",
               duty: str = "", condition: str | None = None, pair_id: str | None = None,
               attributes: dict | None = None) -> dict:
    d: dict = {"id": sid, "kind": kind}
    if condition is not None:
        d["condition"] = condition
    if pair_id is not None:
        d["pair_id"] = pair_id
    if assistant_name != "Aria":
        d["assistant_name"] = assistant_name
    if duty:
        d["duty"] = duty
    d["speakers"] = flow(speakers)
    if attributes:
        d["attributes"] = flow_map(attributes)
    d["turns"] = turns
    return d


def block_choice(set_name: str, seed: int, index: int, n_items: int) -> int:
    """Item for ``index`` from a seeded permutation of ``range(n_items)`` per block of ``n_items``
    indices: every template is used once before any is used twice."""
    b, j = divmod(index, n_items)
    perm = list(range(n_items))
    random.Random(f"fdenv-scenes/{set_name}/perm/seed{seed}/{b}").shuffle(perm)
    return perm[j]


_ORD = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth",
        9: "ninth", 10: "tenth", 11: "eleventh", 12: "twelfth", 13: "thirteenth", 14: "fourteenth",
        15: "fifteenth", 16: "sixteenth", 17: "seventeenth", 18: "eighteenth", 19: "nineteenth", 20: "twentieth",
        30: "thirtieth"}


def ordinal(n: int) -> str:
    """'first' .. 'thirty-first'."""
    if n in _ORD:
        return _ORD[n]
    t, o = divmod(n, 10)
    return f"{_TENS[t]}-{_ORD[o]}"


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")


def duration(minutes: int) -> str:
    """'an hour and a half', 'two hours and ten minutes', 'forty-five minutes'."""
    h, m = divmod(minutes, 60)
    if h == 0:
        return f"{num_word(m)} minute{'s' if m != 1 else ''}"
    hours = "an hour" if h == 1 else f"{num_word(h)} hours"
    if m == 0:
        return hours
    if m == 30:
        return "an hour and a half" if h == 1 else f"{num_word(h)} and a half hours"
    return f"{hours} and {num_word(m)} minute{'s' if m != 1 else ''}"
