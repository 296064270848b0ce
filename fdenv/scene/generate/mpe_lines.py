"""Compositional lines for MPE's silence turns, N4 events and the humans' questions to each other.

Each line is a template with slots filled from word pools (people, places, rooms, objects,
chores, times, quantities), so a set of 600 pairs draws thousands of distinct sentences; the set
generator re-draws a scene whose scored sentence was already used (``variety.py``). Every
function takes the scene's generator and returns text (and, for pairs, both texts).
"""

from __future__ import annotations

from ._common import CITIES, DAYS, MONTHS, PLACES, RELATIVES, cap, fill, num_word, pick

OBJECTS = (  # singular: the templates say "it"
    "glasses case", "key ring", "phone charger", "umbrella", "wallet", "blue notebook", "headset", "stapler",
    "good pen", "tape measure", "reading light", "battery pack", "bike lock", "library card", "sun hat",
    "water bottle", "car key", "passport", "laptop bag", "woolly hat", "scarf", "remote control", "torch", "diary",
    "lunch box", "train pass", "yellow folder", "hairbrush", "calculator", "USB stick",
)
ROOMS = ("kitchen", "hallway", "bedroom", "bathroom", "living room", "garage", "study", "cellar", "attic", "car")
CHORES = (  # (base form, past participle)
    ("call the garage", "called the garage"), ("book the dentist", "booked the dentist"),
    ("email the landlord", "emailed the landlord"), ("pick up the parcel", "picked up the parcel"),
    ("pay the electricity bill", "paid the electricity bill"), ("water the plants", "watered the plants"),
    ("renew the passport", "renewed the passport"), ("return the library books", "returned the library books"),
    ("fix the bike light", "fixed the bike light"), ("cancel the gym membership", "cancelled the gym membership"),
    ("order the new curtains", "ordered the new curtains"), ("send the birthday card", "sent the birthday card"),
    ("take the bins out", "taken the bins out"), ("clean the oven", "cleaned the oven"),
    ("book the train tickets", "booked the train tickets"), ("ring the insurance people", "rung the insurance people"),
    ("print the boarding passes", "printed the boarding passes"), ("defrost the freezer", "defrosted the freezer"),
    ("buy more coffee", "bought more coffee"), ("change the smoke alarm battery", "changed the smoke alarm battery"),
    ("answer the school email", "answered the school email"), ("move the car", "moved the car"),
    ("check the tyre pressure", "checked the tyre pressure"), ("collect the dry cleaning", "collected the dry cleaning"),
    ("feed the neighbour's cat", "fed the neighbour's cat"), ("sign the permission slip", "signed the permission slip"),
)
GENRES = ("jazz", "old rock songs", "film music", "salsa", "eighties pop", "piano music", "folk songs", "reggae",
          "classical music", "country music", "soul", "hip hop")
TOPICS = ("the moon landing", "volcanoes", "the Roman empire", "black holes", "sharks", "the pyramids", "dinosaurs",
          "the weather in Iceland", "football rules", "chess openings", "bread baking", "the tides")
SHOP_ITEMS = ("oat milk", "eggs", "washing up liquid", "rice", "tomatoes", "bin bags", "coffee beans", "butter",
              "toothpaste", "bananas", "cat food", "olive oil", "orange juice", "flour", "tea bags", "yoghurt")
VENUES = ("the pharmacy", "the library", "the post office", "the bakery", "the bank", "the gym", "the swimming pool",
          "the museum", "the garden centre", "the supermarket", "the hardware shop", "the dry cleaner",
          "the bike shop", "the butcher's", "the market hall", "the launderette")
WORDS = (("necessary", "one c and two s's"), ("rhythm", "r h y t h m"), ("Wednesday", "with a d after the n"),
         ("separate", "with an a in the middle"), ("embarrass", "two r's and two s's"), ("accommodate", "two c's and two m's"),
         ("February", "with an r after the b"), ("definitely", "it's i t e at the end"), ("receipt", "with a silent p"),
         ("colleague", "it ends in g u e"), ("restaurant", "a u in the middle"), ("tomorrow", "one m and two r's"))
CAPITALS = (("Australia", "Canberra"), ("Canada", "Ottawa"), ("Brazil", "Brasilia"), ("Turkey", "Ankara"),
            ("Switzerland", "Bern"), ("New Zealand", "Wellington"), ("Morocco", "Rabat"), ("Vietnam", "Hanoi"),
            ("Nigeria", "Abuja"), ("Pakistan", "Islamabad"), ("Scotland", "Edinburgh"), ("Kenya", "Nairobi"))
ABSENT = ("Grandma", "Uncle Joe", "Auntie Sue", "Marcus", "Ella", "Rafael", "Bianca", "Tobias", "Hamid", "Greta")
WEATHER = ("rain all day", "sunny and warm", "cloudy but dry", "windy with showers", "cold and clear", "foggy in the morning")


def clock(minutes: int) -> str:
    """A clock time on a 5-minute grid, said the everyday way."""
    h, m = divmod(minutes % (24 * 60), 60)
    hw = num_word(h % 12 or 12)
    if m == 0:
        return f"{hw} o'clock"
    if m == 30:
        return f"half past {hw}"
    if m == 15:
        return f"quarter past {hw}"
    if m == 45:
        return f"quarter to {num_word((h + 1) % 12 or 12)}"
    return f"{hw} {num_word(m) if m >= 10 else 'oh ' + num_word(m)}"


def _time(rng, lo=7, hi=22) -> str:
    return clock(rng.randrange(lo * 12, hi * 12) * 5)


def _slots(rng, humans=(), **extra) -> dict:
    o1, o2 = rng.sample(OBJECTS, 2)
    base, pp = pick(rng, CHORES)
    return {"obj": o1, "obj2": o2, "room": pick(rng, ROOMS), "rel": pick(rng, RELATIVES), "day": pick(rng, DAYS),
            "month": pick(rng, MONTHS), "chore": base, "done": pp, "genre": pick(rng, GENRES),
            "topic": pick(rng, TOPICS), "city": pick(rng, CITIES), "place": pick(rng, PLACES),
            "time": _time(rng), "n": num_word(rng.randint(2, 12)), "P": pick(rng, humans) if humans else "Sam",
            "item": pick(rng, SHOP_ITEMS), "venue": pick(rng, VENUES), **extra}


N1_TEMPLATES = (
    "{A} played {genre} all evening at {rel}'s party last {day}.",
    "I asked {A} about {topic} on {day} and it knew more than my teacher did.",
    "My {rel} is convinced {A} listens to everything we say about the {obj}.",
    "{A} woke me up at {time} on {day} with the wrong alarm.",
    "I bet {A} is bored of hearing about the {obj} by now.",
    "Honestly, {A} remembers {P}'s appointments better than {P} does.",
    "Before we had {A}, I used to write everything on the fridge, even the {obj}.",
    "{P} says {A} sounds nicer than the old speaker in the {room}.",
    "The first thing {P} ever asked {A} was something about {topic}.",
    "I taught {A} to play {genre} when {rel} comes round.",
    "{A} got confused when {P} and {rel} both talked at once in the {room}.",
    "Last {month} {A} ordered {item} twice because of me.",
    "It's funny how {A} always finds {genre} I've never heard of.",
    "{P} keeps thanking {A}, even for reading out the weather in {city}.",
)
N2_DEVICE_TEMPLATES = (
    "{D}, set a timer for {n} minutes.", "{D}, what's the weather in {city} on {day}?",
    "{D}, play some {genre} in the {room}.", "{D}, add {item} to the shopping list.",
    "{D}, remind me to {chore} at {time}.", "{D}, turn off the lights in the {room}.", "{D}, call {rel}.",
    "{D}, set an alarm for {time} on {day}.", "{D}, what's on my calendar for {day}?",
    "{D}, how long is the drive to {place} right now?", "{D}, put {item} and {item2} on the list.",
    "{D}, play the news from {city}.",
)
N2_PERSON_TEMPLATES = (
    "{Q}, pass me the {obj}, would you?", "{Q}, could you shut the {room} window? It's freezing.",
    "{Q}, can I borrow your {obj} on {day}?", "{Q}, is that your {obj} in the {room}?",
    "{Q}, grab me the {obj} from the {room} while you're up.", "{Q}, your {obj} is by the {room} door.",
    "{Q}, don't forget to {chore} on {day}.", "{Q}, remind me later to {chore}.",
    "{Q}, did you put my {obj} in the {room}?", "{Q}, could you bring the {obj} back on {day}?",
)
N3_TEMPLATES = (
    "Hmm, where did I leave my {obj}? I had it in the {room} this morning.",
    "Oh no, I forgot to {chore} again.", "I really must {chore} before {day}.",
    "Did I leave the {obj} in the {room}? I hope not.", "Now I can't remember if I've {done}.",
    "Note to self, {chore} on {day}.", "I wonder if {rel} got my message about the {obj}.",
    "Ugh, the {obj} is broken again, I'll need a new one by {day}.",
    "Why do I always lose the {obj} in the {room}?", "Hmm, I think I left the {obj} at {rel}'s place.",
    "I should {chore} tomorrow, or maybe {day}.", "Where on earth is the {obj}? It was right here.",
    "Wait, did I pack the {obj} for {day}?", "Right, {chore}, then the {obj}, then bed.",
)
# An unnamed question from one human to another about what the other said (N2, to a person).
STATEMENTS = (
    "I still have to {chore} before {day}.", "I was going to {chore} this morning but ran out of time.",
    "I promised {rel} I'd {chore} today.", "Remind me, I need to {chore} at some point this week.",
    "I keep meaning to {chore}, it's on my list.",
)
FOLLOW_UPS = (
    "So did you {chore} in the end?", "Have you {done} yet?", "Did you manage to {chore} after all?",
    "Wait, have you actually {done}?", "And did you {chore} or not?", "Sorry, so have you {done} now?",
    "Did you {chore} before {day}, then?", "Are you going to {chore} on {day}?", "Have you {done} for {rel} yet?",
    "Did {rel} ask you to {chore} too?", "Do you want me to {chore} on {day} instead?",
    "Is it too late to {chore} today?", "Did you {chore} this morning or yesterday?",
)


def n1(rng, A, humans):
    return fill(pick(rng, N1_TEMPLATES), _slots(rng, humans, A=A))


def n2_device(rng, call):
    s = _slots(rng, item2=pick(rng, SHOP_ITEMS))
    if s["item2"] == s["item"]:
        s["item2"] = "bread"
    return fill(pick(rng, N2_DEVICE_TEMPLATES), {**s, "D": call})


def n2_person(rng, to):
    return fill(pick(rng, N2_PERSON_TEMPLATES), _slots(rng, Q=to))


def n3(rng):
    return fill(pick(rng, N3_TEMPLATES), _slots(rng))


def human_question(rng) -> tuple[str, str]:
    """(a human's statement about a chore, another human's unnamed question about it)."""
    s = _slots(rng)
    return fill(pick(rng, STATEMENTS), s), fill(pick(rng, FOLLOW_UPS), s)


def n4_event(rng, A, humans) -> tuple[str, str]:
    """(a question to the assistant, the human answer that resolves it)."""
    s = _slots(rng, humans, A=A)
    kind = rng.randrange(9)
    if kind == 0:
        q = pick(rng, ("{A}, what time does {venue} close on {day}?", "{A}, when does {venue} shut on {day}?"))
        r = pick(rng, ("Don't worry, it closes at {time}, I was there last week.", "It's {time} on {day}s, I checked this morning."))
    elif kind == 1:
        a, b = rng.randint(6, 19), rng.randint(6, 19)
        s.update(a=num_word(a), b=num_word(b), ab=str(a * b))
        q = pick(rng, ("{A}, what's {a} times {b}?", "{A}, quick, {a} times {b}?"))
        r = pick(rng, ("It's {ab}, I just did it in my head.", "That's {ab}, easy."))
    elif kind == 2:
        s["weather"] = pick(rng, WEATHER)
        q = pick(rng, ("{A}, what's the weather going to be in {city} on {day}?", "{A}, will it rain in {city} on {day}?"))
        r = pick(rng, ("Never mind, I've got the app open, it's {weather} in {city}.", "I just looked, {weather} there on {day}."))
    elif kind == 3:
        s["P"] = pick(rng, [n for n in ABSENT if n not in humans])  # someone not in the room
        q = pick(rng, ("{A}, when does {P}'s train get in on {day}?", "{A}, what time is {P} arriving on {day}?"))
        r = pick(rng, ("Forget it, {P} just texted, {time}.", "{P} said {time}, it's in the group chat."))
    elif kind == 4:
        q = pick(rng, ("{A}, what's the number for {venue}?", "{A}, can you find the phone number of {venue}?"))
        r = pick(rng, ("Don't bother, I've got {venue} saved, I'll ring them.", "I have it, {venue} is in my contacts."))
    elif kind == 5:
        word, how = pick(rng, WORDS)
        s.update(word=word, how=how)
        q = pick(rng, ("{A}, how do you spell {word}?", "{A}, spell {word} for me?"))
        r = pick(rng, ("Got it, {word} is {how}.", "Oh, I remember, {how}."))
    elif kind == 6:
        country, capital = pick(rng, CAPITALS)
        s.update(country=country, capital=capital)
        q = pick(rng, ("{A}, what's the capital of {country}?", "{A}, which city is the capital of {country}?"))
        r = pick(rng, ("It's {capital}, everyone gets that one wrong.", "{capital}, I learned that at school."))
    elif kind == 7:
        s["mins"] = num_word(5 * rng.randint(2, 11))
        q = pick(rng, ("{A}, how far is {place} from here?", "{A}, how long does it take to walk to {place}?"))
        r = pick(rng, ("About {mins} minutes on foot, we walked it on {day}.", "{mins} minutes, I do it every {day}."))
    else:
        q = pick(rng, ("{A}, is {venue} open on {day}?", "{A}, does {venue} open on {day}s?"))
        r = pick(rng, ("Yes, until {time}, it says so on the door.", "No, it's closed on {day}s, I tried last month."))
    return cap(fill(q, s)), cap(fill(r, s))
