"""FDB user interruption: context, a ``final`` request that invites a long answer, then an
``interrupt`` that barges in while the assistant answers and changes or narrows the request. The
``gold_answer`` on the interrupt describes what a fitting answer to the changed request contains."""

from __future__ import annotations

import random

from ._common import (
    ASSISTANT_NAMES, CITIES, DAYS, NAMES, PLACES, RELATIVES, block_choice, cap, chance, gap, make_scene,
    make_turn, num_word, pick,
)

KIND = "interruption"
VERSION = 1
DEFAULT_N = 100

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
PARTNER_LINES = ("Just ask, it's quicker than searching.", "Go on, ask it.", "Don't look at me, I have no idea.",
                 "Ask it, I want to hear this too.", "You could just ask, you know.")
OPENERS = ("Okay, I need your help with something.", "Hi, are you there?", "Right, let's get this sorted.",
           "Can you help me for a minute?", "Good morning.", "Okay, I've got a big one for you.")


def _w(rng):
    return pick(rng, WAITS)


# Each family: rng -> (situation line or None, final request, interrupt, gold answer for the interrupt).

def f_vegetarian(rng):
    dish, meat, sub = pick(rng, MEAT_DISHES)
    who = pick(rng, RELATIVES)
    return (pick(rng, (f"{cap(who)} is coming over for dinner tonight.", "We've got guests tonight.")),
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
    return (pick(rng, ("My nephew asked me something today.", "I was reading about this earlier.", None)),
            f"Can you explain how {long}? I've always wondered, go into the details.",
            f"{_w(rng)} can you explain it like I'm five? Keep it really simple.",
            f"A very simple, child-friendly explanation of how {short}.")


def f_free(rng):
    city = pick(rng, CITIES)
    return (f"We're in {city} this weekend.",
            f"What are some good things to do in {city}? Give me a few options with the details.",
            f"{_w(rng)} only free things, please, we're on a tight budget.",
            f"A few free things to do in {city}, such as parks, walks or free museums.")


def f_polite(rng):
    thing = pick(rng, THINGS)
    return (f"The {thing} has been broken for two weeks now.",
            f"Help me write an email to my landlord about the broken {thing}. Say it's been two weeks.",
            f"{_w(rng)} make it more polite, I don't want to sound angry.",
            f"A polite email to the landlord asking for the {thing} to be repaired.")


def f_story(rng):
    animal = pick(rng, ANIMALS)
    if chance(rng, 0.5):
        return ("My daughter can't sleep.",
                f"Tell me a bedtime story about a {animal} who wants to learn to fly.",
                f"{_w(rng)} can it be a dragon instead of a {animal}?",
                "A bedtime story about a dragon who wants to learn to fly.")
    return ("The kids are in bed.",
            f"Tell me a long bedtime story about a {animal} who goes on an adventure.",
            f"{_w(rng)} keep it really short, she's almost asleep.",
            f"A very short bedtime story about a {animal} on an adventure.")


def f_home_workout(rng):
    goal = pick(rng, ("get stronger", "lose a bit of weight", "have more energy", "fix my posture"))
    return (None,
            f"Can you give me a workout plan for the whole week? I want to {goal}.",
            f"{_w(rng)} I meant something I can do at home, without any equipment.",
            "A weekly workout plan with no equipment, like push-ups, squats and planks.")


def f_walking(rng):
    place = pick(rng, PLACES)
    return ("I've just arrived at the station.",
            f"How do I get to {place} from here? Tell me the whole way.",
            f"{_w(rng)} I'm walking, not driving.",
            f"Walking directions from the station to {place}.")


def f_family_film(rng):
    mood, adj = pick(rng, (("really exciting", "exciting"), ("a bit scary", "mildly scary"), ("full of action", "action-packed")))
    return ("It's movie night.",
            f"Recommend a few films for tonight, something {mood}, and tell me what they're about.",
            f"{_w(rng)} the kids are watching too, so it has to be family friendly.",
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
    return ("I'm doing the shopping this afternoon.",
            f"Can you list everything I need to buy to make {dish} for two people?",
            f"{_w(rng)} make that for {num_word(n)} people, not two.",
            f"A shopping list for {dish} with quantities for {n} people.")


def f_translate(rng):
    (l1, _, _), (l2, gm, ty) = rng.sample(LANGS, 2)
    return (pick(rng, ("I'm travelling next week.", "We have exchange students staying with us.")),
            f"How do I say good morning and thank you in {l1}? And how do I pronounce them?",
            f"Oh wait, I meant {l2}, not {l1}.",
            f"In {l2}, good morning is '{gm}' and thank you is '{ty}'.")


def f_ski(rng):
    return ("We leave on Saturday.",
            "What should I pack for a week at the beach? Make me a full list.",
            f"{_w(rng)} it's a ski trip, not the beach.",
            "A packing list for a week of skiing, with warm clothes, gloves, goggles and ski gear.")


def f_budget_gift(rng):
    rel, hobby, cur = pick(rng, RELATIVES), pick(rng, HOBBIES), pick(rng, CURRENCIES)
    return (f"It's {rel}'s birthday on {pick(rng, DAYS)}.",
            f"Give me some gift ideas for {rel}, who loves {hobby}. Explain why each one would work.",
            f"Hmm, {_w(rng).lower()} keep it under twenty {cur}.",
            f"A few gift ideas for someone who loves {hobby}, each costing under twenty {cur}.")


def f_savings(rng):
    x, cur = 100 * rng.randint(15, 50), pick(rng, CURRENCIES)
    return ("I'm trying to get my money sorted out.",
            f"I earn {x} {cur} a month. Can you work out a full monthly budget for me?",
            f"{_w(rng)} just tell me how much twenty percent of that is, for savings.",
            f"Twenty percent of {x} is {x // 5} {cur}.")


def f_interview(rng):
    job = pick(rng, ("a nurse", "a teacher", "a software developer", "a shop manager", "a chef"))
    return (f"I have an interview for a job as {job}.",
            "What are the best ways to prepare for a job interview? Give me everything you've got.",
            f"{_w(rng)} it's tomorrow morning, so just the single most important thing.",
            "The one most important tip for an interview tomorrow, such as researching the employer.")


def f_upbeat(rng):
    return ("We're having people over on Saturday.",
            "Make me a playlist for a dinner party, something calm with a nice atmosphere.",
            f"{_w(rng)} make it upbeat, we're going to dance after dinner.",
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
