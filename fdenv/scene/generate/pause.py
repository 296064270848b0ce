"""FDB pause handling: a user turn with 1-3 mid-sentence pauses of 0.6-1.5 s.

Each template is one request or statement with ``|`` at the places where a speaker may stop
mid-sentence: after a preposition, an article, a conjunction or a verb that needs its object, so
the sentence is clearly unfinished at every pause. 1-3 of those places get a ``[pause=S]`` marker.
"""

from __future__ import annotations

import random

from ._common import (
    CITIES, DAYS, NAMES, PLACES, RELATIVES, VENUES, ANIMALS, block_choice, cap, chance, clock, fill, gap, make_scene,
    make_turn, pick, say_num,
)

KIND = "pause"
VERSION = 2
DEFAULT_N = 200
PAUSE_RANGE_CS = (60, 150)  # centiseconds, inclusive: 0.60-1.50 s

TEMPLATES = (
    "I was thinking we could go to | {venue} near | {place}, and maybe | on {day} if | everyone is free.",
    "Can you remind me to call | {relative} about | the {event} on | {day} evening?",
    "What I really need is a recipe for | something quick with | {ingredient} and | {ingredient2} that takes less than half an hour.",
    "So the problem with my laptop is that | whenever I open | more than two programs, it | just freezes and I have to restart it.",
    "I'd like to book a table for | {n} people at | {venue} on | {day} around | {time}.",
    "Could you tell me how long it takes to | drive from here to | {city} if | I leave early in the morning?",
    "My plan for the weekend is to | clean the garage, then | take the {animal} to the vet, and | maybe see {relative} on Sunday.",
    "I keep forgetting whether | I should water the {plant} every | few days or | only once a week.",
    "The thing I don't understand about | {subject} is why | the teacher keeps saying | it matters so much.",
    "Could you add | eggs, milk and | {ingredient} to | my shopping list for tomorrow?",
    "I need to send a message to | {relative} saying that | I can't make it on | {day} because | of work.",
    "What would be a good gift for | {relative}, who | loves {hobby} and | already has pretty much everything?",
    "I'm trying to decide between | the blue jacket and | the grey one, because | the blue one is cheaper but | the grey one fits better.",
    "Set an alarm for | {time} tomorrow, and | remind me to bring | the {item} to work.",
    "How do I get to | {place} from | here without | taking the motorway?",
    "Last time I went running I | felt a sharp pain in | my left knee, so | I'm wondering if I should rest for a while.",
    "Can you find me a | train to {city} that | leaves after | {time} on {day}?",
    "I want to learn | how to play | the {instrument}, but | I only have about | twenty minutes a day.",
    "My {animal} has been | sleeping a lot and | not eating much since | {day}, should I be worried?",
    "Could you explain how | interest works on | a savings account, because | my bank keeps sending me letters about it?",
    "We're planning a party for | {relative_p} birthday and | we need ideas for | games that | kids and adults both enjoy.",
    "I'd like to cancel | my appointment with | the dentist on | {day} and | move it to next week.",
    "Is it a good idea to | paint the bedroom | a dark colour if | the room doesn't get much light?",
    "Could you play some | relaxing music, maybe | some jazz or | piano, for | the next hour or so?",
    "How many | cups of flour do I need for | a cake that | serves {n} people?",
    "I'm looking for | a book about | {subject} that | isn't too technical for | a complete beginner.",
    "What's the weather going to be like in | {city} on | {day}, because | I'm flying there for work?",
    "Tell me a good way to | keep {vegetable} fresh for | more than | a few days.",
    "Can you help me write | a short speech for | {relative_p} wedding that | is funny but | not embarrassing?",
    "My neighbour's {animal} keeps | coming into our garden and | digging up | all of the tomatoes.",
    "I think I left | my keys somewhere in | the car or | maybe at {place}.",
    "Could you convert | {km} kilometres into | miles for me, because | the map only shows miles?",
    "Before the meeting on | {day} I have to | finish the report, | print the slides and | call the client.",
    "We should probably | leave around | {time} if | we want to get to {place} before | the traffic starts.",
    "I'm not sure if | I should take the job in | {city} or | stay here and | wait for a promotion.",
    "Find me a | podcast about | {subject} that | I can listen to | on my way to work.",
    "How much water should | a person drink on | a hot day if | they're working outside?",
    "Could you read me | the last message from | {relative}, the one about | the {event}?",
    "I'd love to visit | {city} in the spring, but | I heard it gets | really crowded around | the holidays.",
    "Remind me to | take the {dish} out of | the oven in | twenty minutes.",
    "What I'd like to do this evening is | cook something with | the {ingredient} in the fridge and | then watch a film.",
    "When I tried to | log into my bank account | this morning, it | said my password was wrong.",
    "Could you check if | {venue} is open on | {day} and whether | they take reservations?",
    "I was reading an article about | {subject} and | I couldn't figure out | what the main argument was.",
    "Can you make a playlist for | a long drive to | {city} with | a lot of | songs from the nineties?",
    "So my daughter asked me | why the sky is blue, and | honestly I didn't | know what to tell her.",
    "I need a word that means | really happy but | sounds a bit more | formal for a letter.",
    "How long should I | boil {vegetable} if | I want them | soft but not mushy?",
    "The last time we went to | {place}, we | parked behind | the {building} and it was free.",
    "Could you put | {relative_p} birthday in | my calendar for | the twelfth of next month?",
    "I've been meaning to | fix the leaking tap in | the bathroom, but | I don't know where to start.",
    "What's a good exercise for | my back if | I sit at | a desk all day?",
    "Do you think it's | warm enough to | go swimming at | {place} this weekend?",
    "I'd like to start | saving money for | a trip to | {city} next summer.",
    "Can you turn | the lights in | the living room down to | about half?",
    "There's a noise coming from | the engine whenever | I go faster than | about fifty.",
    "Could you give me | three ideas for | a vegetarian dinner that | my kids would actually eat?",
    "My friend recommended | a film about | {subject}, but | I forgot | what it was called.",
    "Let me know when | the next bus to | {place} leaves, because | I'm running a bit late.",
    "I want to surprise | {relative} with | breakfast in bed, so | what could I make with | {ingredient}?",
)

EVENTS = ("birthday dinner", "school concert", "barbecue", "housewarming", "reunion", "book club", "wedding", "farewell party")
INGREDIENTS = ("chicken", "tofu", "spinach", "mushrooms", "chickpeas", "salmon", "rice", "potatoes", "eggs", "lentils", "pasta", "halloumi")
SUBJECTS = ("climate change", "ancient Rome", "black holes", "the stock market", "photosynthesis", "gardening",
            "the French revolution", "artificial intelligence", "volcanoes", "medieval castles", "sleep", "nutrition")
HOBBIES = ("gardening", "photography", "cooking", "hiking", "chess", "painting", "cycling", "knitting", "jazz", "board games")
ITEMS = ("laptop charger", "umbrella", "lunch box", "presentation", "spare keys", "gym bag", "library books", "passport")
PLANTS = ("basil", "orchid", "cactus", "fern", "tomato plants", "lemon tree")
INSTRUMENTS = ("guitar", "piano", "violin", "drums", "ukulele", "saxophone", "cello", "flute")
VEGETABLES = ("carrots", "broccoli", "green beans", "potatoes", "asparagus", "spinach", "lettuce", "celery")
DISHES = ("lasagne", "bread", "cake", "roast chicken", "cookies", "pie", "casserole", "pizza")
BUILDINGS = ("church", "supermarket", "post office", "old cinema", "fire station", "school")

OPENERS = (
    "Okay, I have a question for you.", "So, I've been meaning to ask you something.", "Right, next thing.",
    "Hi, are you there?", "Good morning.", "Hey, quick one.", "Alright, let me think how to put this.",
    "Okay, so here's the thing.", "Can I ask you something?", "Sorry, one more thing.",
    "Hello again.", "Okay, listen.", "I've got another one for you.", "Let's see.",
)
PARTNER_LINES = (
    "Go on, ask it what you asked me.", "Didn't you want to ask about that?", "Tell it what you told me earlier.",
    "You should just ask.", "Ask it, it'll know.", "Weren't you going to sort that out today?",
    "Go ahead, I'm listening too.", "Just say it the way you said it to me.",
)
FILLERS = ("um,", "uh,", "you know,", "er,", "hmm,")


def _slots(rng: random.Random) -> dict:
    ing = rng.sample(INGREDIENTS, 2)
    rel = pick(rng, RELATIVES)
    return {
        "venue": pick(rng, VENUES), "place": pick(rng, PLACES), "day": pick(rng, DAYS),
        "time": clock(rng.randrange(7 * 4, 21 * 4) * 15, pick(rng, ("12h", "casual"))),
        "relative": rel, "relative_p": rel + "'s", "event": pick(rng, EVENTS),
        "ingredient": ing[0], "ingredient2": ing[1], "subject": pick(rng, SUBJECTS),
        "hobby": pick(rng, HOBBIES), "item": pick(rng, ITEMS), "animal": pick(rng, ANIMALS),
        "plant": pick(rng, PLANTS), "instrument": pick(rng, INSTRUMENTS), "city": pick(rng, CITIES),
        "n": say_num(rng.randint(2, 12)), "km": say_num(rng.choice((5, 8, 12, 15, 20, 25, 40, 50, 80, 100, 120))),
        "vegetable": pick(rng, VEGETABLES), "dish": pick(rng, DISHES), "building": pick(rng, BUILDINGS),
    }


def pause_text(rng: random.Random, template: str) -> str:
    """Fill a template and put 1-3 ``[pause=S]`` markers at its ``|`` places."""
    text = fill(template, _slots(rng))
    parts = [p.strip() for p in text.split("|")]
    places = len(parts) - 1
    k = min(places, pick(rng, (1, 1, 2, 2, 2, 3, 3)))
    chosen = set(rng.sample(range(places), k))
    out = parts[0]
    for i, part in enumerate(parts[1:]):
        if i in chosen:
            if chance(rng, 0.2):
                out = out.rstrip(",") + ", " + pick(rng, FILLERS)
            s = rng.randint(*PAUSE_RANGE_CS)
            out += f" [pause={s // 100}.{s % 100:02d}] {part}"
        else:
            out += f" {part}"
    return out


def make(index: int, rng: random.Random, sid: str, seed: int = 0) -> dict:
    names = rng.sample(NAMES, 2)
    user = names[0]
    template = TEMPLATES[block_choice(KIND, seed, index, len(TEMPLATES))]
    turns = []
    speakers = [user]
    r = rng.random()
    if r < 0.25:  # a second person nudges the user first
        speakers.append(names[1])
        turns.append(make_turn("t0", names[1], "ctx", pick(rng, PARTNER_LINES)))
    elif r < 0.6:
        turns.append(make_turn("t0", user, "ctx", pick(rng, OPENERS)))
    turns.append(make_turn(f"t{len(turns)}", user, "pause", cap(pause_text(rng, template)),
                           gap=gap(rng, 0.3, 0.8) if turns else None))
    return make_scene(sid, KIND, speakers, turns, attributes={"template": TEMPLATES.index(template)})
