"""FDB user interruption: context, a ``final`` request that invites a long answer, then an
``interrupt`` that barges in while the assistant answers and changes or narrows the request. The
``gold_answer`` on the interrupt describes what a fitting answer to the changed request contains."""

from __future__ import annotations

import random

from ._common import (
    ASSISTANT_NAMES, CITIES, DAYS, MONTHS, NAMES, PLACES, RELATIVES, block_choice, cap, chance, gap, make_scene,
    make_turn, num_word, pick,
)

KIND = "interruption"
VERSION = 2
DEFAULT_N = 200

MEAT_DISHES = (("spaghetti bolognese", "beef", "lentils"), ("chicken curry", "chicken", "chickpeas"),
               ("beef tacos", "beef", "black beans"), ("lasagne", "minced beef", "spinach and ricotta"),
               ("chili con carne", "beef", "kidney beans"), ("shepherd's pie", "lamb", "lentils and mushrooms"),
               ("chicken stir fry", "chicken", "tofu"), ("meatballs", "pork", "mushrooms and breadcrumbs"))
TOPICS = (("rainbows form", "rainbows form"), ("vaccines work", "vaccines work"), ("planes stay in the air", "planes fly"),
          ("the internet works", "the internet works"), ("tides work", "tides work"),
          ("batteries store energy", "batteries work"), ("earthquakes happen", "earthquakes happen"),
          ("the heart pumps blood", "the heart works"))
THINGS = ("heating", "washing machine", "window in the bedroom", "shower", "front door lock", "fridge")
ANIMALS = ("rabbit", "penguin", "turtle", "pig", "hedgehog", "cat")
DISHES = ("a roast dinner", "tacos", "a big salad", "pancakes", "a barbecue", "fish and chips")
LANGS = (("Spanish", "buenos días", "gracias"), ("French", "bonjour", "merci"), ("Italian", "buongiorno", "grazie"),
         ("German", "guten Morgen", "danke"), ("Portuguese", "bom dia", "obrigado"), ("Dutch", "goedemorgen", "dank je"))
HOBBIES = ("gardening", "cooking", "photography", "hiking", "board games", "music", "reading", "cycling")
CURRENCIES = ("dollars", "euros", "pounds")
WAITS = ("Wait, actually,", "Sorry,", "Hang on,", "Oh, hold on,", "No, wait,", "Actually, sorry,")
# Partner lines and openers: two parts each, so no one line dominates a split.
PARTNER_LINES = tuple(f"{a} {b}" for a in ("Just ask,", "Go on,", "Don't look at me,", "Ask it,", "You could just ask,", "Honestly,")
                      for b in ("it's quicker than searching.", "I have no idea.", "I want to hear this too.", "you know.",
                                "I've been wondering the same.", "it knows this stuff."))
OPENERS = tuple(f"{a} {b}" for a in ("Okay,", "Hi,", "Right,", "Morning,", "Hey there,", "So,")
                for b in ("I need your help with something.", "are you there?", "let's get this sorted.", "can you help me for a minute?",
                          "I've got a big one for you.", "I need a hand with something.", "have you got a minute?"))


def _w(rng):
    return pick(rng, WAITS)


# Each family: rng -> (situation line or None, final request, interrupt, gold answer for the interrupt).

def f_vegetarian(rng):
    dish, meat, sub = pick(rng, MEAT_DISHES)
    who = pick(rng, RELATIVES)
    return (pick(rng, (f"{cap(who)} is coming over for dinner tonight.", "We've got guests tonight.", "Friends are coming round later.",
                       f"I'm cooking for {who} on {pick(rng, DAYS)}.")),
            f"Can you give me a recipe for {dish}? Walk me through it step by step, I've got about an hour.",
            f"{_w(rng)} make it vegetarian, {who} doesn't eat meat.",
            f"A vegetarian {dish}, using {sub} instead of the {meat}.")


def f_one_day(rng):
    city, n = pick(rng, CITIES), rng.randint(3, 5)
    day = pick(rng, DAYS)
    return (f"I'm going to {city} for work next month.",
            f"Can you plan a {num_word(n)}-day trip to {city} for me, with places to eat and things to see?",
            f"{_w(rng)} make it just one day, I'm only free on {day}.",
            f"A one-day plan for {city} with the main sights and a place to eat.")


def f_simple(rng):
    long, short = pick(rng, TOPICS)
    return (pick(rng, ("My nephew asked me something today.", "I was reading about this earlier.", None,
                       f"{cap(pick(rng, RELATIVES))} and I were arguing about this.", "There was a programme about it on the radio.")),
            f"Can you explain how {long}? {cap(pick(rng, RELATIVES))} asked me and I want to go into the details.",
            f"{_w(rng)} can you explain it like I'm {num_word(rng.randint(5, 9))}? Keep it really simple.",
            f"A very simple, child-friendly explanation of how {short}.")


def f_free(rng):
    city = pick(rng, CITIES)
    return (f"We're in {city} this weekend.",
            f"What are some good things to do in {city} with {pick(rng, RELATIVES)}? Give me a few options with the details.",
            f"{_w(rng)} only free things, please, we're on a tight budget until {pick(rng, DAYS)}.",
            f"A few free things to do in {city}, such as parks, walks or free museums.")


def f_polite(rng):
    thing, weeks, name = pick(rng, THINGS), rng.randint(2, 6), pick(rng, NAMES)
    return (f"The {thing} has been broken for {num_word(weeks)} weeks now.",
            f"Help me write an email to my landlord, {name}, about the broken {thing}. Say it's been {num_word(weeks)} weeks.",
            f"{_w(rng)} make it more polite, {name} is actually really nice.",
            f"A polite email to the landlord asking for the {thing} to be repaired.")


def f_story(rng):
    animal, name = pick(rng, ANIMALS), pick(rng, NAMES)
    if chance(rng, 0.5):
        return (pick(rng, ("My daughter can't sleep.", "The little one is still awake.", f"{name}'s sister can't sleep.")),
                f"Tell me a bedtime story about a {animal} called {name} who wants to learn to fly.",
                f"{_w(rng)} can {name} be a dragon instead of a {animal}?",
                f"A bedtime story about a dragon called {name} who wants to learn to fly.")
    return (pick(rng, ("The kids are in bed.", "She's in her pyjamas already.", "Bedtime, finally.")),
            f"Tell me a long bedtime story about a {animal} called {name} who goes on an adventure.",
            f"{_w(rng)} keep the story about {name} really short, she's almost asleep.",
            f"A very short bedtime story about a {animal} on an adventure.")


def f_home_workout(rng):
    goal = pick(rng, ("get stronger", "lose a bit of weight", "have more energy", "fix my posture"))
    days, mins = rng.randint(3, 6), pick(rng, (20, 30, 40, 45, 60))
    return (None,
            f"Can you give me a workout plan for {num_word(days)} days a week? I want to {goal} before {pick(rng, MONTHS)}.",
            f"{_w(rng)} I meant something I can do at home in {num_word(mins)} minutes, without any equipment.",
            "A weekly workout plan with no equipment, like push-ups, squats and planks.")


def f_walking(rng):
    place, start = rng.sample(PLACES, 2)
    return (f"I've just arrived at {start}.",
            f"How do I get to {place} from {start}? Tell me the whole way.",
            f"{_w(rng)} I'm walking to {place}, not driving.",
            f"Walking directions from {start} to {place}.")


def f_family_film(rng):
    mood, adj = pick(rng, (("really exciting", "exciting"), ("a bit scary", "mildly scary"), ("full of action", "action-packed")))
    day, kids = pick(rng, DAYS), rng.randint(2, 5)
    return (f"It's movie night on {day}.",
            f"Recommend a few films for {day} night with {pick(rng, RELATIVES)}, something {mood}, and tell me what they're about.",
            f"{_w(rng)} the {num_word(kids)} kids are watching too, so it has to be family friendly.",
            f"A few {adj} films that are suitable for children.")


def f_times(rng):
    city = pick(rng, CITIES)
    a, b = rng.randint(6, 19), rng.randint(6, 19)
    return (None,
            f"Tell me about the history of {city}, right from the beginning.",
            f"Sorry, stop, quick question first: what's {num_word(a)} times {num_word(b)}?",
            f"{a} times {b} is {a * b}.")


def f_people(rng):
    dish, n = pick(rng, DISHES), rng.randint(5, 12)
    return (pick(rng, ("I'm doing the shopping this afternoon.", "I'm off to the supermarket in a bit.",
                       f"I'm writing the shopping list for {pick(rng, DAYS)}.", "The fridge is empty.")),
            f"Can you list everything I need to buy to make {dish} for two people on {pick(rng, DAYS)}?",
            f"{_w(rng)} make that for {num_word(n)} people, not two.",
            f"A shopping list for {dish} with quantities for {n} people.")


def f_translate(rng):
    (l1, _, _), (l2, gm, ty) = rng.sample(LANGS, 2)
    return (pick(rng, ("I'm travelling next week.", "We have exchange students staying with us.", f"I'm flying to {pick(rng, CITIES)} soon.",
                       "My new neighbours have just moved here.", f"{cap(pick(rng, RELATIVES))} is visiting from abroad.")),
            f"How do I say good morning and thank you in {l1}? I'm meeting {pick(rng, NAMES)} on {pick(rng, DAYS)}.",
            f"Oh wait, I meant {l2}, not {l1}.",
            f"In {l2}, good morning is '{gm}' and thank you is '{ty}'.")


def f_ski(rng):
    days, city, day = rng.randint(3, 12), pick(rng, CITIES), pick(rng, DAYS)
    return (f"We leave on {day}.",
            f"What should I pack for {num_word(days)} days at the beach near {city}? Make me a full list.",
            f"{_w(rng)} it's a ski trip from {city}, not the beach.",
            "A packing list for a week of skiing, with warm clothes, gloves, goggles and ski gear.")


def f_budget_gift(rng):
    rel, hobby, cur = pick(rng, RELATIVES), pick(rng, HOBBIES), pick(rng, CURRENCIES)
    return (f"It's {rel}'s birthday on {pick(rng, DAYS)}.",
            f"Give me some gift ideas for {rel}, who loves {hobby}. Explain why each one would work.",
            f"Hmm, {_w(rng).lower()} keep it under twenty {cur}.",
            f"A few gift ideas for someone who loves {hobby}, each costing under twenty {cur}.")


def f_savings(rng):
    x, cur = 100 * rng.randint(15, 50), pick(rng, CURRENCIES)
    pct, goal = pick(rng, (10, 20, 25, 30, 40, 50)), pick(rng, ("savings", "rent", "holidays", "a new car", "the kids"))
    return (pick(rng, ("I'm trying to get my money sorted out.", "I just got paid.", "My bank app is a mess.",
                       "I've started a new job.")),
            f"I earn {x} {cur} a month. Can you work out a full monthly budget for me?",
            f"{_w(rng)} just tell me how much {num_word(pct)} percent of that is, for {goal}.",
            f"{cap(num_word(pct))} percent of {x} is {x * pct // 100} {cur}.")


def f_interview(rng):
    job = pick(rng, ("a nurse", "a teacher", "a software developer", "a shop manager", "a chef"))
    place, hour = pick(rng, PLACES), rng.randint(8, 11)
    return (f"I have an interview for a job as {job}.",
            f"What are the best ways to prepare for a job interview as {job} at {place}? Give me everything you've got.",
            f"{_w(rng)} it's tomorrow at {num_word(hour)}, so just the single most important thing.",
            "The one most important tip for an interview tomorrow, such as researching the employer.")


def f_upbeat(rng):
    day, n, rel = pick(rng, DAYS), rng.randint(6, 14), pick(rng, RELATIVES)
    return (f"We're having people over on {day}.",
            f"Make me a playlist for a dinner party for {num_word(n)} people, something calm with a nice atmosphere.",
            f"{_w(rng)} make it upbeat, {rel} wants to dance after dinner.",
            "An upbeat, danceable playlist for a party.")


def f_other_city(rng):
    c1, c2 = rng.sample(CITIES, 2)
    return (None,
            f"What is there to see in {c1}? Give me the full tour, neighbourhood by neighbourhood.",
            f"No, sorry, I mean {c2}, not {c1}.",
            f"The main sights to see in {c2}.")


FAMILIES = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("f_") and callable(fn)}
NAME_PREFIXES = ("{A}, ", "Hey {A}, ", "Okay {A}, ")


def make(index: int, rng: random.Random, sid: str, seed: int = 0) -> dict:
    families = sorted(FAMILIES)
    family = families[block_choice(KIND, seed, index, len(families))]
    user, other = rng.sample(NAMES, 2)
    assistant = pick(rng, ASSISTANT_NAMES) if chance(rng, 0.3) else "Aria"
    situation, request, interrupt, gold = FAMILIES[family](rng)
    speakers = [user]
    turns: list[dict] = []

    def add(speaker, label, text, **kw):
        turns.append(make_turn(f"t{len(turns)}", speaker, label, text,
                               gap=gap(rng, 0.2, 0.7) if turns and label != "interrupt" else None, **kw))

    if chance(rng, 0.3) or not situation:
        add(user, "ctx", pick(rng, OPENERS))
    if situation:
        add(user, "ctx", situation)
    if chance(rng, 0.25):
        speakers.append(other)
        add(other, "ctx", pick(rng, PARTNER_LINES))
    named = chance(rng, 0.3)
    if named:
        prefix = pick(rng, NAME_PREFIXES).format(A=assistant)
        request = prefix + (request if request.startswith(("I ", "I'")) else request[0].lower() + request[1:])
    add(user, "final", request, addressee=assistant if named else None)
    add(user, "interrupt", cap(interrupt), gold_answer=gold)
    return make_scene(sid, KIND, speakers, turns, assistant_name=assistant, attributes={"family": family})
