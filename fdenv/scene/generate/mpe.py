"""Duplex-MPE style multi-party scenes: 3-4 people talk in a room where an assistant listens.

One scenario (``make_pair``) is written twice, ``explicit`` (the request names the assistant) and
``implicit`` (it does not), identical otherwise. A scene is: the spoken ``duty`` preamble (the
Narrator's voice); ``ctx`` turns among the humans that state the facts of a task (prices, times,
who has what, what was chosen); silence turns ``N1`` (assistant mentioned, not asked), ``N2``
(addressed to another device or person), ``N3`` (thinking aloud); in 90% of scenes an ``N4Q``
question to the assistant directly followed by its human resolution ``N4R``; and exactly one
``T`` request whose ``gold_answer`` is computed from the facts stated before it.

Proportions (SPEC 7, generator defaults): 8-14 turns in all (the duty turn included; scenes with
an N4 event have at least 10); 4-8 silence windows; ``T`` uniformly from the 4th turn to the last.
"""

from __future__ import annotations

import random

from ._common import (
    ASSISTANT_NAMES, CITIES, DAYS, DEVICES, MONTHS, NAMES, NARRATOR, VENUES, block_choice, block_flag, chance,
    clock, duration, fill, gap, make_scene, make_turn, num_word, ordinal, pick, say_num,
)

KIND = "mpe"
VERSION = 1
DEFAULT_N = 20  # pairs
TURNS_RANGE = (8, 14)
SILENCE_RANGE = (4, 8)
FACTS_RANGE = (2, 4)

CURRENCIES = ("dollars", "euros", "pounds")
RELATIONSHIPS = ("roommates", "coworkers", "family", "old friends", "neighbours", "classmates", "teammates")
DEVICE_CONTEXTS = ("a smart speaker on the counter", "a phone on the table", "a laptop at the end of the table",
                   "a speaker on the bookshelf", "a tablet leaning on the fruit bowl")
REGISTERS = ("casual", "neutral", "formal")

DUTIES = (
    "You are {A}, a voice assistant in a room with several people. Answer only when you are addressed, and stay quiet otherwise.",
    "This is your duty, {A}. You will hear a conversation between several people. Speak only when someone addresses you, and remain silent otherwise.",
    "{A}, you are the assistant in this room. Several people are talking. Respond only when you are spoken to; otherwise, stay quiet.",
    "You are {A}. You will listen to people talking in a shared room. When someone addresses you, answer briefly. Otherwise, do not speak.",
)

N1_LINES = (
    "{A} must be tired of us by now.", "I bet {A} has heard this argument a hundred times.",
    "My sister wants one like {A} for her kitchen.", "Remember when {A} played the wrong song at the party?",
    "Honestly, {A} is the only one here who remembers anything.", "I still can't believe {A} understood my accent last week.",
    "We should give {A} a raise.", "{A} probably thinks we're all a bit crazy.",
    "My kids talk to {A} more than they talk to me.", "I think {A} gets confused when we all talk at once.",
    "{A} woke me up with the wrong alarm last week, I'm still annoyed.", "{A} has been very quiet today.",
    "I read somewhere that {A} gets better at recognising our voices over time.", "Don't blame {A}, that one was my fault.",
    "We used to argue about everything before we had {A}.", "I keep saying please and thank you to {A}, is that weird?",
)
N2_DEVICE_LINES = (
    "{D}, set a timer for ten minutes.", "{D}, what's the weather tomorrow?", "{D}, turn the volume down a bit.",
    "{D}, add milk to the shopping list.", "{D}, play some quiet jazz.", "{D}, remind me to call the bank at noon.",
    "{D}, turn off the kitchen lights.", "{D}, how long will it take to drive to work tomorrow?",
    "{D}, call my mum.", "{D}, what's on my calendar tomorrow morning?",
)
N2_PERSON_LINES = (
    "{P}, pass me that pen, would you?", "{P}, your phone's buzzing again.", "{P}, could you close the window? It's freezing.",
    "{P}, don't forget to text your mum back.", "{P}, can you turn the oven off?", "{P}, sit down, you're making me nervous.",
    "{P}, hand me the notebook, please.", "{P}, did you remember to feed the cat?", "{P}, grab me a glass of water while you're up.",
    "{P}, you've got something on your sleeve.",
)
N3_LINES = (
    "Hmm, where did I put my glasses?", "Okay, so that's done. What's next.", "Oh no, I forgot to water the plants again.",
    "Now where's that pen gone.", "I really need a holiday.", "Ugh, it's so cold in here.", "Wait, what was I going to say?",
    "Hmm, I wonder if the post has come yet.", "I should really call my mother tonight.", "Why is this zip always stuck?",
    "Let me just write that down somewhere.", "Oh, my coffee's gone cold.", "Okay, okay, think.",
    "I wonder what time it is in Tokyo right now.", "Where did I leave my phone charger.", "I can never remember which drawer the scissors are in.",
)
FILLERS = {
    "casual": (
        "This is taking way longer than I thought.", "I'm starving, honestly.", "My back is killing me today.",
        "I love this song, by the way.", "Sorry, I'm only half awake.", "We always end up doing this at the last minute.",
        "It smells amazing in here.", "I told you we should have started earlier.", "Honestly, I'm just happy we're all here.",
        "Let's not make this complicated.", "Traffic was terrible on the way here.", "Okay, okay, I'm listening.",
    ),
    "neutral": (
        "Let's try to get this sorted quickly.", "I think we're nearly there.", "Thanks for organising this, by the way.",
        "Okay, let's focus for a minute.", "I'd rather decide this today than leave it.", "That sounds reasonable to me.",
        "Let's make sure we don't forget anything.", "It's good we're doing this together.", "Right, where were we?",
        "I agree, let's keep it simple.",
    ),
}
N4_EVENTS = (  # (question to the assistant, the human resolution)
    ("{A}, what's the weather going to be like tomorrow?", "Oh, never mind, I just checked my phone, it's going to rain all day."),
    ("{A}, when does the pharmacy close today?", "It closes at eight, I walked past it this morning."),
    ("{A}, how do you spell necessary?", "Wait, I've got it, one c and two s's."),
    ("{A}, what's the wifi password again?", "Never mind, it's on the fridge, I can see it from here."),
    ("{A}, how many grams are in a cup of sugar?", "Forget it, the bag says two hundred grams per cup."),
    ("{A}, who sang that song that was just on?", "That was Adele, I know this one."),
    ("{A}, is the post office open on Saturdays?", "Yes, it is, until noon, I remember now."),
    ("{A}, what's the capital of Australia?", "It's Canberra, everyone always thinks it's Sydney."),
    ("{A}, how long do you boil an egg for?", "About eight minutes for hard-boiled, trust me."),
    ("{A}, what's twelve times fifteen?", "Oh, it's a hundred and eighty, I just did it in my head."),
    ("{A}, when is Mother's Day this year?", "It's the second Sunday in May, I looked it up yesterday."),
    ("{A}, what's the number for the taxi company?", "Don't worry, I've got it saved, I'll call them."),
    ("{A}, what does ubiquitous mean?", "It means it's everywhere, like phones."),
    ("{A}, how far is the airport from here?", "About forty minutes by car, we did it last week."),
    ("{A}, what year did the Berlin Wall fall?", "Nineteen eighty-nine, I remember it from school."),
    ("{A}, is it going to be sunny on Saturday?", "I just looked, it's sunny all weekend."),
)


class Task:
    """What a family writes: fact turns (speaker, text) in order, the T request and its answer."""

    def __init__(self, facts, t_speaker, explicit, implicit, gold, setting, activity):
        self.facts, self.t_speaker = facts, t_speaker
        self.explicit, self.implicit, self.gold = explicit, implicit, gold
        self.setting, self.activity = setting, activity


def _others(humans, *exclude):
    return [h for h in humans if h not in exclude]


# --- task families: (rng, humans, nf) -> Task with exactly nf facts --------------------------------

SHOPS = {  # (item, plural, price)
    "café counter": (("latte", "lattes", 4), ("cappuccino", "cappuccinos", 4), ("pot of tea", "pots of tea", 3),
                     ("croissant", "croissants", 3), ("muffin", "muffins", 3), ("toasted sandwich", "toasted sandwiches", 7),
                     ("hot chocolate", "hot chocolates", 5), ("slice of cake", "slices of cake", 5)),
    "market stall": (("block of cheese", "blocks of cheese", 9), ("jar of olives", "jars of olives", 5),
                     ("loaf of bread", "loaves of bread", 4), ("box of strawberries", "boxes of strawberries", 6),
                     ("jar of honey", "jars of honey", 8), ("bag of apples", "bags of apples", 3)),
    "hardware store": (("tin of paint", "tins of paint", 18), ("set of brushes", "sets of brushes", 6),
                       ("paint roller", "paint rollers", 9), ("roll of tape", "rolls of tape", 4),
                       ("pack of sandpaper", "packs of sandpaper", 5), ("dust sheet", "dust sheets", 7)),
    "takeaway menu": (("large pizza", "large pizzas", 12), ("box of noodles", "boxes of noodles", 9),
                      ("chicken curry", "chicken curries", 11), ("portion of dumplings", "portions of dumplings", 7),
                      ("portion of fries", "portions of fries", 4), ("veggie burger", "veggie burgers", 10)),
}


def t_total(rng, humans, nf):
    setting = pick(rng, sorted(SHOPS))
    items = rng.sample(SHOPS[setting], nf)
    cur = pick(rng, CURRENCIES)
    facts, total = [], 0
    one = rng.sample(("I'll take the {item}, that's {p}.", "Put me down for a {item}. It says {p}.",
                      "And one {item} for me, {p}.", "I just want a {item}, {p}."), 4)
    many = rng.sample(("I want {q} {items}, they're {p} each.", "Get {q} {items} for me, at {p} each.",
                       "Make it {q} {items} for me, {p} each."), 3)
    for item, plural_, price in items:
        sp = pick(rng, humans)
        qty = pick(rng, (1, 1, 2, 3)) if price <= 9 else 1
        total += qty * price
        slots = {"item": item, "items": plural_, "q": num_word(qty), "p": f"{say_num(price)} {cur}"}
        facts.append((sp, fill((one if qty == 1 else many).pop(), slots)))
    t_sp = pick(rng, humans)
    ex, im = pick(rng, (("{A}, how much is all of that together?", "So how much is all of that together?"),
                        ("{A}, what does that come to in total?", "Okay, so what does that come to in total?"),
                        ("{A}, can you add all that up for us?", "Can you add all that up for us?")))
    return Task(facts, t_sp, ex, im, f"It comes to {total} {cur} in total.", setting, "buying things together")


def t_split(rng, humans, nf):
    n = len(humans)
    birthday = pick(rng, humans) if nf >= 3 else None
    payers = n - (1 if birthday else 0)
    cur = pick(rng, CURRENCIES)
    each = rng.randint(15, 40)
    total = each * payers
    tip = 5 * rng.randint(1, 4) if payers * each > 40 else 5
    drinks = 2 * rng.randint(4, 12) if nf >= 4 else 0
    food = total - tip - drinks
    while food < 20:
        each += 5
        total = each * payers
        food = total - tip - drinks
    s = rng.sample(humans, n)
    facts = [(s[0], f"Okay, the bill came to {food} {cur}."),
             (s[1], f"Let's leave a tip of {say_num(tip)} {cur} on top, the service was great.")]
    if birthday:
        facts.append((pick(rng, _others(humans, birthday)), f"And {birthday} isn't paying anything tonight, it's a birthday dinner."))
    if drinks:
        facts.append((s[2 % n], f"Oh, and the drinks came separately, that was another {say_num(drinks)} {cur}."))
    t_sp = pick(rng, humans)
    ex, im = pick(rng, (("{A}, so how much does each of us pay?", "So how much does each of us pay?"),
                        ("{A}, what's that per person, then?", "What's that per person, then?")))
    who = f"Each of the {num_word(payers)} people paying" if birthday else "Each person"
    return Task(facts, t_sp, ex, im, f"{who} pays {total // payers} {cur}.", "restaurant table", "splitting the bill")


def t_end_time(rng, humans, nf):
    start = rng.randrange(13 * 4, 21 * 4) * 15
    length = pick(rng, (95, 100, 105, 110, 115, 120, 125, 130, 140, 150))
    what = pick(rng, ("film", "play", "concert", "match"))
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"The {what} starts at {clock(start)}."),
             (s[1], f"And it's {duration(length)} long, I checked.")]
    extra = 0
    if nf >= 3:
        ads = pick(rng, (10, 15, 20))
        extra += ads
        facts.append((s[2], f"Don't forget there's about {num_word(ads)} minutes of adverts before it actually begins."))
    if nf >= 4:
        brk = pick(rng, (15, 20))
        extra += brk
        facts.append((s[0], f"Plus a {num_word(brk)} minute break in the middle."))
    t_sp = pick(rng, humans)
    ex, im = pick(rng, (("{A}, so what time will it be over?", "So what time will it be over?"),
                        ("{A}, when do we get out, then?", "When do we get out, then?")))
    return Task(facts, t_sp, ex, im, f"It will finish at {clock(start + length + extra, 'digits')}.",
                pick(rng, ("cinema lobby", "living room", "theatre bar")), f"going to a {what}")


OBJECTS = ("car keys", "tickets", "passports", "phone charger", "umbrella", "map", "camera", "picnic blanket",
           "portable speaker", "first aid kit")


def t_who_has(rng, humans, nf):
    objs = rng.sample(OBJECTS, nf)
    facts, holders = [], {}
    for obj in objs:
        sp = pick(rng, humans)
        if chance(rng, 0.5):
            holder, text = sp, pick(rng, (f"I've got the {obj}.", f"The {obj} are with me." if obj.endswith("s") else f"The {obj} is with me.",
                                          f"I packed the {obj} in my bag."))
        else:
            holder = pick(rng, _others(humans, sp))
            text = pick(rng, (f"{holder} has the {obj}.", f"I gave the {obj} to {holder} this morning.",
                              f"{holder}, you've got the {obj}, right? I saw you take them." if obj.endswith("s")
                              else f"{holder}, you've got the {obj}, right? I saw you take it."))
        holders[obj] = holder
        facts.append((sp, text))
    ask = pick(rng, objs)
    t_sp = pick(rng, _others(humans, holders[ask]))
    ex, im = pick(rng, ((f"{{A}}, who has the {ask} again?", f"Wait, who has the {ask} again?"),
                        (f"{{A}}, remind me who took the {ask}.", f"Remind me who took the {ask}.")))
    return Task(facts, t_sp, ex, im, f"{holders[ask]} has the {ask}.", pick(rng, ("hallway", "car park", "kitchen")),
                "getting ready to leave")


FILMS = ("The Long Summer", "Night Train", "Paper Moon", "The Lighthouse Keeper", "Blue Harbour", "The Last Orchard",
         "Winter Kings", "A Quiet Street", "The Glass Garden", "Midnight Ferry")


def t_choice(rng, humans, nf):
    kind = pick(rng, ("restaurant", "film", "trip"))
    pool = {"restaurant": VENUES, "film": FILMS, "trip": CITIES}[kind]
    opts = rng.sample(pool, 3 if nf >= 3 else 2)
    chosen = opts[0] if nf != 4 else opts[1]
    s = rng.sample(humans, len(humans))
    if kind == "restaurant":
        facts = [(s[0], f"We could go to {opts[0]} or {opts[1]}" + (f", or even {opts[2]}." if len(opts) > 2 else "."))]
    elif kind == "film":
        facts = [(s[0], f"Tonight it's either {opts[0]} or {opts[1]}" + (f", or {opts[2]}." if len(opts) > 2 else "."))]
    else:
        facts = [(s[0], f"For the long weekend I'd say {opts[0]} or {opts[1]}" + (f", maybe {opts[2]}." if len(opts) > 2 else "."))]
    if nf >= 3:
        facts.append((s[1], f"I'm not keen on {opts[2]}, we did that last time."))
    if nf == 4:
        facts.append((s[2], f"Then {opts[1]}, everyone was talking about it at work."))
    facts.append((s[(len(facts)) % len(humans)], f"Fine, {chosen} it is, then." if nf != 4 else f"Okay, {chosen}, I'm happy with that."))
    day = pick(rng, DAYS)
    if kind == "restaurant":
        ex, im = (f"{{A}}, book us a table at the place we picked, {day} at eight.", f"Book us a table at the place we picked, {day} at eight.")
        gold = f"A table at {chosen} on {day} at eight."
    elif kind == "film":
        ex, im = ("{A}, put on the film we agreed on.", "Can you put on the film we agreed on?")
        gold = f"Playing {chosen}."
    else:
        ex, im = (f"{{A}}, put the trip we just chose in the calendar for {day}.", f"Put the trip we just chose in the calendar for {day}.")
        gold = f"The trip to {chosen} is added to the calendar for {day}."
    return Task(facts, pick(rng, humans), ex, im, gold, pick(rng, ("sofa", "kitchen table", "office break room")),
                {"restaurant": "choosing a restaurant", "film": "choosing a film", "trip": "planning a weekend away"}[kind])


GUEST_GROUPS = (  # (announcement, people, cancellation)
    ("My parents are coming, so that's two.", 2, "Actually, my dad just texted, he can't come after all."),
    ("{X}'s bringing the three kids.", 3, "Oh, {X} says one of the kids is sick, so only two of them now."),
    ("The neighbours both said yes.", 2, "One of the neighbours just cancelled, so only one of them is coming."),
    ("Four people from work are coming.", 4, "One of the people from work dropped out, so it's three of them now."),
    ("My cousin is coming on her own.", 1, None),
    ("Five people from the football team can make it.", 5, "One of the football lot cancelled, so four of them now."),
)


def t_guests(rng, humans, nf):
    n_groups = nf if nf < 4 else 3
    chosen = rng.sample(GUEST_GROUPS, n_groups)
    facts, total, spoken = [], 0, []
    for text, k, cancel in chosen:
        sp = pick(rng, humans)
        x = pick(rng, _others(humans, sp))
        facts.append((sp, fill(text, {"X": x})))
        spoken.append((sp, x, cancel))
        total += k
    if nf == 4:
        sp, x, cancel = pick(rng, [c for c in spoken if c[2]])
        facts.append((sp, fill(cancel, {"X": x})))
        total -= 1
    ex, im = pick(rng, (("{A}, so how many guests is that altogether, not counting us?", "So how many guests is that altogether, not counting us?"),
                        ("{A}, how many people are coming, not including us?", "How many people are coming, then, not including us?")))
    return Task(facts, pick(rng, humans), ex, im, f"{num_word(total).capitalize()} guests are coming.",
                pick(rng, ("living room", "garden", "kitchen")), "planning a party")


def t_budget(rng, humans, nf):
    cur = pick(rng, CURRENCIES)
    budget = 100 * rng.randint(12, 30)
    costs = [("The flights are {v} in total.", 10 * rng.randint(25, 45)), ("The hotel comes to {v} for all of us.", 10 * rng.randint(20, 40)),
             ("The rental car is another {v}.", 10 * rng.randint(8, 15))]
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"We've got {budget} {cur} for the whole trip.")]
    for i, (text, v) in enumerate(costs[: nf - 1]):
        facts.append((s[(i + 1) % len(humans)], text.format(v=f"{v} {cur}")))
    left = budget - sum(v for _, v in costs[: nf - 1])
    ex, im = pick(rng, (("{A}, how much does that leave for everything else?", "So how much does that leave for everything else?"),
                        ("{A}, what's left in the budget, then?", "What's left in the budget, then?")))
    return Task(facts, pick(rng, humans), ex, im, f"That leaves {left} {cur}.", pick(rng, ("kitchen table", "sofa")),
                f"planning a trip to {pick(rng, CITIES)}")


def t_leave(rng, humans, nf):
    dep = rng.randrange(7 * 4, 19 * 4) * 15 + pick(rng, (0, 5, 10))
    walk = pick(rng, (10, 15, 20, 25))
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"The train leaves at {clock(dep)}."), (s[1], f"It's a {num_word(walk)} minute walk to the station.")]
    back = walk
    if nf >= 3:
        early = pick(rng, (5, 10))
        back += early
        facts.append((s[2], f"And I want to be there {num_word(early)} minutes early to buy the tickets."))
    if nf >= 4:
        stop = pick(rng, (5, 10))
        back += stop
        facts.append((s[0], f"We also need to stop at the cash machine, that's another {num_word(stop)} minutes."))
    ex, im = pick(rng, (("{A}, so what time do we have to leave the house?", "So what time do we have to leave the house?"),
                        ("{A}, when do we need to head out, then?", "When do we need to head out, then?")))
    return Task(facts, pick(rng, humans), ex, im, f"You need to leave at {clock(dep - back, 'digits')}.",
                pick(rng, ("hallway", "kitchen")), "catching a train")


def t_pizza(rng, humans, nf):
    people, per, slices = rng.randint(5, 14), pick(rng, (2, 3, 4)), 8
    spare = pick(rng, (2, 4)) if nf >= 4 else 0
    s = rng.sample(humans, len(humans))
    facts = []
    if nf == 2:
        facts.append((s[0], f"The pizzas have eight slices each, and there'll be {say_num(people)} people."))
    else:
        facts.append((s[0], "Each pizza is cut into eight slices."))
        facts.append((s[1], f"We'll be {say_num(people)} people, counting us."))
    facts.append((s[2 % len(humans)], f"Everyone eats about {num_word(per)} slices, I'd say."))
    if spare:
        facts.append((s[0], f"And I want {num_word(spare)} slices left over for lunch tomorrow."))
    need = people * per + spare
    pizzas = -(-need // slices)
    ex, im = pick(rng, (("{A}, how many pizzas should we order?", "So how many pizzas should we order?"),
                        ("{A}, how many pizzas is that, then?", "How many pizzas is that, then?")))
    return Task(facts, pick(rng, humans), ex, im, f"You should order {num_word(pizzas)} pizzas.",
                pick(rng, ("living room", "dorm kitchen")), "ordering food for a party")


def t_invite(rng, humans, nf):
    month = pick(rng, MONTHS)
    weeks = 3 if nf >= 3 else 2
    day = rng.randint(7 * weeks + 1, 30)
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"The party is on the {ordinal(day)} of {month}."),
             (s[1], "The invitations should go out two weeks before.")]
    if nf >= 3:
        facts.append((s[2], "Let's make it three weeks before, people are busy these days."))
    if nf >= 4:
        facts.append((s[0], "And the cake needs to be ordered ten days ahead, but that's my job."))
    ex, im = pick(rng, (("{A}, so what date do we send the invitations?", "So what date do we send the invitations?"),
                        ("{A}, which day should the invitations go out, then?", "Which day should the invitations go out, then?")))
    return Task(facts, pick(rng, humans), ex, im, f"Send them on the {ordinal(day - 7 * weeks)} of {month}.",
                pick(rng, ("kitchen table", "garden")), "planning a party")


FAMILIES = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("t_") and callable(fn)}


# --- scene layout --------------------------------------------------------------------------------

def make_pair(index: int, rng: random.Random, pair_id: str, seed: int = 0) -> list[dict]:
    """One scenario as an (explicit, implicit) pair of scene dicts."""
    families = sorted(FAMILIES)
    family = families[block_choice(KIND, seed, index, len(families))]
    has_n4 = not block_flag(KIND, seed, index)
    humans = rng.sample(NAMES, rng.randint(3, 4))
    A = pick(rng, ASSISTANT_NAMES)
    register = pick(rng, REGISTERS)
    relationship = pick(rng, RELATIONSHIPS)
    device = pick(rng, DEVICE_CONTEXTS)

    n_total = rng.randint(TURNS_RANGE[0] + (2 if has_n4 else 0), TURNS_RANGE[1])
    q = rng.randint(3, n_total - 1)  # T's index: the 4th turn .. the last
    pre, post = q - 1, n_total - 1 - q  # human turns before / after T
    budget = n_total - 2 - (2 if has_n4 else 0)  # facts + silence + fillers
    nf = rng.randint(FACTS_RANGE[0], min(FACTS_RANGE[1], pre, budget - SILENCE_RANGE[0]))
    n_sil = rng.randint(SILENCE_RANGE[0], min(SILENCE_RANGE[1], budget - nf))
    n_fill = budget - nf - n_sil
    task = FAMILIES[family](rng, humans, nf)
    assert len(task.facts) == nf, (family, nf, len(task.facts))

    # silence labels: each of N1, N2, N3 at least once
    sil = ["N1", "N2", "N3"] + [pick(rng, ("N1", "N2", "N2", "N3", "N3")) for _ in range(n_sil - 3)]
    units: list[list[str]] = [[s] for s in sil] + [["ctx-fill"] for _ in range(n_fill)]
    rng.shuffle(units)
    free_pre = pre - nf
    pre_units, post_units = [], []
    if has_n4:
        n4 = ["N4Q", "N4R"]
        if free_pre >= 2 and (post < 2 or rng.random() < (free_pre - 1) / (free_pre - 1 + post - 1)):
            pre_units.append(n4)
            free_pre -= 2
        else:
            post_units.append(n4)
    for u in units:
        if free_pre > 0:
            pre_units.append(u)
            free_pre -= 1
        else:
            post_units.append(u)
    rng.shuffle(pre_units)
    rng.shuffle(post_units)
    # interleave the facts (in order) with the pre-T units
    pre_items: list = [list(u) for u in pre_units]
    fact_slots = sorted(rng.sample(range(len(pre_items) + nf), nf))
    seq: list = []
    fi = 0
    for pos in range(len(pre_items) + nf):
        if fi < nf and pos == fact_slots[fi]:
            seq.append(("fact", fi))
            fi += 1
        else:
            seq.extend(pre_items.pop(0))
    seq.append("T")
    for u in post_units:
        seq.extend(u)
    assert len(seq) == n_total - 1, (len(seq), n_total)

    # text and speakers
    n1 = rng.sample(N1_LINES, len(N1_LINES))
    n2d = rng.sample(N2_DEVICE_LINES, len(N2_DEVICE_LINES))
    n2p = rng.sample(N2_PERSON_LINES, len(N2_PERSON_LINES))
    n3 = rng.sample(N3_LINES, len(N3_LINES))
    fillers = rng.sample(FILLERS["casual" if register == "casual" else "neutral"],
                         len(FILLERS["casual" if register == "casual" else "neutral"]))
    q_text, r_text = pick(rng, N4_EVENTS)
    duty = fill(pick(rng, DUTIES), {"A": A})
    turns = [make_turn("t0", NARRATOR, "duty", duty)]
    prev = None

    def other_than(*names):
        cands = [h for h in humans if h not in names]
        return pick(rng, cands)

    t_index = None
    q_id = None
    for item in seq:
        tid = f"t{len(turns)}"
        kw: dict = {}
        g = gap(rng, 0.5, 1.0) if len(turns) == 1 else gap(rng, 0.2, 0.8)
        if isinstance(item, tuple):
            sp, text = task.facts[item[1]]
            label = "ctx"
        elif item == "T":
            sp, text, label = task.t_speaker, task.explicit, "T"
            t_index = len(turns)
        elif item == "ctx-fill":
            sp, text, label = other_than(prev), fillers.pop(), "ctx"
        elif item == "N1":
            sp, text, label = other_than(prev), fill(n1.pop(), {"A": A}), "N1"
        elif item == "N2":
            sp, label = other_than(prev), "N2"
            if chance(rng, 0.5):
                call, dev = pick(rng, DEVICES)
                text, kw["addressee"] = fill(n2d.pop(), {"D": call}), dev
            else:
                to = other_than(sp)
                text, kw["addressee"] = fill(n2p.pop(), {"P": to}), to
        elif item == "N3":
            sp, text, label = other_than(prev), n3.pop(), "N3"
        elif item == "N4Q":
            sp, text, label = other_than(prev), fill(q_text, {"A": A}), "N4Q"
            kw["addressee"] = A
            q_id = tid
        elif item == "N4R":
            sp = prev if chance(rng, 0.6) else other_than(prev)
            text, label = r_text, "N4R"
            kw["resolves"] = q_id
            g = None  # the scheduler starts N4R 3 s after N4Q
        else:  # pragma: no cover
            raise AssertionError(item)
        turns.append(make_turn(tid, sp, label, text, gap=g, **kw))
        prev = sp

    attributes = {"setting": task.setting, "activity": task.activity, "relationship": relationship,
                  "device": device, "register": register, "task": family}
    out = []
    for condition in ("explicit", "implicit"):
        ts = [dict(t) for t in turns]
        t = ts[t_index]
        text = fill(task.explicit if condition == "explicit" else task.implicit, {"A": A})
        new = make_turn(t["id"], t["speaker"], "T", text, gap=t.get("gap"),
                        addressee=A if condition == "explicit" else None, gold_answer=task.gold)
        ts[t_index] = new
        out.append(make_scene(f"{pair_id}-{condition}", KIND, [NARRATOR, *humans], ts, assistant_name=A, duty=duty,
                              condition=condition, pair_id=pair_id, attributes=attributes))
    return out
