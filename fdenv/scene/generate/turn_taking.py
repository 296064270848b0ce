"""FDB smooth turn-taking: some context, then a ``final`` question the assistant should answer
promptly. Questions have one right answer (often computed from facts in the context), so
``gold_answer`` is a short sentence a judge can compare with."""

from __future__ import annotations

import random

from ._common import (
    DAYS, MONTHS, NAMES, RELATIVES, ASSISTANT_NAMES, block_choice, cap, chance, clock, duration, gap,
    make_scene, make_turn, num_word, ordinal, pick, say_num,
)

KIND = "turn_taking"
VERSION = 2
DEFAULT_N = 200

CURRENCIES = ("dollars", "euros", "pounds")
CAPITALS = (
    ("France", "Paris"), ("Japan", "Tokyo"), ("Canada", "Ottawa"), ("Australia", "Canberra"), ("Kenya", "Nairobi"),
    ("Egypt", "Cairo"), ("Peru", "Lima"), ("Norway", "Oslo"), ("Portugal", "Lisbon"), ("Argentina", "Buenos Aires"),
    ("South Korea", "Seoul"), ("Greece", "Athens"), ("Ireland", "Dublin"), ("Thailand", "Bangkok"),
    ("Poland", "Warsaw"), ("Vietnam", "Hanoi"), ("Chile", "Santiago"), ("Turkey", "Ankara"), ("Brazil", "Brasília"),
)
OPPOSITES = (("ancient", "modern"), ("expensive", "cheap"), ("generous", "stingy"), ("arrive", "depart"),
             ("victory", "defeat"), ("shallow", "deep"), ("visible", "invisible"), ("ascend", "descend"),
             ("temporary", "permanent"), ("fragile", "sturdy"), ("maximum", "minimum"), ("accept", "refuse"))
SPELLINGS = ("necessary", "rhythm", "separate", "restaurant", "calendar", "Wednesday", "embarrass", "definitely",
             "tomorrow", "occasion", "receipt", "library")
OPENERS = ("Okay, I need some help.", "Right, so.", "Hi there.", "Let me think.", "Okay, next question.",
           "So I'm trying to sort something out.", "Hmm, okay.", "Good evening.", "Morning.", "Okay, one more thing.",
           "Right, help me out here.", "Hello again.", "So, a question.", "Okay, listen.", "Quick one.",
           "Hi, it's me again.", "Right then.", "Okay, I'm back.", "Can I ask something?", "Evening.")
PREFIXES = ("", "", "", "Okay, so ", "Quick question: ", "So ", "Tell me, ")
NAME_PREFIXES = ("{A}, ", "Hey {A}, ", "Okay {A}, ")


def _q(rng, *options):
    return pick(rng, options)


# Each family: rng -> (facts [(who, text)], context opener or None, final question, gold answer).
# who: "user" or "other" (a second person in the room, when there is one).

def f_boxes(rng):
    a, b = rng.randint(3, 9), pick(rng, (6, 8, 10, 12, 15, 20, 24))
    thing = pick(rng, ("jars", "books", "bottles", "candles", "mugs", "plates", "cans"))
    facts = [("user", _q(rng, f"I'm packing {say_num(a)} boxes, and each one holds {say_num(b)} {thing}.",
                         f"We've got {say_num(a)} boxes here with {say_num(b)} {thing} in each."))]
    return facts, None, _q(rng, f"how many {thing} is that altogether?", f"how many {thing} do we have in total?"), \
        f"That's {a * b} {thing} altogether."


def f_train(rng):
    t = rng.randrange(6 * 12, 20 * 12) * 5
    d = pick(rng, (25, 35, 40, 45, 50, 55, 70, 80, 95, 105, 130))
    facts = [("user", f"My train leaves at {clock(t)}."),
             ("other", f"And the journey takes {duration(d)}, I checked.")]
    return facts, None, _q(rng, "what time will I get there?", "when does that get me in?", "what time do I arrive, then?"), \
        f"You'll arrive at {clock(t + d, 'digits')}."


def f_delivery(rng):
    i, k = rng.randrange(7), rng.randint(2, 6)
    facts = [("user", _q(rng, f"Today is {DAYS[i]}.", f"It's {DAYS[i]} today, right.")),
             ("other", f"The shop said delivery takes {num_word(k)} days.")]
    return facts, None, _q(rng, "so which day should the parcel arrive?", "what day will it get here?"), \
        f"It should arrive on {DAYS[(i + k) % 7]}."


def f_convert(rng):
    kind = rng.randrange(4)
    if kind == 0:
        h = rng.randint(2, 9)
        q, g = f"how many minutes are there in {num_word(h)} hours?", f"There are {h * 60} minutes in {h} hours."
    elif kind == 1:
        k = rng.randint(2, 9)
        q, g = f"how many grams are in {num_word(k)} and a half kilos?", f"{k}.5 kilos is {k * 1000 + 500} grams."
    elif kind == 2:
        m = rng.randint(2, 12)
        q, g = f"how many seconds are there in {num_word(m)} minutes?", f"There are {m * 60} seconds in {m} minutes."
    else:
        d = rng.randint(2, 6)
        q, g = f"how many hours are there in {num_word(d)} days?", f"There are {d * 24} hours in {d} days."
    opener = _q(rng, "I'm helping my son with his homework.", "My daughter has a maths test tomorrow.",
                "I'm doing a quiz with some friends.", "This is for a puzzle I'm doing.")
    return [], opener, q, g


def f_split(rng):
    p = rng.randint(3, 6)
    each = rng.randint(12, 45)
    cur = pick(rng, CURRENCIES)
    facts = [("user", f"Dinner came to {p * each} {cur}."),
             ("other", _q(rng, f"And there are {num_word(p)} of us.", f"Don't forget we're {num_word(p)} people."))]
    return facts, None, _q(rng, "how much does each person pay if we split it evenly?", "what's that per person?"), \
        f"It's {each} {cur} each."


def f_recipe(rng):
    a = pick(rng, (2, 4))
    b = pick(rng, (6, 8, 10, 12)) if a == 4 else pick(rng, (3, 5, 6, 8))
    per = pick(rng, (50, 75, 100, 125, 150))
    ing = pick(rng, ("flour", "rice", "butter", "sugar", "pasta", "cheese"))
    facts = [("user", f"This recipe serves {num_word(a)} and needs {per * a} grams of {ing}."),
             ("user", _q(rng, f"But I'm cooking for {num_word(b)} people.", f"We'll be {num_word(b)} at dinner though."))]
    return facts, None, _q(rng, f"how much {ing} do I need?", f"how many grams of {ing} should I use?"), \
        f"You need {per * b} grams of {ing}."


def f_age(rng):
    y = rng.randint(1940, 2015)
    y2 = rng.randint(max(y + 5, 2020), 2035)
    rel = pick(rng, RELATIVES)
    facts = [("user", f"{cap(rel)} was born in {y}.")]
    return facts, None, f"how old does {rel} turn in {y2}?", f"{cap(rel.replace('my ', 'your ', 1))} turns {y2 - y} in {y2}."


def f_capital(rng):
    c, cap_ = pick(rng, CAPITALS)
    opener = _q(rng, "We're doing a geography quiz.", "I'm stuck on this crossword.", "My kid just asked me something.")
    return [], opener, _q(rng, f"what's the capital of {c}?", f"which city is the capital of {c}?"), \
        f"The capital of {c} is {cap_}."


def f_left(rng):
    a = pick(rng, (50, 60, 80, 100, 120, 150, 200))
    b, c = rng.randint(8, a // 3), rng.randint(6, 20)
    cur = pick(rng, CURRENCIES)
    thing = pick(rng, ("a new shirt", "groceries", "a birthday present", "petrol", "books", "cinema tickets"))
    facts = [("user", f"I had {a} {cur} this morning."),
             ("user", f"Then I spent {say_num(b)} on {thing} and {say_num(c)} on lunch.")]
    return facts, None, _q(rng, "how much do I have left?", "so what's left?"), f"You have {a - b - c} {cur} left."


def f_cycle(rng):
    v = pick(rng, (10, 12, 15, 20))
    minutes = pick(rng, [m for m in (30, 45, 60, 90, 120) if v * m % 60 == 0])
    d = v * minutes // 60
    facts = [("user", f"I cycle at about {say_num(v)} kilometres an hour."),
             ("other", f"And the lake is {say_num(d)} kilometres from here.")]
    return facts, None, _q(rng, "how long will it take me to get there?", "how long is that ride?"), \
        f"About {duration(minutes)}."


def f_week(rng):
    k = rng.randint(3, 12)
    what = pick(rng, ("walking", "running", "cycling", "swimming"))
    unit = "kilometres" if what != "swimming" else "lengths"
    facts = [("user", f"I've been {what} {num_word(k)} {unit} every day.")]
    return facts, None, _q(rng, "how much is that in a week?", "what does that add up to over a week?"), \
        f"That's {7 * k} {unit} a week."


def f_until(rng):
    m = pick(rng, MONTHS)
    d0 = rng.randint(1, 15)
    d1 = rng.randint(d0 + 3, 28)
    ev = pick(rng, ("concert", "wedding", "exam", "trip", "party", "match"))
    facts = [("user", f"The {ev} is on the {ordinal(d1)} of {m}."),
             ("other", f"And today's the {ordinal(d0)}.")]
    return facts, None, _q(rng, f"how many days until the {ev}?", f"how many days is that from now?"), \
        f"It's {d1 - d0} days until the {ev}."


def f_months(rng):
    i, k = rng.randrange(12), rng.randint(2, 8)
    facts = [("user", f"It's {MONTHS[i]} now."),
             ("other", f"And the baby is due in {num_word(k)} months.")]
    return facts, None, _q(rng, "which month is that?", "so what month will the baby come?"), \
        f"That's {MONTHS[(i + k) % 12]}."


def f_legs(rng):
    a, b = rng.randint(2, 6), rng.randint(3, 12)
    facts = [("user", f"We have {num_word(a)} dogs and {num_word(b)} chickens on the farm.")]
    lead = pick(rng, ("Here's a silly one.", "Okay, a silly one for you.", "Random question.", "Right, a little puzzle.",
                      "This one's for my kid's homework.", "Here's a farm puzzle."))
    return facts, lead, _q(rng, "how many legs is that altogether?", "how many legs do they have in total?"), \
        f"That's {4 * a + 2 * b} legs."


def f_sleep(rng):
    t1 = (22 * 60 + 15 * rng.randint(0, 12)) % (24 * 60)
    t2 = 6 * 60 + 15 * rng.randint(0, 8)
    slept = (t2 - t1) % (24 * 60)
    facts = [("user", f"I went to bed at {clock(t1)} last night."),
             ("user", f"And the alarm went off at {clock(t2)}.")]
    return facts, None, _q(rng, "how much sleep did I get?", "how many hours of sleep is that?"), \
        f"You slept {duration(slept)}."


def f_discount(rng):
    p = 20 * rng.randint(2, 10)
    d = pick(rng, (10, 20, 25, 30, 50))
    cur = pick(rng, CURRENCIES)
    item = pick(rng, ("jacket", "lamp", "pair of boots", "backpack", "coffee machine"))
    facts = [("user", f"The {item} costs {p} {cur}."), ("other", pick(rng, (f"And it's {d} percent off today.",
                    f"The sign says {d} percent off.", f"They've got {d} percent off everything this week.",
                    f"It's in the sale, {d} percent off.")))]
    return facts, None, _q(rng, "what's the price after the discount?", "so how much would I actually pay?"), \
        f"It's {p * (100 - d) // 100} {cur} after the discount."


def f_pages(rng):
    r = pick(rng, (10, 15, 20, 25, 30, 40))
    days = rng.randint(5, 20)
    facts = [("user", f"My book has {r * days} pages."), ("user", f"I read about {say_num(r)} pages a day.")]
    return facts, None, _q(rng, "how many days will it take me to finish it?", "when will I be done, in days?"), \
        f"It will take you {days} days."


def f_left_time(rng):
    t0 = rng.randrange(8 * 4, 17 * 4) * 15
    d = pick(rng, (15, 20, 35, 40, 50, 75, 90, 105))
    ev = pick(rng, ("meeting", "appointment", "film", "interview", "class"))
    facts = [("user", f"The {ev} starts at {clock(t0 + d)}."), ("other", f"It's {clock(t0)} right now.")]
    return facts, None, _q(rng, "how much time do I have?", "how long until it starts?"), f"You have {duration(d)}."


def f_opposite(rng):
    w, o = pick(rng, OPPOSITES)
    return [], _q(rng, "I'm doing a word puzzle.", "I'm writing a poem for school.", "My son has English homework.",
                  "We're playing a word game.", "I need this for an essay.", "I'm teaching my niece some words."), \
        f"what's the opposite of {w}?", f"The opposite of {w} is {o}."


def f_spell(rng):
    w = pick(rng, SPELLINGS)
    return [], _q(rng, "I'm writing a card.", "I always get this wrong.", "I'm doing a crossword.",
                   "This word always trips me up.", "I'm filling in a form.", "My spellchecker is off."), f"how do you spell {w}?", \
        f"{cap(w)} is spelled {'-'.join(w.upper())}."


FAMILIES = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("f_") and callable(fn)}


def make(index: int, rng: random.Random, sid: str, seed: int = 0) -> dict:
    families = sorted(FAMILIES)
    family = families[block_choice(KIND, seed, index, len(families))]
    names = rng.sample(NAMES, 2)
    user, other = names
    assistant = pick(rng, ASSISTANT_NAMES) if chance(rng, 0.3) else "Aria"
    facts, opener, question, gold = FAMILIES[family](rng)
    two = chance(rng, 0.35) and any(w == "other" for w, _ in facts)
    speakers = [user, other] if two else [user]
    turns: list[dict] = []

    def add(speaker, label, text, **kw):
        turns.append(make_turn(f"t{len(turns)}", speaker, label, text,
                               gap=gap(rng, 0.2, 0.7) if turns else None, **kw))

    if opener is None and chance(rng, 0.3):
        opener = pick(rng, OPENERS)
    if opener:
        add(user, "ctx", opener)
    for who, text in facts:
        add(other if (who == "other" and two) else user, "ctx", text)
    named = chance(rng, 0.35)
    if named:
        prefix = pick(rng, NAME_PREFIXES).format(A=assistant)
    else:
        prefix = pick(rng, PREFIXES)
    add(user, "final", cap(prefix + question), addressee=assistant if named else None, gold_answer=gold)
    return make_scene(sid, KIND, speakers, turns, assistant_name=assistant, attributes={"family": family})
