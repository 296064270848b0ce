"""Duplex-MPE style multi-party scenes: 3-4 people talk in a room where an assistant listens.

One scenario (``make_pair``) is written twice, ``explicit`` and ``implicit``, identical except for
the wording of the one ``T`` request: the implicit one is a request only a device could carry out
("Text Elena what each of us owes."), after an earlier ``N1`` turn, in both twins, saying that the
assistant will be asked (``ASK_CONTEXTS``); the explicit one is the same request with the
assistant's name in one of ``EXPLICIT_FORMS``. ``mpe_checks`` states the design as checks, which
both this generator and the Claude back end (``mpe_llm``) pass.

A scenario combines five attributes (SPEC 7), each drawn from its pool and each changing the text:

* ``setting`` (where they are) and ``activity`` (what they are doing; it comes with the task
  family, which also fixes the settings it can happen in): the opening line;
* ``relationship`` (roommates, coworkers, family, ...): the opening line's aside;
* ``device`` context (which other voice devices are in the room, if any): the ``N2`` lines
  addressed to devices call exactly those devices; without one, ``N2`` turns address people;
* ``register`` (casual, neutral, formal): the opening line, the small talk and the request cores.

A scene is: the spoken ``duty`` preamble (the Narrator's own voice); ``ctx`` turns among the humans
that state the facts of a task (the first human turn opens the scene and states the first fact);
silence turns ``N1`` (assistant mentioned, not asked), ``N2`` (addressed to another device or
person), ``N3`` (thinking aloud), each kind at least once; in 90% of scenes an ``N4Q`` question to
the assistant directly followed by its human resolution ``N4R``; and exactly one ``T`` request
whose ``gold_answer`` is computed from the facts stated before it. Task families: a sum, a split,
an end time, a departure time, who has what, which option was chosen, a head count, what is left
of a budget, how many to order, a date counted back.

Gold answers restate the facts they use and say numbers plainly (digits, clock times as "half
past seven", dates as "12th"), so that an answer that says the same thing shares most of the gold
answer's content words (SPEC 8's offline judge) even through TTS and a small recogniser.

Proportions (SPEC 7 defaults): 8-14 turns in all (the duty turn included; scenes with an N4 event
have at least 10); 4-8 silence windows; ``T`` uniformly from the 4th turn to the last. Scene ``i``
depends only on (seed, i).
"""

from __future__ import annotations

import random

from ._common import (
    ASSISTANT_NAMES, DAYS, MONTHS, NARRATOR, block_choice, block_flag, cap, chance, fill, gap, make_scene,
    make_turn, num_word, pick, say_num,
)

KIND = "mpe"
VERSION = 3
DEFAULT_N = 600  # pairs
SPLIT_SHARES = (("train", 4 / 6), ("val", 1 / 6), ("test", 1 / 6))
TURNS_RANGE = (8, 14)
SILENCE_RANGE = (4, 8)
FACTS_RANGE = (2, 4)

# Human names: short, common and distinct from each other and from the assistant names.
NAMES = (
    "Felix", "Nora", "Max", "Tom", "Leo", "Clara", "Julia", "Chloe", "Victor", "Nico", "Isaac", "Ivan", "Milan",
    "Lucas", "Diego", "Lily", "Oscar", "Pablo", "Jack", "Priya", "Omar", "Jonas", "Daniel", "Hannah", "Ravi",
    "Rosa", "Ethan", "Marco", "Hugo", "Grace", "Fatima", "Ruth", "Ali", "Emma", "Selin", "Vera", "Paula",
    "Carlos", "Maya", "Ben", "Lena", "Sofia", "Aisha", "Mei", "Sam", "Kenji", "Layla", "Ingrid", "Tariq", "Zara",
    "Elena", "Kwame", "Mateo", "Freya", "Arjun", "Yuki", "Anya", "Theo", "Noah", "Mira", "Sean", "Lucia", "Nadia",
    "Beth",
)
CURRENCIES = ("euros", "pounds")
REGISTERS = ("casual", "neutral", "formal")

# ---------------------------------------------------------------------------------------------
# Attribute pools

SETTINGS = {  # setting -> how the opening line says "here"
    "kitchen": "in the kitchen", "living room": "in the living room", "dining room": "around the dining table",
    "garden": "out in the garden", "office break room": "in the break room", "meeting room": "in the meeting room",
    "car": "in the car", "hotel lobby": "in the hotel lobby", "café": "at the café", "restaurant table": "at the table",
    "hallway": "in the hallway", "dorm room": "in the dorm room", "balcony": "on the balcony",
    "train compartment": "on the train",
}
RELATIONSHIPS = {  # relationship -> an aside for the opening line
    "roommates": ("like every month in this flat", "before the landlord calls again", "since it's our turn this time"),
    "coworkers": ("before the afternoon meeting", "while the boss is out", "before we all go back to our desks"),
    "family": ("before Grandma calls", "before the kids wake up", "like we do every year"),
    "old friends": ("just like old times", "for once without an argument", "since we finally found a free evening"),
    "neighbours": ("since the whole street is doing it", "before the rain starts", "while the kids play outside"),
    "classmates": ("before the lecture starts", "instead of revising", "before the library closes"),
    "teammates": ("after training", "before the match on Sunday", "while the coach is away"),
    "cousins": ("like our parents used to", "before the wedding madness starts", "for the whole family"),
    "a couple and a friend": ("since you're staying with us this week", "because we promised you", "while we have a guest"),
}
DEVICE_CONTEXTS = {  # device context -> the other devices N2 turns may call: (wake words, addressee)
    "an Alexa speaker on the shelf": (("Alexa", "Alexa"),),
    "a phone with Siri on the table": (("Hey Siri", "Siri"),),
    "a Google speaker in the corner": (("Hey Google", "Google"), ("Okay Google", "Google")),
    "an Alexa speaker and a phone with Siri": (("Alexa", "Alexa"), ("Hey Siri", "Siri")),
    "phones with Siri and a Google speaker": (("Hey Siri", "Siri"), ("Okay Google", "Google")),
    "no other voice devices": (),
}

OPENERS = {
    "casual": (
        "Right, {X}, let's sort out {activity} {here}, {aside}.", "Okay, {activity}, {aside}, while we're {here}.",
        "So, {X} and {Y}, {activity} {here}, {aside}.", "Alright, let's do {activity} {here}, {aside}.",
        "Come on, {X}, {activity}, {aside}, we're all {here} anyway.",
    ),
    "neutral": (
        "Okay, let's get {activity} done {here}, {aside}.", "Let's deal with {activity} now we're {here}, {aside}.",
        "{X}, {Y}, can we settle {activity} {here}, {aside}?", "Right, {activity}, {aside}, since we're {here}.",
    ),
    "formal": (
        "Since everyone is {here}, shall we settle {activity}, {aside}?",
        "Good, {X}, {Y}, let us go through {activity} {here}, {aside}.",
        "If you don't mind, I'd like to finish {activity} {here}, {aside}.",
        "Before anything else, {activity}, {aside}, now that we are {here}.",
    ),
}
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
    "formal": (
        "I appreciate everyone making the time for this.", "Let us try to be efficient about it.",
        "I would prefer to have this settled today.", "That seems perfectly reasonable.",
        "Thank you, that is very helpful.", "Shall we continue, then?", "I think we are making good progress.",
        "Please, do go on.", "I believe we are almost finished.", "Let us not forget the details.",
    ),
}
DUTIES = (
    "You are {A}, a voice assistant in a room with several people. Answer only when you are addressed, and stay quiet otherwise.",
    "This is your duty, {A}. You will hear a conversation between several people. Speak only when someone addresses you, and remain silent otherwise.",
    "{A}, you are the assistant in this room. Several people are talking. Respond only when you are spoken to; otherwise, stay quiet.",
    "You are {A}. You will listen to people talking in a shared room. When someone addresses you, answer briefly. Otherwise, do not speak.",
    "Your name is {A}. People near you are talking to each other, and sometimes to you. Answer what is asked of you, and stay quiet when it is not.",
    "{A}, several people share this room with you. When one of them asks you something, answer it. When they talk among themselves, stay silent.",
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
    "{A} knows my shopping habits better than I do.", "The first week we had {A}, nobody used it.",
)
N2_DEVICE_LINES = (
    "{D}, set a timer for ten minutes.", "{D}, what's the weather tomorrow?", "{D}, turn the volume down a bit.",
    "{D}, add milk to the shopping list.", "{D}, play some quiet jazz.", "{D}, remind me to call the bank at noon.",
    "{D}, turn off the kitchen lights.", "{D}, how long will it take to drive to work tomorrow?",
    "{D}, call my mum.", "{D}, what's on my calendar tomorrow morning?", "{D}, set an alarm for seven.",
    "{D}, skip this song.",
)
N2_PERSON_LINES = (
    "{P}, pass me that pen, would you?", "{P}, your phone's buzzing again.", "{P}, could you close the window? It's freezing.",
    "{P}, don't forget to text your mum back.", "{P}, can you turn the oven off?", "{P}, sit down, you're making me nervous.",
    "{P}, hand me the notebook, please.", "{P}, did you remember to feed the cat?", "{P}, grab me a glass of water while you're up.",
    "{P}, you've got something on your sleeve.", "{P}, can I borrow your charger later?", "{P}, is that your jacket on the floor?",
)
N3_LINES = (
    "Hmm, where did I put my glasses?", "Okay, so that's done. What's next.", "Oh no, I forgot to water the plants again.",
    "Now where's that pen gone.", "I really need a holiday.", "Ugh, it's so cold in here.", "Wait, what was I going to say?",
    "Hmm, I wonder if the post has come yet.", "I should really call my mother tonight.", "Why is this zip always stuck?",
    "Let me just write that down somewhere.", "Oh, my coffee's gone cold.", "Okay, okay, think.",
    "I wonder what time it is in Tokyo right now.", "Where did I leave my phone charger.", "I can never remember which drawer the scissors are in.",
    "Did I lock the back door this morning?", "My battery is almost dead again.",
)
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
    ("{A}, how many ounces are in a pound?", "Sixteen, I used to work in a bakery."),
    ("{A}, what time does the match start tonight?", "It's at eight, it says so on the ticket."),
    ("{A}, how do you say thank you in Japanese?", "Arigato, I learned that on holiday."),
    ("{A}, when does the last bus leave?", "Half past eleven, I take it every Friday."),
)

# ---------------------------------------------------------------------------------------------
# Task families: (rng, humans, nf, register) -> Task with exactly nf facts


class Task:
    """What a family writes: fact turns (speaker, text) in order, the request's cores per register,
    the gold answer, the activity (attribute label and the noun phrase the opening line uses) and
    the settings it fits."""

    def __init__(self, facts, cores, gold, activity, phrase, settings, asks=(), key=(), vps=()):
        self.facts, self.cores, self.gold = facts, cores, gold
        self.activity, self.phrase, self.settings = activity, phrase, settings
        # the device request (T's implicit wording; "{P}" is a human other than the speaker), the
        # gold answer's key facts (score/facts.py), and what someone says the assistant will do
        self.asks, self.key, self.vps = asks, key, vps


def _others(humans, *exclude):
    return [h for h in humans if h not in exclude]


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def clock_words(minutes: int, gold: bool = False) -> str:
    """A clock time on a 15-minute grid, as said: 'seven o'clock', 'quarter past eight', 'half past
    nine', 'quarter to ten' (12-hour). ``gold``: a full hour without "o'clock" (a recogniser writes
    it "o 'clock", which no longer matches)."""
    minutes %= 24 * 60
    h, m = divmod(minutes, 60)
    h12 = lambda x: num_word(x % 12 or 12)  # noqa: E731
    if m == 0:
        return h12(h) if gold else f"{h12(h)} o'clock"
    if m == 15:
        return f"quarter past {h12(h)}"
    if m == 30:
        return f"half past {h12(h)}"
    if m == 45:
        return f"quarter to {h12(h + 1)}"
    raise ValueError(f"{minutes} is not on the 15-minute grid")


def _hm(minutes: int) -> str:
    """A clock time for gold facts: "21:30"."""
    h, m = divmod(minutes % (24 * 60), 60)
    return f"{h}:{m:02d}"


def _ord(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


SHOPS = {  # setting -> items (singular, plural, price)
    "café": (("latte", "lattes", 4), ("cappuccino", "cappuccinos", 4), ("pot of tea", "pots of tea", 3),
             ("croissant", "croissants", 3), ("muffin", "muffins", 3), ("toasted sandwich", "toasted sandwiches", 7),
             ("hot chocolate", "hot chocolates", 5), ("slice of cake", "slices of cake", 5)),
    "kitchen": (("block of cheese", "blocks of cheese", 9), ("jar of olives", "jars of olives", 5),
                ("loaf of bread", "loaves of bread", 4), ("box of strawberries", "boxes of strawberries", 6),
                ("jar of honey", "jars of honey", 8), ("bag of apples", "bags of apples", 3)),
    "hallway": (("tin of paint", "tins of paint", 18), ("set of brushes", "sets of brushes", 6),
                ("paint roller", "paint rollers", 9), ("roll of tape", "rolls of tape", 4),
                ("pack of sandpaper", "packs of sandpaper", 5), ("dust sheet", "dust sheets", 7)),
    "living room": (("large pizza", "large pizzas", 12), ("box of noodles", "boxes of noodles", 9),
                    ("chicken curry", "chicken curries", 11), ("portion of dumplings", "portions of dumplings", 7),
                    ("portion of fries", "portions of fries", 4), ("veggie burger", "veggie burgers", 10)),
}
SHOP_ACTIVITY = {"café": ("ordering at the café counter", "the order"), "kitchen": ("writing the market list", "the market list"),
                 "hallway": ("buying supplies for painting the hall", "the paint shopping"),
                 "living room": ("ordering a takeaway", "the takeaway order")}


def t_total(rng, humans, nf, register):
    setting = pick(rng, sorted(SHOPS))
    items = rng.sample(SHOPS[setting], nf)
    while sum(p for _, _, p in items) < 10:  # a total said plainly: ten or more
        items = rng.sample(SHOPS[setting], nf)
    cur = pick(rng, CURRENCIES)
    facts, total, said, qtys = [], 0, [], []
    one = rng.sample(("I'll take the {item}, that's {p}.", "Put me down for a {item}. It says {p}.",
                      "And one {item} for me, {p}.", "I just want a {item}, {p}."), 4)
    many = rng.sample(("I want {q} {items}, they're {p} each.", "Get {q} {items} for me, at {p} each.",
                       "Make it {q} {items} for me, {p} each."), 3)
    for item, plural_, price in items:
        sp = pick(rng, humans)
        qty = pick(rng, (1, 1, 2, 3)) if price <= 9 else 1
        total += qty * price
        qtys.append(qty)
        slots = {"item": item, "items": plural_, "q": num_word(qty), "p": f"{say_num(price)} {cur}"}
        pool = one if qty == 1 else many
        pool.append(pool.pop(0))  # each wording once before any repeats
        facts.append((sp, fill(pool[-1], slots)))
        said.append(f"{num_word(qty)} {plural_ if qty > 1 else item}")
    first, last = items[0][1], items[-1][1]
    cores = {
        "casual": (f"what does all that come to, with the {last}?", f"how much is all of it, {first} included?",
                   f"what's the damage for the {first} and the rest?", f"add up the {first}, the {last} and the rest for us."),
        "neutral": (f"how much is all of that together, with the {last}?", f"what do the {first} and everything else come to?",
                    f"can you add up the whole order, from the {first} to the {last}?"),
        "formal": (f"could you tell us the total for the {first} and the other items?",
                   f"what would the whole order come to, including the {last}?"),
    }
    gold = f"The total comes to {total} {cur}. The total is {total} {cur}."
    asks = (f"Add up the {first}, the {last} and everything else and send the total to {{P}}.",
            f"Put the total for the {first}, the {last} and the rest on {{P}}'s card.",
            f"Text {{P}} what the {first} and the rest come to.",
            f"Work out the bill for the {first} and the other things and pay it from the shared account.",
            f"Read out the total for the whole order, from the {first} to the {last}.")
    prices = sorted({p for _, _, p in items} | {q * p for (_, _, p), q in zip(items, qtys)})
    key = [f"{total} {cur}"] + [f"given {p} {cur}" for p in prices if p != total]
    vps = (f"add up the {first} and the rest", "do the sums for this order", f"total it all, {last} included")
    return Task(facts, cores, gold, SHOP_ACTIVITY[setting][0], SHOP_ACTIVITY[setting][1], (setting,), asks, key, vps)


def t_split(rng, humans, nf, register):
    n = len(humans)
    birthday = pick(rng, humans) if nf >= 3 else None
    payers = n - (1 if birthday else 0)
    cur = pick(rng, CURRENCIES)
    each = rng.randint(15, 40)
    total = each * payers
    tip = 5 * rng.randint(1, 4) if total > 40 else 5
    drinks = 2 * rng.randint(4, 12) if nf >= 4 else 0
    food = total - tip - drinks
    while food < 20:
        each += 5
        total = each * payers
        food = total - tip - drinks
    s = rng.sample(humans, n)
    place = pick(rng, ("the bill came to", "the food came to", "dinner came to", "the meal was"))
    facts = [(s[0], f"Okay, {place} {food} {cur}."),
             (s[1], pick(rng, (f"Let's leave a tip of {say_num(tip)} {cur} on top, the service was great.",
                               f"Add {say_num(tip)} {cur} for the tip.", f"And a {say_num(tip)} {cur} tip, {pick(rng, humans)} insists.",
                               f"We should tip {say_num(tip)} {cur}, they were lovely.",
                               f"Put {say_num(tip)} {cur} on top for the waiter.")))]
    if birthday:
        facts.append((pick(rng, _others(humans, birthday)), f"And {birthday} isn't paying anything tonight, it's a birthday dinner."))
    if drinks:
        facts.append((s[2 % n], f"Oh, and the drinks came separately, that was another {say_num(drinks)} {cur}."))
    extra = f"with the {say_num(tip)} {cur} tip" + (" and the drinks" if drinks else "")
    cores = {
        "casual": (f"so how much does each of us pay, {extra}?", f"what's that per person, {extra}?",
                   f"split that for us, {extra}, how much each?"),
        "neutral": (f"how much does each person pay, {extra}?", f"what does that come to per person, {extra}?"),
        "formal": (f"could you work out what each of us owes, {extra}?", f"what would each person's share be, {extra}?"),
    }
    gold = f"Each person pays {each} {cur}. That is {each} {cur} each."
    asks = (f"Send {{P}} a message with what each of us owes, {extra}.",
            f"Split it between us {extra} and post the amount per person in the group chat.",
            f"Text everyone their share, {extra}.",
            f"Put the amount per person in {{P}}'s payment app, {extra}.",
            f"Work out the share per head {extra} and send it to {{P}}.")
    key = [f"{each} {cur}"] + [f"given {v} {cur}" for v in sorted({food, tip, drinks, total}) if v and v != each]
    vps = ("split the bill for us", f"work out the shares {extra}", "do the maths on this bill")
    return Task(facts, cores, gold, "splitting the bill", "the bill", ("restaurant table", "dining room", "café"), asks, key, vps)


def t_end_time(rng, humans, nf, register):
    start = rng.randrange(13 * 4, 21 * 4) * 15
    length = pick(rng, (90, 105, 120, 135, 150))
    what = pick(rng, ("film", "play", "concert", "match", "show"))
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"The {what} starts at {clock_words(start)}."),
             (s[1], pick(rng, (f"And it's {_minutes(length)} long, I checked.", f"It runs for {_minutes(length)}.",
                               f"{pick(rng, humans)} says it lasts {_minutes(length)}.", f"The ticket says {_minutes(length)}.",
                               f"It's {_minutes(length)}, without the adverts.")))]
    extra = 0
    if nf >= 3:
        ads = 15
        extra += ads
        facts.append((s[2], pick(rng, (f"Don't forget there's about fifteen minutes of adverts before the {what} actually begins.",
                                      "There are fifteen minutes of adverts first, there always are.",
                                      f"Add fifteen minutes of adverts before the {what}, {pick(rng, humans)} says."))))
    if nf >= 4:
        brk = 15
        extra += brk
        facts.append((s[0], pick(rng, ("Plus a fifteen minute break in the middle.", f"And the {what} has a fifteen minute break.",
                                      "There's an interval too, fifteen minutes."))))
    day = pick(rng, DAYS)
    cores = {
        "casual": (f"so what time is {day}'s {what} over?", f"when do we get out of the {what} on {day}, then?",
                   f"what time does the {what} on {day} actually finish?"),
        "neutral": (f"what time will the {what} end on {day}?", f"when does {day}'s {what} finish, then?"),
        "formal": (f"could you tell us when the {what} on {day} will finish?", f"at what time should {day}'s {what} be over?"),
    }
    end = clock_words(start + length + extra, gold=True)
    gold = f"It ends at {end}. The {what} starts at {clock_words(start, gold=True)} and ends at {end}."
    fin = start + length + extra
    asks = (f"Set a reminder for when {day}'s {what} ends.", f"Put {day}'s {what} in the calendar with its end time.",
            f"Text {{P}} what time the {what} on {day} finishes so we get picked up.",
            f"Book a taxi for when the {what} ends on {day}.", f"Send {{P}} the end time of the {what} on {day}.")
    key = [_hm(fin), f"given {_hm(start)}"]
    vps = (f"work out when the {what} ends", f"sort out a reminder for the end of the {what}", "book the taxi home")
    return Task(facts, cores, gold, f"going to a {what}", f"the {what} plans", ("living room", "café", "hotel lobby", "car"),
                asks, key, vps)


def _minutes(m: int) -> str:
    h, r = divmod(m, 60)
    hours = "an hour" if h == 1 else f"{num_word(h)} hours"
    if r == 0:
        return hours
    if r == 30:
        return "an hour and a half" if h == 1 else f"{num_word(h)} and a half hours"
    return f"{hours} and {num_word(r)} minutes"


OBJECTS = ("umbrella", "camera", "computer", "telephone", "calendar", "microphone", "television")
HOLDERS = ("the doctor", "the teacher", "the manager", "our uncle", "the taxi driver", "the nurse", "the pilot")


def t_who_has(rng, humans, nf, register):
    objs = rng.sample(OBJECTS, nf)
    holders_pool = rng.sample(HOLDERS, len(HOLDERS))
    facts, holders = [], {}
    for obj in objs:
        sp = pick(rng, humans)
        holder = holders_pool.pop() if chance(rng, 0.7) or not holders else pick(rng, sorted(set(holders.values())))
        text = pick(rng, (f"{cap(holder)} has the {obj}.", f"I gave the {obj} to {holder} this morning.",
                          f"The {obj} is with {holder}, I checked.", f"I left the {obj} with {holder} yesterday."))
        holders[obj] = holder
        facts.append((sp, text))
    ask = pick(rng, objs)
    cores = {
        "casual": (f"who's got the {ask} again?", f"wait, who has the {ask}?", f"remind me who took the {ask}."),
        "neutral": (f"who has the {ask} again?", f"who did the {ask} go to?"),
        "formal": (f"could you remind us who has the {ask}?", f"with whom did we leave the {ask}?"),
    }
    h = holders[ask]
    gold = f"{cap(h)} has the {ask}. The {ask} is with {h}."
    asks = (f"Note down who has the {ask} and send it to {{P}}.", f"Remind {{P}} on the phone who has the {ask}.",
            f"Add a note to the packing list saying who has the {ask}.", f"Message {{P}} who's got the {ask}.",
            f"Put who has the {ask} in the shared notes.")
    key = [h] + [f"not {o}" for o in sorted(set(holders.values())) if o != h]
    vps = ("keep track of who has what", f"note down where the {ask} went", "make a list of who took what")
    return Task(facts, cores, gold, "getting ready to leave", "the packing", ("hallway", "car", "hotel lobby", "kitchen"),
                asks, key, vps)


FILMS = ("The Long Summer", "Paper Moon", "Blue Water", "Winter King", "The Quiet Street", "The Glass Garden",
         "Green River", "The Last Orchard", "Golden Hour", "The Old Bridge")
VENUES = ("the pizza place", "the burger place", "the fish restaurant", "the noodle bar", "the Chinese restaurant",
          "the Mexican restaurant", "the French restaurant", "the sushi bar", "the taco place", "the corner cafe",
          "the Italian restaurant", "the Greek restaurant")
TRIP_CITIES = ("Lisbon", "Paris", "Rome", "London", "Berlin", "Madrid", "Dublin", "Vienna", "Prague", "Boston",
               "Chicago", "Seattle", "Amsterdam", "Barcelona")


def t_choice(rng, humans, nf, register):
    kind = pick(rng, ("restaurant", "film", "trip"))
    pool = {"restaurant": VENUES, "film": FILMS, "trip": TRIP_CITIES}[kind]
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
    facts.append((s[len(facts) % len(humans)], f"Fine, {chosen} it is, then." if nf != 4 else f"Okay, {chosen}, I'm happy with that."))
    day = pick(rng, [d for d in DAYS if d not in ("Tuesday", "Thursday")])  # heard as "two's day", "Thursday"/"Tuesday"
    hour = pick(rng, (7, 8, 9))
    if kind == "restaurant":
        cores = {
            "casual": (f"book us a table at the place we picked, {day} at {num_word(hour)}.",
                       f"get us a table at that place for {day} at {num_word(hour)}."),
            "neutral": (f"book a table at the place we chose for {day} at {num_word(hour)}.",
                        f"can you reserve a table where we just decided, {day} at {num_word(hour)}?"),
            "formal": (f"could you reserve a table at the restaurant we chose, for {day} at {num_word(hour)}?",),
        }
        gold = f"The table is booked at {chosen} for {day} evening."
        activity, phrase = "choosing a restaurant", "dinner plans"
        asks = (f"Book a table at the place we picked for {day} at {num_word(hour)}.",
                f"Reserve a table where we just decided, {day} at {num_word(hour)}, and tell {{P}}.",
                f"Get us a table at that place for {day} at {num_word(hour)}.")
        vps = ("book it once we decide", f"make the booking for {day}", "reserve a table for us")
    elif kind == "film":
        other = opts[1] if chosen == opts[0] else opts[0]
        cores = {
            "casual": (f"put on the film we agreed on, not {other}.", f"play the one we picked instead of {other}."),
            "neutral": (f"can you put on the film we agreed on, the one we chose over {other}?", f"please play the film we chose, not {other}."),
            "formal": (f"could you play the film we have agreed on, rather than {other}?",),
        }
        gold = f"The film is {chosen}. I am playing {chosen} for you."
        activity, phrase = "choosing a film", "tonight's film"
        asks = (f"Put on the film we agreed on, not {other}.", f"Play the one we picked instead of {other}.",
                f"Start the film we chose over {other} and dim the lights.")
        vps = ("put the film on", "start whichever film we pick", "play it on the big screen")
    else:
        cores = {
            "casual": (f"stick the trip we just chose in the calendar for {day}.", f"put our weekend trip in the calendar, {day}."),
            "neutral": (f"put the trip we just chose in the calendar for {day}.", f"add the trip we picked to the calendar for {day}."),
            "formal": (f"could you add the trip we have chosen to the calendar for {day}?",),
        }
        gold = f"The trip to {chosen} is in the calendar for {day}. {chosen}, on {day}."
        activity, phrase = "planning a weekend away", "the long weekend"
        asks = (f"Put the trip we just chose in the calendar for {day}.", f"Add the trip we picked to {{P}}'s calendar for {day}.",
                f"Look up trains for the trip we chose, leaving {day}.")
        vps = ("put the trip in the calendar", f"look up trains for {day}", "sort out the bookings")
    key = [chosen] + [f"not {o}" for o in opts if o != chosen]
    return Task(facts, cores, gold, activity, phrase, ("living room", "kitchen", "office break room", "balcony"), asks, key, vps)


GUEST_GROUPS = (  # (announcement, people, cancellation)
    ("{X}'s whole book club is coming, that's four of them.", 4, "One of {X}'s book club has a cold, so three."),
    ("Three of {X}'s colleagues are coming.", 3, "One of {X}'s colleagues has to work late, so two of them."),
    ("My aunt and uncle from the coast are coming.", 2, "My uncle has to stay home, so only my aunt."),
    ("Two of my old school friends will come.", 2, "One of my school friends cancelled."),
    ("My parents are coming, so that's two.", 2, "Actually, my dad just texted, he can't come after all."),
    ("Both of my grandparents are coming.", 2, "Grandad isn't feeling well, so only Grandma is coming."),
    ("{X}'s two flatmates said yes.", 2, "One of {X}'s flatmates can't make it now."),
    ("{X}'s bringing the three kids.", 3, "Oh, {X} says one of the kids is sick, so only two of them now."),
    ("The neighbours both said yes.", 2, "One of the neighbours just cancelled, so only one of them is coming."),
    ("Four people from work are coming.", 4, "One of the people from work dropped out, so it's three of them now."),
    ("My cousin is coming on her own.", 1, None),
    ("Five people from the football team can make it.", 5, "One of the football lot cancelled, so four of them now."),
    ("Six friends from the choir said yes.", 6, "One of the choir friends is away, so five of them."),
)


def t_guests(rng, humans, nf, register):
    n_groups = nf if nf < 4 else 3
    chosen = rng.sample(GUEST_GROUPS, n_groups)
    while sum(k for _, k, _ in chosen) - (nf == 4) < 5:  # small counts are easy to mishear ("four guests")
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
    event = pick(rng, ("party", "barbecue", "dinner", "picnic"))
    day = pick(rng, DAYS)
    cores = {
        "casual": (f"so how many people are coming to {day}'s {event}, not counting us?", f"how many guests is that for the {event} on {day}, then?"),
        "neutral": (f"how many guests are coming to the {event} on {day}, not including us?", f"how many people is that for {day}'s {event} altogether?"),
        "formal": (f"could you tell us how many guests to expect at the {event} on {day}?", f"how many guests should we plan for at {day}'s {event}?"),
    }
    gold = f"The total comes to {total} guests. The total is {total} guests."
    asks = (f"Update the guest list for {day}'s {event} with the number coming.",
            f"Text {{P}} how many guests to expect at the {event}.", f"Set the head count for the {event} on {day} in the booking.",
            f"Order chairs for everyone coming to {day}'s {event}, not counting us.",
            f"Send the caterer the number of guests for the {event} on {day}.")
    key = [f"{total} guests"]
    vps = ("count up the guests", f"sort out the numbers for the {event}", "keep the guest list")
    return Task(facts, cores, gold, f"planning a {event}", f"the {event} guest list", ("living room", "garden", "kitchen", "dining room"),
                asks, key, vps)


def t_budget(rng, humans, nf, register):
    cur = pick(rng, CURRENCIES)
    costs = [("The flights are {v} in total.", 10 * rng.randint(15, 30), "flights"),
             ("The hotel comes to {v} for all of us.", 10 * rng.randint(12, 25), "hotel"),
             ("The rental car is another {v}.", 10 * rng.randint(5, 10), "rental car")]
    left = 5 * rng.randint(5, 19)  # said plainly: under a hundred
    budget = left + sum(v for _, v, _ in costs[: nf - 1])
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"We've got {budget} {cur} for the whole trip.")]
    for i, (text, v, _) in enumerate(costs[: nf - 1]):
        facts.append((s[(i + 1) % len(humans)], text.format(v=f"{v} {cur}")))
    city = pick(rng, TRIP_CITIES)
    spent = _and([name for _, _, name in costs[: nf - 1]])
    cores = {
        "casual": (f"how much is left for {city} after that?", f"what's left in the {city} budget, then?"),
        "neutral": (f"how much does that leave for everything else in {city}?", f"how much of the {city} budget is left after the {spent}?"),
        "formal": (f"could you tell us what remains of the budget for {city}?", f"what would remain of our {city} budget after the {spent}?"),
    }
    gold = f"You have {left} {cur} left. {left} {cur} are left over."
    asks = (f"Work out what's left of the {city} budget after the {spent} and note it down.",
            f"Send {{P}} what remains of our {city} budget.", f"Update the {city} spreadsheet with what's left after the {spent}.",
            f"Put what's left for {city} into the savings app.", f"Text {{P}} how much of the {city} money is left.")
    key = [f"{left} {cur}", f"given {budget} {cur}"] + [f"given {v} {cur}" for _, v, _ in costs[: nf - 1]]
    vps = ("keep track of the budget", f"do the {city} budget", "work out the money side")
    return Task(facts, cores, gold, f"planning a trip to {city}", "the trip budget", ("kitchen", "living room", "café", "balcony"),
                asks, key, vps)


def t_leave(rng, humans, nf, register):
    dep = rng.randrange(7 * 4, 19 * 4) * 15
    walk = pick(rng, (15, 30, 45))
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"The train leaves at {clock_words(dep)}."),
             (s[1], pick(rng, (f"It's a {num_word(walk)} minute walk to the station.", f"We need {num_word(walk)} minutes to walk there.",
                               f"The station is {num_word(walk)} minutes on foot.", f"{pick(rng, humans)} says it's {num_word(walk)} minutes to the station.",
                               f"Walking, it takes us {num_word(walk)} minutes.", f"Give it {num_word(walk)} minutes to get to the platform.")))]
    back = walk
    if nf >= 3:
        back += 15
        facts.append((s[2], pick(rng, ("And I want to be there fifteen minutes early to buy the tickets.",
                                      "We should be at the station fifteen minutes early for the tickets.",
                                      f"{pick(rng, humans)} still needs a ticket, so fifteen minutes early, please."))))
    if nf >= 4:
        back += 15
        facts.append((s[0], pick(rng, ("We also need to stop at the cash machine, that's another fifteen minutes.",
                                      "And the cash machine on the way adds fifteen minutes.",
                                      "Don't forget the stop at the bank, fifteen more minutes."))))
    train = f"the {clock_words(dep)} train"
    cores = {
        "casual": (f"so what time do we have to leave the house for {train}?", f"when do we need to head out for {train}, then?",
                   f"what time should we be out of the door to make {train}?"),
        "neutral": (f"what time do we need to leave the house for {train}?", f"when should we leave to catch {train}?"),
        "formal": (f"could you tell us when we ought to leave for {train}?", f"at what time should we set off for {train}?"),
    }
    gold = f"You need to leave at {clock_words(dep - back, gold=True)}. The train leaves at {clock_words(dep, gold=True)}."
    asks = (f"Set an alarm for when we need to leave for {train}.", f"Remind {{P}} when we have to leave the house for {train}.",
            f"Put the time we have to leave for {train} in the calendar.",
            f"Text {{P}} the time we have to be out of the door for {train}.", f"Set a reminder to set off for {train}.")
    key = [_hm(dep - back), f"given {_hm(dep)}"]
    vps = ("set an alarm for us", "work out when we leave", "remind us when it's time to go")
    return Task(facts, cores, gold, "catching a train", "getting to the train", ("hallway", "kitchen", "hotel lobby"), asks, key, vps)


def t_pizza(rng, humans, nf, register):
    per, slices = pick(rng, (2, 3)), 8
    spare = pick(rng, (2, 4)) if nf >= 4 else 0
    people = rng.randint(5, 14)
    while -(-(people * per + spare) // slices) in (2, 4):  # "two" and "four" sound like "to" and "for"
        people = rng.randint(5, 14)
    s = rng.sample(humans, len(humans))
    facts = []
    if nf == 2:
        facts.append((s[0], f"The pizzas have eight slices each, and there'll be {say_num(people)} people."))
    else:
        facts.append((s[0], pick(rng, ("Each pizza is cut into eight slices.", "Their pizzas come in eight slices.",
                                      f"The {pick(rng, ('large', 'family', 'big', 'house'))} pizzas there have eight slices."))))
        facts.append((s[1], f"We'll be {say_num(people)} people, counting us."))
    facts.append((s[2 % len(humans)], pick(rng, (f"Everyone eats about {num_word(per)} slices, I'd say.",
                                                  f"Count {num_word(per)} slices a person.",
                                                  f"People usually have {num_word(per)} slices each.",
                                                  f"{pick(rng, humans)} reckons {num_word(per)} slices per person.",
                                                  f"Let's say {num_word(per)} slices for everyone."))))
    if spare:
        facts.append((s[0], pick(rng, (f"And I want {num_word(spare)} slices left over for lunch tomorrow.",
                                      f"Keep {num_word(spare)} extra slices for {pick(rng, humans)}'s lunch.",
                                      f"Plus {num_word(spare)} spare slices, just in case.",
                                      f"We need {num_word(spare)} more slices for the neighbours."))))
    need = people * per + spare
    pizzas = -(-need // slices)
    event = pick(rng, ("party", "film night", "game night", "birthday", "housewarming", "match"))
    day = pick(rng, DAYS)
    cores = {
        "casual": (f"how many pizzas should we get for the {event}?", f"how many pizzas is that for {day}, then?",
                   f"how many pizzas do we order for {day}'s {event}?"),
        "neutral": (f"how many pizzas should we order for the {event} on {day}?", f"how many pizzas do we need for the {event}?"),
        "formal": (f"could you work out how many pizzas we should order for the {event}?",
                   f"how many pizzas would we need for {day}'s {event}?"),
    }
    gold = f"Order {pizzas} pizzas. You need {pizzas} pizzas for {people} people."
    asks = (f"Order the pizzas for {day}'s {event}, as many as we need.", f"Put enough pizzas for the {event} in the delivery app.",
            f"Order the right number of pizzas for the {event} on {day} and tell {{P}}.",
            f"Text {{P}} how many pizzas we need for {day}.", f"Add the pizzas for the {event} to {{P}}'s order.")
    key = [f"{pizzas} pizzas", f"given {slices} slices", f"given {people} people", f"given {per} slices"] + (
        [f"given {spare} slices"] if spare else [])
    vps = ("order the pizzas", "work out the pizza order", "sort out the food order")
    return Task(facts, cores, gold, "ordering pizza for a party", "the pizza order", ("living room", "dorm room", "kitchen"),
                asks, key, vps)


def t_invite(rng, humans, nf, register):
    month = pick(rng, [m for m in MONTHS if m != "May"])  # "may" is a stop word to the offline judge
    weeks = 3 if nf >= 3 else 2
    day = rng.randint(7 * weeks + 5, 28)  # the send date is the 5th or later ("1st" is often heard "first")
    event = pick(rng, ("party", "wedding", "reunion", "celebration"))
    s = rng.sample(humans, len(humans))
    facts = [(s[0], f"The {event} is on the {_ord_words(day)} of {month}."),
             (s[1], pick(rng, (f"The invitations should go out two weeks before the {event}.", "Invitations go out two weeks ahead, as usual.",
                               f"{pick(rng, humans)} says two weeks' notice for the invitations.",
                               f"Send the {event} invitations two weeks before, I think.", "Two weeks before is normal for invitations.")))]
    if nf >= 3:
        facts.append((s[2], pick(rng, ("Let's make it three weeks before, people are busy these days.",
                                      f"No, three weeks before the {event}, people book up early.",
                                      "Better make that three weeks, everyone's so busy."))))
    if nf >= 4:
        facts.append((s[0], pick(rng, ("And the cake needs to be ordered ten days ahead, but that's my job.",
                                      f"The cake is ten days ahead, {pick(rng, humans)} will handle it.",
                                      "I'll order the cake ten days before, don't worry about that."))))
    cores = {
        "casual": (f"so what date do the {month} {event} invitations go out?", f"when do we send the invitations for the {event} in {month}, then?"),
        "neutral": (f"which day should the invitations for the {month} {event} go out?", f"on what date do we send the {event} invitations for {month}?"),
        "formal": (f"could you tell us the date to send the invitations for the {event} in {month}?",
                   f"when ought the {month} {event} invitations to go out?"),
    }
    send = f"the {_ord(day - 7 * weeks)} of {month}"
    gold = f"You need to send them on {send}. The date is {send}."
    asks = (f"Set a reminder for the day the {month} {event} invitations go out.",
            f"Put the date for sending the {event} invitations in {{P}}'s calendar.",
            f"Schedule the {month} {event} invitations to go out on the right day.",
            f"Add the invitation date for the {event} in {month} to the calendar.",
            f"Tell {{P}}'s phone when the {event} invitations have to go out.")
    key = [send, f"given the {_ord(day)} of {month}"]
    vps = ("set a reminder for the invitations", "put the dates in the calendar", "keep track of the deadlines")
    return Task(facts, cores, gold, f"planning a {event}", f"the {event} invitations", ("kitchen", "garden", "dining room"),
                asks, key, vps)


def _ord_words(n: int) -> str:
    from ._common import ordinal

    return ordinal(n)


FAMILIES = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("t_") and callable(fn)}


# ---------------------------------------------------------------------------------------------
# Attributes


def choose_attributes(rng: random.Random, task: Task, register: str) -> dict:
    """The five attributes of a scenario: the setting among the task's, its activity, a
    relationship, a device context, and the register (drawn first: the task's wording needs it)."""
    return {
        "setting": pick(rng, list(task.settings)), "activity": task.activity,
        "relationship": pick(rng, sorted(RELATIONSHIPS)), "device": pick(rng, sorted(DEVICE_CONTEXTS)),
        "register": register,
    }


def opener(rng: random.Random, attrs: dict, task: Task, humans: list[str], speaker: str) -> str:
    others = _others(humans, speaker)
    x, y = rng.sample(others, 2) if len(others) >= 2 else (others[0], others[0])
    template = pick(rng, OPENERS[attrs["register"]])
    return fill(template, {"X": x, "Y": y, "activity": task.phrase, "here": SETTINGS[attrs["setting"]],
                           "aside": pick(rng, RELATIONSHIPS[attrs["relationship"]])})


# ---------------------------------------------------------------------------------------------
# Scene layout


# The context that the assistant will be asked (an N1 turn before T, in both twins).
ASK_CONTEXTS = (
    "Let's have {A} {vp} in a minute.", "{A} can {vp}, I'll ask in a second.",
    "Don't bother with a pen, I'll get {A} to {vp}.", "{P}, remind me to ask {A} to {vp}.",
    "I'll ask {A} to {vp} once we're done.", "We can just get {A} to {vp} afterwards.",
    "Leave it, {A} will {vp} when I ask.", "Hang on, I'll want {A} to {vp}.",
)
# Explicit T: the implicit request with the assistant's name, at the start, in the middle or at
# the end, as a bare name, a greeting or a question ({r}: the request, {R}: capitalised,
# {r_}/{R_}: without its final stop).
EXPLICIT_FORMS = (
    "{A}, {r}", "Hey {A}, {r}", "{A}? {R}", "Okay {A}, {r}", "{R_}, {A}.", "{R_}, would you, {A}?",
    "{A}, could you {r_}?", "Right, {A}, {r}", "{A}, please {r}", "Can you {r_}, {A}?",
)
HUMAN_QUESTION_SHARE = 0.6  # scenes where one human asks another an unnamed question (N2)


def explicit_request(form: str, request: str, A: str) -> str:
    r = request[0].lower() + request[1:]
    r_ = r.rstrip(".!?")
    return form.format(A=A, r=r, R=cap(r), r_=r_, R_=cap(r_))


def make_pair(index: int, rng: random.Random, pair_id: str, seed: int = 0, used=frozenset()) -> list[dict]:
    """One scenario as an (explicit, implicit) pair of scene dicts: the same turns and timings,
    T's wording aside (the implicit one is a request only a device could carry out; an earlier N1
    turn says the assistant will be asked). ``used``: normalised scored sentences of the scenes
    before this one; each scored line is drawn again (a few times) while it is among them."""
    from . import mpe_lines as L
    from .variety import normalise_sentence

    mine: set = set()

    def fresh(draw, tries: int = 30):
        """A draw whose scored sentences (one text or a tuple) are new to the set and the scene."""
        for _ in range(tries):
            out = draw()
            norms = [normalise_sentence(x, A) for x in (out if isinstance(out, tuple) else (out,))]
            if not (set(norms) & (used | mine)) and len(set(norms)) == len(norms):
                break
        mine.update(norms)
        return out

    families = sorted(FAMILIES)
    family = families[block_choice(KIND, seed, index, len(families))]
    has_n4 = not block_flag(KIND, seed, index)
    humans = rng.sample(NAMES, rng.randint(3, 4))
    A = pick(rng, ASSISTANT_NAMES)

    n_total = rng.randint(TURNS_RANGE[0] + (2 if has_n4 else 0), TURNS_RANGE[1])
    q = rng.randint(4, n_total - 1)  # T's index: after the duty, two facts and the ask context
    pre, post = q - 1, n_total - 1 - q  # human turns before / after T
    budget = n_total - 2 - (2 if has_n4 else 0)  # facts + silence + fillers
    nf = rng.randint(FACTS_RANGE[0], min(FACTS_RANGE[1], pre - 1, budget - SILENCE_RANGE[0]))
    n_sil = rng.randint(SILENCE_RANGE[0], min(SILENCE_RANGE[1], budget - nf))
    n_fill = budget - nf - n_sil
    hq = chance(rng, HUMAN_QUESTION_SHARE)
    if hq and n_fill == 0:
        if n_sil > SILENCE_RANGE[0]:
            n_sil, n_fill = n_sil - 1, 1
        else:
            hq = False
    register = pick(rng, REGISTERS)
    task = FAMILIES[family](rng, humans, nf, register)
    assert len(task.facts) == nf, (family, nf, len(task.facts))
    attrs = choose_attributes(rng, task, register)
    devices = DEVICE_CONTEXTS[attrs["device"]]

    # units: the ask context (before T), silence turns (N1, N2, N3 each at least once), fillers,
    # the humans' question pair (a statement, then another human's unnamed question: N2) and N4
    sil = ["N2", "N3"] + [pick(rng, ("N1", "N2", "N2", "N3", "N3")) for _ in range(n_sil - 3)]
    units: list[list[str]] = [[x] for x in sil] + [["ctx-fill"] for _ in range(n_fill)]
    if hq:
        units.remove(["N2"])
        units.remove(["ctx-fill"])
        units.append(["hq-s", "hq-q"])
    if has_n4:
        units.append(["N4Q", "N4R"])
    rng.shuffle(units)
    free_pre = pre - nf - 1
    pre_units, post_units = [], []
    for u in units:  # whole units fill the turns before T, in a random order
        (pre_units if len(u) <= free_pre else post_units).append(u)
        free_pre -= len(u) if len(u) <= free_pre else 0
    if free_pre:  # one turn short and only pairs left: swap a single turn for a pair
        single = next(u for u in pre_units if len(u) == 1)
        pair = next(u for u in post_units if len(u) == 2)
        pre_units[pre_units.index(single)], post_units[post_units.index(pair)] = pair, single
    rng.shuffle(pre_units)
    rng.shuffle(post_units)
    # the first human turn opens the scene with the first fact; the other facts (in order) and
    # the ask context are interleaved with the pre-T units
    pre_items: list = [list(u) for u in pre_units] + [["ask"]]
    rng.shuffle(pre_items)
    later = sorted(rng.sample(range(1, len(pre_items) + nf), nf - 1))
    fact_slots = [0] + later
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

    fillers = rng.sample(FILLERS[register], len(FILLERS[register]))
    q_text, r_text = fresh(lambda: L.n4_event(rng, A, humans))
    hq_s, hq_q = L.human_question(rng)
    if hq:
        hq_s, hq_q = fresh(lambda: L.human_question(rng))
    duty = fill(pick(rng, DUTIES), {"A": A})
    turns = [make_turn("t0", NARRATOR, "duty", duty)]
    prev = None
    spoken: set = set()

    def other_than(*names):
        cands = [h for h in humans if h not in names]
        fresh = [h for h in cands if h not in spoken]  # everyone speaks at least once
        return pick(rng, fresh or cands)

    t_index = q_id = asker = hq_speaker = None
    for item in seq:
        tid = f"t{len(turns)}"
        kw: dict = {}
        g = gap(rng, 0.5, 1.0) if len(turns) == 1 else gap(rng, 0.2, 0.8)
        if isinstance(item, tuple):
            sp, text = task.facts[item[1]]
            if item[1] == 0:
                text = f"{opener(rng, attrs, task, humans, sp)} {text}"
            label = "ctx"
        elif item == "ask":
            sp = asker = other_than(prev)
            p = other_than(sp)
            text = fresh(lambda: fill(pick(rng, ASK_CONTEXTS), {"A": A, "vp": pick(rng, task.vps), "P": p}))
            label = "N1"
        elif item == "T":
            # most often the one who said they would ask
            sp = asker if asker and chance(rng, 0.7) else other_than()
            text, label = "", "T"
            t_index = len(turns)
        elif item == "ctx-fill":
            sp, text, label = other_than(prev), fillers.pop(), "ctx"
        elif item == "hq-s":
            sp = hq_speaker = other_than(prev)
            text, label = hq_s, "ctx"
        elif item == "hq-q":
            sp, text, label = other_than(hq_speaker), hq_q, "N2"
            kw["addressee"] = hq_speaker
        elif item == "N1":
            sp, text, label = other_than(prev), fresh(lambda: L.n1(rng, A, humans)), "N1"
        elif item == "N2":
            sp, label = other_than(prev), "N2"
            if devices and chance(rng, 0.6):
                call, dev = pick(rng, devices)
                text, kw["addressee"] = fresh(lambda: L.n2_device(rng, call)), dev
            else:
                to = other_than(sp)
                text, kw["addressee"] = fresh(lambda: L.n2_person(rng, to)), to
        elif item == "N3":
            sp, text, label = other_than(prev), fresh(lambda: L.n3(rng)), "N3"
        elif item == "N4Q":
            sp, text, label = other_than(prev), q_text, "N4Q"
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
        spoken.add(sp)
        prev = sp
    for h in humans:  # still silent: take over a silence turn of someone who speaks more than once
        if h in spoken:
            continue
        counts = {x: sum(t["speaker"] == x for t in turns) for x in humans}
        for i in range(len(turns) - 1, 0, -1):
            t = turns[i]
            if t["label"] == "N3" and counts[t["speaker"]] > 1:
                turns[i] = {**t, "speaker": h}
                spoken.add(h)
                break

    t_speaker = turns[t_index]["speaker"]
    def request():
        implicit = fill(pick(rng, task.asks), {"P": pick(rng, _others(humans, t_speaker))})
        return explicit_request(pick(rng, EXPLICIT_FORMS), implicit, A), implicit

    explicit, implicit = fresh(request)
    attributes = {**attrs, "task": family}
    out = []
    for condition, text in (("explicit", explicit), ("implicit", implicit)):
        ts = [dict(t) for t in turns]
        t = ts[t_index]
        ts[t_index] = make_turn(t["id"], t["speaker"], "T", text, gap=t.get("gap"),
                                addressee=A if condition == "explicit" else None, gold_answer=task.gold,
                                gold_facts=list(task.key))
        out.append(make_scene(f"{pair_id}-{condition}", KIND, [NARRATOR, *humans], ts, assistant_name=A, duty=duty,
                              condition=condition, pair_id=pair_id, attributes=attributes))
    return out


# ---------------------------------------------------------------------------------------------
# Manifest extras (counts per attribute value, N4 share)


def manifest_counts(scenes: list[dict]) -> dict:
    """Counts the MPE manifest adds: per attribute value (over pairs), N4 share, silence kinds."""
    from ._common import flow_map

    pairs = {}
    for d in scenes:
        pairs.setdefault(d.get("pair_id", d["id"]), d)
    attrs: dict = {}
    for d in pairs.values():
        for k, v in (d.get("attributes") or {}).items():
            attrs.setdefault(k, {})
            attrs[k][v] = attrs[k].get(v, 0) + 1
    n4 = sum(1 for d in scenes if any(t["label"] == "N4Q" for t in d["turns"]))
    humans = {}
    for d in pairs.values():
        k = len([s for s in d["speakers"] if s != NARRATOR])
        humans[k] = humans.get(k, 0) + 1
    n2 = {"device": 0, "person": 0}
    for d in scenes:
        names = set(d["speakers"])
        for t in d["turns"]:
            if t["label"] == "N2":
                n2["person" if t.get("addressee") in names else "device"] += 1
    return {
        "n4_share": round(n4 / len(scenes), 4) if scenes else 0.0,
        "humans": flow_map(dict(sorted(humans.items()))),
        "n2_addressees": flow_map(n2),
        "attributes": {k: flow_map(dict(sorted(v.items(), key=lambda kv: (-kv[1], str(kv[0]))))) for k, v in sorted(attrs.items())},
    }


def manifest(set_name: str, scenes: list[dict], splits: dict[str, str], n: int, seed: int, generator: dict,
             regenerate: str, description: str) -> dict:
    """An MPE set's manifest: the layout of every generated set's (set, kind, description,
    generator, regenerate, counts, scenes) with MPE's counts added: per attribute value (over
    pairs), N4 share, humans per scene, N2 addressee kinds."""
    from ..schema import LABELS
    from ._common import flow_map

    labels = {lab: 0 for lab in LABELS}
    silence = 0
    for d in scenes:
        for t in d["turns"]:
            labels[t["label"]] += 1
            silence += t["label"] in ("N1", "N2", "N3")
    n4 = sum(1 for d in scenes if any(t["label"] == "N4Q" for t in d["turns"]))
    counts = {"scenes": len(scenes), "pairs": n, "n4_scenes": n4, "silence_windows": silence,
              "splits": flow_map({s: sum(1 for v in splits.values() if v == s) for s in ("train", "val", "test")}),
              "turns": flow_map({k: v for k, v in labels.items() if v}), **manifest_counts(scenes)}
    return {"set": set_name, "kind": KIND, "description": description, "generator": flow_map(generator),
            "regenerate": regenerate, "counts": counts, "scenes": dict(splits)}


def write_files(folder, files: dict[str, str], prefix: str) -> list[str]:
    """Write ``files`` into ``folder``; scene files ``<prefix>-*.yaml`` not among them are removed
    (returned). Unchanged files are not rewritten."""
    from pathlib import Path

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    removed = []
    for old in sorted(folder.glob(f"{prefix}-*.yaml")):
        if old.name not in files:
            old.unlink()
            removed.append(old.name)
    for fname, text in files.items():
        path = folder / fname
        data = text.encode("utf-8")
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
    return removed
