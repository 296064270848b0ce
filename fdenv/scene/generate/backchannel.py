"""FDB backchannel: a long monologue (about 60-110 words, 20-40 s of speech) with 4-8 ``[trp]``
markers at clause ends, where a listener may nod ("mm-hmm") without taking the turn.

A story is a genre's opener, an ordered subset of its beats and a closer; every beat has a few
phrasings with slots, and every piece ends at a sentence end, where its ``[trp]`` goes.
"""

from __future__ import annotations

import random

from ._common import (
    ANIMALS, CITIES, DAYS, NAMES, RELATIVES, block_choice, cap, chance, fill, gap, make_scene, make_turn, pick,
    say_num, word_count,
)

KIND = "backchannel"
VERSION = 1
DEFAULT_N = 200
TRP_RANGE = (4, 8)
WORD_RANGE = (60, 110)

SEASONS = ("spring", "summer", "autumn", "winter")
INSTRUMENTS = ("guitar", "piano", "violin", "cello", "drums", "trumpet")
DISHES = ("lasagne", "paella", "roast chicken", "curry", "risotto", "fish pie")
JOBS = ("a bakery", "a café", "a hotel kitchen", "an ice cream shop", "a pizza place", "a diner", "a cinema snack bar")

# genre: (prompts from another person, openers, beats (each a tuple of phrasings), closers)
GENRES: dict[str, tuple] = {
    "trip": (
        ("So how was {city}?", "Tell me about your trip, I want to hear everything.", "Didn't you just get back from {city}?"),
        ("So last {season} I finally went to {city} with {relative}.",
         "Okay, so the trip to {city} was a bit of an adventure.",
         "You know I'd wanted to see {city} for years, right?"),
        (("Our flight was delayed by almost {n} hours, so we landed in the middle of the night.",
          "The train there took much longer than we expected, and we arrived completely exhausted."),
         ("The hotel had given our room away, and we ended up in a tiny place above a bakery.",
          "Our apartment was on the fifth floor, and of course there was no lift."),
         ("+", "But the next morning the smell of fresh bread woke us up, and honestly it was perfect.",
          "But the view from the window made up for all of it, you could see the whole old town."),
         ("We spent the first day just walking around without any plan at all.",
          "On the first day we got lost in the little streets near the harbour."),
         ("At some point we found this little market where an old man was selling olives.",
          "We ended up in a tiny restaurant where nobody spoke a word of English."),
         ("+", "He insisted that we try every single kind, and we couldn't say no.",
          "So we just pointed at things on the menu and hoped for the best."),
         ("+", "We left with three bags of olives and a bottle of his own olive oil.",
          "Everything that came out of that kitchen was amazing, even the things we didn't recognise."),
         ("On the last day it rained nonstop, so we went to every museum in town.",
          "On the last evening we climbed up the hill to watch the sunset over the rooftops.")),
        ("Anyway, I'd go back tomorrow if I could.", "So yes, it was tiring, but I'd do it all again.",
         "I'm already looking at flights for next year."),
    ),
    "kitchen": (
        ("How did the dinner party go?", "Wait, what happened with the {dish}?", "Did your guests like the food?"),
        ("So on {day} I invited {n} friends over for dinner and decided to make {dish}.",
         "You won't believe what happened when I tried to cook {dish} for {relative}.",
         "So I thought I'd impress everyone with my {dish} last weekend."),
        (("I had never made it before, but the recipe looked simple enough.",
          "I found a recipe online that said it would take about an hour."),
         ("Of course I started far too late, because I spent the afternoon cleaning.",
          "First I realised I was missing half the ingredients, so I ran to the shop."),
         ("Then while I was chopping onions, the smoke alarm went off for no reason at all.",
          "Then the oven decided to stop working right when I needed it most."),
         ("+", "I was standing on a chair waving a towel at the ceiling when the doorbell rang.",
          "So I ended up finishing everything in a frying pan, one portion at a time."),
         ("+", "My guests walked in to find the whole flat full of smoke.",
          "Everyone was already sitting at the table, staring at the empty plates."),
         ("Luckily {name} had brought a huge salad and some fresh bread.",
          "Luckily {name} had brought dessert, so at least that part was ready."),
         ("In the end we ate at about ten o'clock, and everyone was starving.",
          "By the time we sat down it was really late, but nobody seemed to mind."),
         ("And somehow people said it was the best {dish} they'd ever had.",
          "And the funny thing is, everyone asked me for the recipe afterwards.")),
        ("So now I'm apparently the {dish} expert.", "Next time I'm ordering pizza, though.",
         "I think I'll stick to simple pasta for a while."),
    ),
    "first_job": (
        ("What was your first job like?", "Didn't you use to work at {job}?", "How did you end up working there?"),
        ("My very first job was at {job}, when I was about sixteen.",
         "So I started working at {job} the summer after school finished.",
         "I still remember my first day at {job} really clearly."),
        (("I only got the job because {relative} knew the owner.",
          "I had applied to about twenty places, and they were the only ones who called back."),
         ("On the first morning I was so nervous that I arrived an hour early.",
          "I showed up on the first day wearing a suit, which was completely wrong."),
         ("The manager handed me an apron and told me to watch the others.",
          "Nobody had time to train me, so I just copied whatever everyone else did."),
         ("Within ten minutes I had dropped a whole tray of cups on the floor.",
          "By lunchtime I had already mixed up three orders and locked myself out of the storeroom."),
         ("+", "I was sure they were going to send me home straight away.",
          "I honestly thought that would be my first and last day."),
         ("+", "But one of the older workers, {name}, took me aside and showed me how everything worked.",
          "But the manager just laughed and said that everyone does that in their first week."),
         ("After a couple of weeks I actually started to enjoy it.",
          "Slowly I got faster, and the regular customers started to know my name."),
         ("I stayed there for three whole summers in the end.",
          "I learned more there than in any class at school, to be honest.")),
        ("I still think about that place sometimes.", "So that's how I learned to work hard, I guess.",
         "Funny how you never forget your first boss."),
    ),
    "moving": (
        ("How was the move?", "Are you all settled into the new place?", "I heard the move was a disaster."),
        ("So moving house last month was honestly one of the most stressful things I've ever done.",
         "We moved into the new flat on {day}, and it did not go to plan.",
         "Let me tell you about moving day, because it was something else."),
        (("We'd booked a van for eight in the morning, but it only showed up after lunch.",
          "The moving company called the night before to say their truck had broken down."),
         ("+", "So {relative} drove over with a tiny car and we started carrying boxes ourselves.",
          "So we borrowed a trailer from {name} and did everything ourselves."),
         ("The sofa wouldn't fit through the front door, no matter how we turned it.",
          "Halfway through, it started pouring with rain, and half the boxes got soaked."),
         ("+", "In the end we had to take the legs off and push it through the window.",
          "We spent the evening drying books with a hair dryer on the kitchen floor."),
         ("Then we realised nobody had the keys for the new place.",
          "Then it turned out the heating in the new flat wasn't working yet."),
         ("+", "We sat on the stairs for an hour waiting for the landlord.",
          "So the first night we slept in our coats, surrounded by boxes."),
         ("But the next morning the sun came through the big windows and it felt like home.",
          "But when we finally unpacked the kettle and made tea, everything felt better."),
         ("The neighbours even came by with a plant to welcome us.",
          "And the street is so quiet compared to where we lived before.")),
        ("So, never again, but I love the new place.", "We still haven't unpacked everything, though.",
         "Next time I'm hiring professionals, whatever it costs."),
    ),
    "pet": (
        ("How's the new {animal} doing?", "Wait, you got a {animal}?", "Tell me about the {animal}."),
        ("So we adopted a {animal} from the shelter about {n} weeks ago.",
         "You know we'd been talking about getting a {animal} for ages, right?",
         "Okay, so the {animal} has completely taken over our lives."),
        (("The first night it hid under the bed and wouldn't come out at all.",
          "The first day it was so shy that it just sat in the corner watching us."),
         ("We left some food out and sat really quietly on the floor.",
          "The people at the shelter told us to be patient and just give it time."),
         ("After about three days it finally started following me around the flat.",
          "Then one morning I woke up and it was sleeping right on my feet."),
         ("Now it waits at the door every evening when I get home.",
          "Now it won't let anybody sit in my chair, not even the kids."),
         ("The only problem is that it chews everything it can reach.",
          "The only problem is that it wakes us up at five every single morning."),
         ("Last week it ate one of {relative_p} shoes while we were at dinner.",
          "Last week it knocked a whole plant off the windowsill and then looked so proud of itself."),
         ("We've started taking it to a training class on {day} mornings.",
          "We bought a book about training, but I don't think it has read it."),
         ("+", "The trainer says it's actually really clever, just a bit spoiled.",
          "And honestly, it's already behaving a little better.")),
        ("Anyway, we're completely in love with it.", "I can't imagine the house without it now.",
         "So if you want to meet it, come over any time."),
    ),
    "breakdown": (
        ("Did you make it to {city} in the end?", "What happened with the car?", "Why were you so late on {day}?"),
        ("So on the way to {city} last weekend, the car broke down in the middle of nowhere.",
         "You know how I was driving to see {relative} on {day}?",
         "Okay, so the drive to {city} turned into a whole day."),
        (("About two hours in, a light started blinking on the dashboard.",
          "Everything was fine until the engine started making this horrible noise."),
         ("+", "I ignored it for a while, which was obviously a mistake.",
          "I pulled over at a petrol station, but nobody there knew anything about cars."),
         ("Then the car just slowly rolled to a stop on the side of the road.",
          "Twenty minutes later it stopped completely, right next to a field of cows."),
         ("My phone had almost no battery, and there was barely any signal.",
          "I called for help, and they said it might take three hours."),
         ("So I sat there eating the sandwiches I'd packed for the trip.",
          "So I started walking towards a farmhouse I could see in the distance."),
         ("Eventually a farmer on a tractor stopped and asked if I needed help.",
          "A really kind couple stopped and offered me a coffee from their flask."),
         ("+", "He towed the car to his barn and called a mechanic he knew.",
          "They gave me a lift to the next village, where there was a garage."),
         ("+", "It turned out to be a broken belt, and it was fixed in an hour.",
          "The mechanic fixed it for almost nothing and told me to check the oil more often.")),
        ("So I arrived at midnight, but I arrived.", "Now I always keep a charger in the car.",
         "I still can't believe how kind people were."),
    ),
    "instrument": (
        ("How are the {instrument} lessons going?", "Since when do you play the {instrument}?",
         "Are you still practising every day?"),
        ("So I started learning the {instrument} in {season}, at forty, which is maybe a bit crazy.",
         "You know I always wanted to play the {instrument}, and I finally started.",
         "Okay, so the {instrument} has been an interesting experience."),
        (("I found a teacher online who lives just around the corner.",
          "{relative} gave me an old {instrument} that had been in the attic for years."),
         ("The first lesson was mostly about how to sit and hold it properly.",
          "For the first few weeks I could only play about three notes."),
         ("My fingers hurt so much that I almost gave up after a week.",
          "The neighbours were very polite about the noise, but I could tell."),
         ("Then someone told me to practise for just ten minutes every day.",
          "So I started practising early in the morning, before anyone was awake."),
         ("And slowly, almost without noticing, it started to sound like music.",
          "After about two months I managed to play a whole simple song."),
         ("I played a little song for my family at dinner, and they actually clapped.",
          "I recorded myself on my phone and listened to it about twenty times."),
         ("Now I'm learning a piece that {name} used to play when we were kids.",
          "Now I'm even thinking about joining a small group that meets on {day}s."),
         ("It's hard, but it's the best part of my day.",
          "It's the one hour where I don't think about work at all.")),
        ("So yes, it's never too late, I think.", "Maybe I'll play at your birthday.",
         "I'd recommend it to anyone, honestly."),
    ),
    "bread": (
        ("How do you make your bread?", "Can you explain how you bake bread?", "Is it hard to make bread at home?"),
        ("So making bread at home is actually much easier than people think.",
         "Okay, let me explain how I make bread, because it's really simple.",
         "So the way my grandmother taught me to make bread goes like this."),
        (("You start with flour, water, salt and a little bit of yeast.",
          "All you need is flour, water, salt, yeast and some patience."),
         ("You mix everything in a big bowl until there's no dry flour left.",
          "First you mix the yeast with warm water, not hot, just warm."),
         ("Then you knead it for about ten minutes, until it feels smooth and a bit springy.",
          "Then you fold the dough over itself a few times, every half hour or so."),
         ("After that you cover the bowl and leave it somewhere warm for an hour or two.",
          "Then you just leave it alone while the yeast does all the work."),
         ("+", "When it has doubled in size, you push the air out and shape it into a loaf.",
          "Once it's nice and puffy, you gently shape it, without squashing it too much."),
         ("You let it rise again for a bit while the oven gets really hot.",
          "Meanwhile you heat the oven as hot as it will go, with a tray inside."),
         ("I put a little water in the oven, because the steam makes the crust crunchy.",
          "Then it bakes for about forty minutes, until it sounds hollow when you tap it."),
         ("The hardest part is waiting for it to cool before you cut it.",
          "And you really have to let it cool, or the inside will be gummy.")),
        ("That's really all there is to it.", "Try it on a rainy {day}, you'll love it.",
         "Once you've done it twice you won't buy bread again."),
    ),
    "running": (
        ("How did you get into running?", "Didn't you run a race last month?", "How do you start running if you hate it?"),
        ("So I started running about a year ago, and I used to hate it.",
         "Okay, so here's how I went from no running at all to a ten kilometre race.",
         "People always ask me how I started running, so here's the story."),
        (("At the beginning I couldn't even run for two minutes without stopping.",
          "The first time I tried, I had to stop at the end of our street."),
         ("So I started with a plan that mixes walking and running.",
          "A friend, {name}, told me to walk most of the time and run only a little."),
         ("+", "The first week you run for one minute and walk for two, about eight times.",
          "Every week you run a little longer and walk a little less."),
         ("I went three times a week, always early in the morning before work.",
          "I picked {day}s and two other days, so it became a habit."),
         ("Around week five, something changed and I actually started to enjoy it.",
          "After about a month I noticed I wasn't out of breath on the stairs any more."),
         ("The trick is to run so slowly that you could still have a conversation.",
          "Most people run far too fast at the start, and then they give up."),
         ("In {season} I signed up for a small race in the park, just to have a goal.",
          "Then {relative} dared me to sign up for a race, so I did."),
         ("+", "I finished it in just under an hour, and I was so proud.",
          "I wasn't fast at all, but I ran the whole way without stopping.")),
        ("So if I can do it, anyone can.", "Now I'm looking for the next race.",
         "Just start really, really slowly, that's my advice."),
    ),
    "wedding": (
        ("How was the wedding?", "Was the wedding as chaotic as you expected?", "Tell me about the wedding, I want all the details."),
        ("So {relative_p} wedding on Saturday was beautiful, but a little chaotic.",
         "Okay, so the wedding was quite something.",
         "You know {relative} was getting married in {city}, right?"),
        (("It was in an old barn outside town, with lights hanging everywhere.",
          "The ceremony was in a garden by the lake, which looked like a painting."),
         ("Of course the best man forgot the rings in the hotel.",
          "Just as the ceremony started, it began to rain really heavily."),
         ("+", "So there was a twenty minute pause while he drove back to get them.",
          "So everyone squeezed into a tiny tent, holding their plates over their heads."),
         ("+", "The band played old songs to keep everyone happy while we waited.",
          "But somehow that made it even more fun, everyone was laughing."),
         ("The speeches were lovely, and {name} made everyone cry, including me.",
          "My speech went fine, even though my hands were shaking the whole time."),
         ("Then the dancing started, and my grandfather danced until midnight.",
          "After dinner the dancing went on until two in the morning."),
         ("At one point the cake nearly fell over when a dog ran under the table.",
          "Someone's dog got into the kitchen and ate half of the dessert."),
         ("+", "But nobody cared, because everyone was just so happy for them.",
          "The couple said it was exactly the wedding they had wanted.")),
        ("I'm still tired, to be honest.", "It was the best wedding I've been to.",
         "I'll show you the photos when I get them."),
    ),
    "airport": (
        ("Did they ever find your suitcase?", "How was the flight back?", "What happened at the airport?"),
        ("So when we landed in {city}, my suitcase just never came out.",
         "Okay, so the airline lost my luggage on the way to {city}.",
         "Let me tell you about the airport, because it was a nightmare."),
        (("We waited at the belt until every other bag was gone.",
          "I stood at the belt for almost an hour, watching the same pink bag go round."),
         ("Then we queued at the lost luggage desk behind about thirty other people.",
          "The woman at the desk told me it had probably gone to a different city."),
         ("They gave me a form in three languages and a tiny bag with a toothbrush.",
          "All I had was what I was wearing and a book I had already finished."),
         ("The next morning I had to buy clothes for a meeting in a shopping centre.",
          "So I spent the first day of the trip in a shop buying socks and shirts."),
         ("Every day I called the airline, and every day they said tomorrow.",
          "The website kept saying my bag was being traced, whatever that means."),
         ("On the fourth day, a man knocked on the hotel door holding my suitcase.",
          "It finally arrived on the last day, about an hour before we left for the airport."),
         ("+", "It had a new sticker from a country I've never been to.",
          "Somehow it had been to three other airports without me."),
         ("At least they paid for the clothes I had to buy.",
          "The airline did pay me back, after about six emails.")),
        ("Now I always pack a spare shirt in my hand luggage.", "My suitcase has seen more of the world than I have.",
         "So that was my holiday, more or less."),
    ),
    "garden": (
        ("How's the vegetable garden?", "Did anything grow in the end?", "Are you still growing tomatoes?"),
        ("So this year I finally started a small vegetable garden behind the house.",
         "Okay, so the garden has been a whole learning experience.",
         "You know I had never grown anything before, right?"),
        (("In {season} I dug up a corner of the lawn and bought some seeds.",
          "{relative} gave me a box of seedlings and a lot of advice."),
         ("I planted tomatoes, beans, lettuce and way too many courgettes.",
          "I made a little plan on paper, which I ignored almost immediately."),
         ("For the first few weeks nothing happened, and I checked every single morning.",
          "Then the snails found the lettuce and ate all of it in one night."),
         ("+", "Then suddenly everything started growing at the same time.",
          "So I started going out at night with a torch to catch them."),
         ("The beans climbed up the fence and into the neighbour's garden.",
          "The tomatoes got so tall that I had to tie them to broom handles."),
         ("By the middle of summer we had more courgettes than we could ever eat.",
          "By August we were giving vegetables to everyone on the street."),
         ("+", "I made soup, bread, even a cake with them, and we still had more.",
          "Some of them started hiding when they saw me coming with another bag."),
         ("But eating a tomato you grew yourself is something else.",
          "But honestly, the salads have never tasted so good.")),
        ("Next year I'm planting half as many courgettes.", "I'm already planning next year's garden.",
         "So if you need vegetables, you know where to find me."),
    ),
}


def _slots(rng: random.Random) -> dict:
    rel = pick(rng, RELATIVES)
    return {
        "city": pick(rng, CITIES), "relative": rel, "relative_p": rel + "'s", "name": pick(rng, NAMES),
        "day": pick(rng, DAYS), "season": pick(rng, SEASONS), "n": say_num(rng.randint(2, 6)),
        "animal": pick(rng, ANIMALS), "instrument": pick(rng, INSTRUMENTS), "dish": pick(rng, DISHES),
        "job": pick(rng, JOBS),
    }


def _units(beats) -> list[list[tuple]]:
    """Group beats into units: a beat whose first entry is "+" only makes sense after the one before."""
    units: list[list[tuple]] = []
    for beat in beats:
        if beat[0] == "+":
            units[-1].append(beat[1:])
        else:
            units.append([beat])
    return units


def monologue(rng: random.Random, genre: str, slots: dict) -> str:
    """A story of 5-9 pieces joined by ``[trp]``, 60-110 words; one phrasing family per story."""
    _, openers, beats, closers = GENRES[genre]
    units = _units(beats)
    for _attempt in range(100):
        v = rng.randrange(2)
        target = rng.randint(*TRP_RANGE) + 1 - 2  # beats between opener and closer
        order = list(range(len(units)))
        rng.shuffle(order)
        chosen, size = [], 0
        for u in order:
            if size + len(units[u]) <= target:
                chosen.append(u)
                size += len(units[u])
        body = [beat[v % len(beat)] for u in sorted(chosen) for beat in units[u]]
        pieces = [cap(fill(p, slots)) for p in [pick(rng, openers), *body, pick(rng, closers)]]
        text = " [trp] ".join(pieces)
        if TRP_RANGE[0] <= len(pieces) - 1 <= TRP_RANGE[1] and WORD_RANGE[0] <= word_count(text) <= WORD_RANGE[1]:
            return text
    raise RuntimeError(f"backchannel: no story of {WORD_RANGE} words for genre {genre!r}")


def make(index: int, rng: random.Random, sid: str, seed: int = 0) -> dict:
    genres = sorted(GENRES)
    genre = genres[block_choice(KIND, seed, index, len(genres))]
    names = rng.sample(NAMES, 3)
    user = names[0]
    slots = _slots(rng)
    slots["name"] = names[2]
    speakers = [user]
    turns = []
    if chance(rng, 0.4):
        speakers.append(names[1])
        turns.append(make_turn("t0", names[1], "ctx", fill(pick(rng, GENRES[genre][0]), slots)))
    text = monologue(rng, genre, slots)
    turns.append(make_turn(f"t{len(turns)}", user, "monologue", text, gap=gap(rng, 0.3, 0.8) if turns else None))
    return make_scene(sid, KIND, speakers, turns, attributes={"genre": genre})
