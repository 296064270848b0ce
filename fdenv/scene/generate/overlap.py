"""Overlap behaviours (after Full-Duplex-Bench v1.5): the user asks for something that needs a long
answer (a ``final`` turn whose ``gold_answer`` is that answer, 8 s or more when spoken), and while
the assistant answers one of four events happens:

* ``interruption``: the user barges in with a new request (``interrupt``, with its gold answer);
* ``backchannel``: the user backchannels ("mm-hmm", "yeah, yeah"; a ``bc`` turn);
* ``side_conversation``: another human and the user talk to each other (two ``side`` turns);
* ``background``: a TV or radio talker (a ``background`` turn by a ``TV`` / ``Radio`` speaker with
  its own voice, 6-12 dB below the people, a point source of its own in a room).

The scheduler starts the event a drawn 1-4 s of assistant speech into its answer
(``fdenv.windows`` ``overlap_start``). Every block of four scenes has each event once, so the
set holds the four events in equal numbers (each split too, within one block).
"""

from __future__ import annotations

import random

from ._common import (
    ASSISTANT_NAMES, CITIES, DAYS, MONTHS, NAMES, RELATIVES, assign_splits, block_choice, cap, chance, gap, make_scene,
    make_turn, num_word, pick,
)

KIND = "overlap"
VERSION = 1
DEFAULT_N = 400
EVENTS = ("interruption", "backchannel", "side_conversation", "background")

DISHES = (("a vegetable lasagne", "the sauce", "spinach"), ("a chicken curry", "the spice paste", "onions"),
          ("a beef stew", "the browning", "carrots"), ("a mushroom risotto", "the stock", "mushrooms"),
          ("a shepherd's pie", "the mash", "lamb"), ("fish tacos", "the marinade", "white fish"),
          ("a lemon cake", "the batter", "lemons"), ("a pad thai", "the noodles", "tofu"),
          ("a tomato soup", "the base", "tomatoes"), ("banana bread", "the batter", "bananas"))
TOPICS = ("rainbows form", "vaccines train the body", "planes stay in the air", "the internet sends messages",
          "tides rise and fall", "batteries store energy", "earthquakes start", "the heart pumps blood",
          "volcanoes erupt", "bees make honey", "clouds make rain", "the moon changes shape")
SUBJECTS = ("history", "chemistry", "maths", "biology", "French", "economics", "physics", "geography")
ANIMALS = ("rabbit", "penguin", "turtle", "fox", "hedgehog", "owl", "otter", "badger")
SPOTS = ("balcony", "back garden", "allotment", "patio", "roof terrace", "front yard")
HOBBIES = ("painting", "running", "the guitar", "chess", "photography", "swimming", "knitting", "yoga")
CURRENCIES = ("dollars", "euros", "pounds")
WAITS = ("Wait, actually,", "Sorry,", "Hang on,", "Oh, hold on,", "No, wait,", "Actually, sorry,")
TAILS = ("", " Take your time.", " I've got a few minutes.", " I want all the details.", " Go slowly, please.",
         " Don't skip anything.", " I'm listening.", " Start from the beginning.")
INTERRUPT_TAILS = ("", " Sorry.", " Just that for now.", " Quickly, please.", " That's all I need.", " Sorry to cut in.",
                   " Tell me that first.")
OPENERS = tuple(f"{a} {b}" for a in ("Okay,", "Hi,", "Right,", "Morning,", "Hey there,", "So,")
                for b in ("I need your help with something.", "are you there?", "let's get this sorted.",
                          "can you help me for a minute?", "I've got a big one for you.", "have you got a minute?"))
BACKCHANNELS = ("mm-hmm", "yeah, yeah", "right, right", "uh-huh, okay", "oh, I see", "yeah, okay", "mm, right",
                "sure, sure", "okay, okay", "uh-huh")


def _w(rng):
    return pick(rng, WAITS)


# Each family: rng -> (request, long answer, interrupt, the interrupt's gold answer).

def f_recipe(rng):
    dish, part, key = pick(rng, DISHES)
    n = rng.randint(2, 8)
    return (f"Can you walk me through making {dish} for {num_word(n)} people, step by step?",
            f"Of course. Start by getting everything ready, because {dish} goes much better when nothing is missing. "
            f"First prepare the {key} and the rest of the vegetables, then make {part} slowly over a low heat, "
            "stirring now and then. After that you put it all together, cook it until it is done, and let it rest "
            "for ten minutes before you serve it.",
            f"{_w(rng)} I don't have any {key}, what can I use instead?",
            f"Something that works in place of {key} in {dish}.")


def f_history(rng):
    city = pick(rng, CITIES)
    century = pick(rng, ("Roman times", "the Middle Ages", "the first settlers", "its founding"))
    return (f"Tell me about the history of {city}, starting with {century}.",
            f"The story of {city} is a long one. It began as a small settlement by the water, where people traded "
            "food, cloth and tools. Over the centuries it grew into a busy town with walls, markets and churches, "
            "and later it became an important city with factories, a railway and a university that still "
            "draws people from all over the world.",
            f"{_w(rng)} just tell me what {city} is famous for today.",
            f"What {city} is best known for today.")


def f_science(rng):
    topic, age = pick(rng, TOPICS), rng.randint(5, 9)
    return (f"Can you explain in detail how {topic}? {cap(pick(rng, RELATIVES))} asked me about it.",
            f"Sure, it is a lovely question. To understand how {topic}, it helps to start with the basic idea and "
            "then add one piece at a time. There are a few forces at work, and each of them plays its part. When "
            "they come together in the right way, you get exactly what you see, and scientists have tested this "
            "again and again.",
            f"{_w(rng)} explain it like I'm {num_word(age)}, keep it really simple.",
            f"A very simple, child-friendly explanation of how {topic}.")


def f_trip(rng):
    city, days = pick(rng, CITIES), rng.randint(3, 6)
    return (f"Plan a {num_word(days)}-day trip to {city} for me, day by day, with places to eat.",
            f"Happy to. On the first day in {city}, walk around the old town, visit the main square and have "
            "dinner somewhere local. On the second day, take a guided tour of the museums in the morning and relax "
            "in a park in the afternoon. On the third day, go a little further out, see the views from the hills, "
            "and finish with a long lunch by the river.",
            f"{_w(rng)} make it just one day, I'm only free on {pick(rng, DAYS)}.",
            f"A one-day plan for {city} with the main sights and a place to eat.")


def f_workout(rng):
    days = rng.randint(3, 6)
    goal = pick(rng, ("get stronger", "lose a bit of weight", "have more energy", "fix my posture", "run faster"))
    return (f"Give me a full workout plan for {num_word(days)} days a week, I want to {goal} by {pick(rng, MONTHS)}.",
            "Here is a plan that builds up slowly. On the first day, warm up for ten minutes, then do squats, "
            "push-ups and lunges in three rounds. On the second day, go for a steady run or a brisk walk of half an "
            "hour. On the third day, work on your core with planks and slow stretches, and always leave a rest day "
            "between the hard sessions.",
            f"{_w(rng)} how long should I rest between sets?",
            "How long to rest between sets, about a minute or two.")


def f_garden(rng):
    spot, veg = pick(rng, SPOTS), pick(rng, ("tomatoes", "lettuce", "beans", "herbs", "courgettes", "peppers"))
    return (f"How do I start a vegetable garden on my {spot}? I'd love to grow {veg}.",
            f"A garden on your {spot} is a great idea. First find the sunniest corner, because most vegetables "
            "need at least six hours of sun. Then choose deep pots or a raised bed with good compost, and water it "
            "well before planting. Start with a few easy plants, water them in the morning, and feed them every "
            "two weeks once the first flowers appear.",
            f"{_w(rng)} what's the easiest thing to grow for a beginner?",
            "The easiest vegetable or herb for a beginner to grow, such as lettuce or radishes.")


def f_story(rng):
    animal, name = pick(rng, ANIMALS), pick(rng, NAMES)
    return (f"Tell me a long bedtime story about a {animal} called {name} who wants to see the sea.",
            f"Once upon a time there was a little {animal} called {name}, who lived at the edge of a quiet wood. "
            f"Every night {name} dreamed of the sea, of waves and shells and salty wind. One morning {name} packed "
            "a tiny bag and set off along the river, meeting a wise old owl, a busy family of ducks and a kind "
            "fisherman who pointed the way.",
            f"{_w(rng)} can {name} be a dragon instead?",
            f"A bedtime story about a dragon called {name} who wants to see the sea.")


def f_budget(rng):
    x, cur = 100 * rng.randint(15, 50), pick(rng, CURRENCIES)
    return (f"I earn {x} {cur} a month. Can you help me plan a budget, category by category?",
            f"Let's build it together. Start with the fixed costs, like rent, bills and transport, and keep them "
            "to about half of what you earn. Then set aside a fifth for savings, paid in on the day your salary "
            "arrives. What is left goes to food, clothes and fun, and it helps to check your spending once a week "
            "so that nothing surprises you.",
            f"{_w(rng)} how much is ten percent of {x}?",
            f"Ten percent of {x} is {x // 10} {cur}.")


def f_exam(rng):
    subject, weeks = pick(rng, SUBJECTS), rng.randint(2, 8)
    return (f"How should I prepare for my {subject} exam in {num_word(weeks)} weeks? Walk me through a plan.",
            f"Here is how I would do it. In the first week, gather all your {subject} notes and make a list of the "
            "topics, marking the ones you find hardest. Then study two topics a day in short sessions, with a "
            "break every forty minutes. In the last weeks, do old exam papers under timed conditions and go back "
            "over every mistake you made.",
            f"{_w(rng)} the exam is actually tomorrow, what should I do tonight?",
            "What to do the night before the exam, like a light review and a good night's sleep.")


def f_moving(rng):
    city, rel = pick(rng, CITIES), pick(rng, RELATIVES)
    return (f"I'm moving to a new flat in {city} with {rel}. What do I need to do? Go through the whole list.",
            "Moving goes well with a plan. About a month before, give notice on your old place, book a van and "
            "start packing the things you rarely use. Two weeks before, change your address with the bank, your "
            "doctor and your work. In the last week, pack a box of essentials for the first night, read the meters "
            "and take photos of both flats.",
            f"{_w(rng)} how do I find a cheap van in {city}?",
            f"How to find a cheap moving van in {city}, for example by comparing rental firms.")


def f_bike(rng):
    part = pick(rng, ("front", "back"))
    return (f"How do I fix a flat tyre on the {part} wheel of my bike? Explain every step.",
            f"It is easier than it looks. First turn the bike over and take off the {part} wheel. Use two tyre "
            "levers to lift one side of the tyre off the rim, pull out the inner tube and find the hole by pumping "
            "a little air into it. Then patch it or fit a new tube, push the tyre back on and pump it up slowly.",
            f"{_w(rng)} I don't have tyre levers, what else can I use?",
            "Something to use instead of tyre levers, such as a spoon handle or your hands.")


def f_party(rng):
    rel, age = pick(rng, RELATIVES), rng.randint(6, 70)
    return (f"Help me plan a birthday party for {rel}, who turns {age}, from the invitations to the cake.",
            f"What fun. Send the invitations about three weeks ahead, and ask people to reply by a fixed day. Choose "
            "a theme that matches what they love, then plan the food, with a few warm dishes and plenty of snacks. "
            "Book or bake the cake a day early, decorate the room in the morning, and keep a little surprise for "
            "the moment the candles are lit.",
            f"{_w(rng)} what's a good cake for someone who can't eat gluten?",
            "A gluten-free birthday cake, such as a flourless chocolate cake.")


def f_hobby(rng):
    hobby, weeks = pick(rng, HOBBIES), rng.randint(4, 12)
    return (f"I want to get into {hobby}. Can you give me a plan for the next {num_word(weeks)} weeks?",
            f"Great choice. For the first two weeks of {hobby}, keep it short and easy, about twenty minutes a day, "
            "just to build the habit. After that, pick one skill each week and practise it slowly, and find a "
            "group or a class where people share tips. By the end, set yourself a small goal you can show someone, "
            "because that keeps you going.",
            f"{_w(rng)} what do I need to buy first?",
            f"The first things to buy to start {hobby}.")


FAMILIES = {name[2:]: fn for name, fn in sorted(globals().items()) if name.startswith("f_") and callable(fn)}
NAME_PREFIXES = ("{A}, ", "Hey {A}, ", "Okay {A}, ")

# Side conversations: another human asks the user something that has nothing to do with the assistant.
SIDE_ASKS = (
    "{U}, did you lock the back door?", "{U}, have you seen my keys anywhere?", "{U}, are we still going out at {h}?",
    "{U}, did you call {r} back?", "{U}, where did you put the charger?", "{U}, is there any milk left?",
    "{U}, do you want a cup of tea?", "{U}, did the parcel arrive today?", "{U}, can you pick up the kids on {d}?",
    "{U}, have you fed the cat yet?", "{U}, what time is the train on {d}?", "{U}, did you pay the electricity bill?",
)
SIDE_ANSWERS = (
    "Yes, {O}, I did it this morning.", "No, not yet, {O}, I'll do it later.", "I think so, {O}, check the kitchen.",
    "Hang on, {O}, I'm in the middle of something.", "Yes, {O}, it's on the table.", "Not sure, {O}, ask me in a minute.",
    "Oh, I forgot, sorry, {O}.", "Yes, {O}, around {h}.", "Let me think, {O}, probably {d}.", "It's by the front door, {O}.",
)
# Background talkers: a television or a radio in the room.
TV_LINES = (
    "And in sport tonight, {c} won three goals to one at home.", "The weather for {d}: sunny spells in the morning, with showers later.",
    "Stay with us, after the break we talk to the mayor of {c}.", "Traffic is heavy on the ring road this evening.",
    "Scientists in {c} say the new bridge will open in {m}.", "Prices at the shops rose again last month.",
    "Coming up next, the film of the week.", "This is the news at {h}.",
    "Thousands of people gathered in {c} for the festival.", "The match will be shown live on {d} night.",
    "Our reporter is standing outside the museum in {c}.", "Now, a look at tomorrow's papers.",
)
HOURS = ("six", "seven", "eight", "nine", "ten", "half past six", "half past seven")


def _slots(rng, user, other):
    return {"U": user, "O": other, "h": pick(rng, HOURS), "d": pick(rng, DAYS), "r": pick(rng, RELATIVES), "c": pick(rng, CITIES),
            "m": pick(rng, MONTHS)}


def event_of(index: int, seed: int = 0) -> str:
    """The event of scene ``index``: each block of four scenes *of one split* has every event once,
    so each split holds the four in (nearly) equal numbers, and growing the set keeps them."""
    splits = assign_splits(index + 1)
    split, k = splits[-1], splits.count(splits[-1]) - 1
    return EVENTS[block_choice(f"{KIND}-event-{split}", seed, k, len(EVENTS))]


def make(index: int, rng: random.Random, sid: str, seed: int = 0) -> dict:
    families = sorted(FAMILIES)
    family = families[block_choice(KIND, seed, index, len(families))]
    event = event_of(index, seed)
    user, other = rng.sample(NAMES, 2)
    assistant = pick(rng, ASSISTANT_NAMES) if chance(rng, 0.3) else "Aria"
    request, answer, interrupt, interrupt_gold = FAMILIES[family](rng)
    request += pick(rng, TAILS)
    speakers: list = [user]
    turns: list[dict] = []

    def add(speaker, label, text, first_gap=False, **kw):
        g = gap(rng, 0.2, 0.7) if turns and not first_gap else None
        turns.append(make_turn(f"t{len(turns)}", speaker, label, text, gap=g, **kw))

    if chance(rng, 0.3):
        add(user, "ctx", pick(rng, OPENERS))
    named = chance(rng, 0.3)
    if named:
        request = pick(rng, NAME_PREFIXES).format(A=assistant) + request[0].lower() + request[1:]
    add(user, "final", request, addressee=assistant if named else None, gold_answer=answer)
    slots = _slots(rng, user, other)
    attributes = {"event": event, "family": family}
    # the event's own gap is not used: the scheduler starts it on the assistant's speaking time
    if event == "interruption":
        add(user, "interrupt", cap(interrupt) + pick(rng, INTERRUPT_TAILS), first_gap=True, gold_answer=interrupt_gold)
    elif event == "backchannel":
        add(user, "bc", cap(pick(rng, BACKCHANNELS)) + ".", first_gap=True)
    elif event == "side_conversation":
        speakers.append(other)
        add(other, "side", pick(rng, SIDE_ASKS).format(**slots), first_gap=True, addressee=user)
        add(user, "side", pick(rng, SIDE_ANSWERS).format(**slots), addressee=other)
    else:
        source = pick(rng, ("TV", "Radio"))
        level = pick(rng, (-12, -9, -6))
        speakers.append({"name": source, "level_db": level})
        a, b = rng.sample(TV_LINES, 2)
        add(source, "background", f"{a.format(**slots)} {b.format(**slots)}", first_gap=True)
        attributes["level_db"] = level
    return make_scene(sid, KIND, speakers, turns, assistant_name=assistant, attributes=attributes)
