"""The training fixtures' data: the (anchor, positive) pairs make-train-fixture.py and make-train-ddp-fixture.py train
on, and the held-out texts they embed before and after."""

# (anchor, positive): questions and answers, paraphrases, titles and summaries; 4 to 40 words; no repeats. Nine
# topics of eight pairs, so that in-batch negatives are hard and the loss stays well above float32 noise (a batch of
# unrelated pairs gives losses near 1e-4, which float32 cannot compute to 1e-4 relative). Every batch starts at a
# multiple of 8, so batch k holds topics 2k mod 9 and 2k+1 mod 9 (one topic per rank with two ranks, half a topic
# per rank with four). Pairs 0-1 and 4-5 of each topic are near-twins (the same question or headline said two ways),
# so every share of 4 holds one: they keep some loss after the model has learnt the rest (without them it falls to
# ~0.003 by step 11, where torch's float32 loss alone is ~5e-5 relative off its float64 value).
PAIRS = [
    # planets: questions and short answers (hard negatives: all about planets)
    ("Which planet is known as the red planet?", "Mars, because rusty iron oxide dust covers its surface."),
    ("Which planet do people call the red planet?", "It is Mars, whose dusty surface is full of rusty iron oxide."),
    ("Which planet has the most spectacular rings?", "Saturn, whose wide rings are made of ice and rock."),
    ("Which planet is closest to the sun?", "Mercury, which races around the sun every 88 days."),
    ("Which planet is the largest in our solar system?", "Jupiter, more than eleven times wider than Earth."),
    ("What is the biggest planet orbiting the sun?", "Jupiter, the giant whose width is more than eleven Earths."),
    ("Which planet has the hottest surface?",
     "Venus, because its thick carbon dioxide atmosphere traps the heat."),
    ("Which planet is farthest from the sun?", "Neptune, a cold blue world first seen in 1846."),
    # schedules: paraphrases
    ("The meeting was moved from Monday to Friday.",
     "They pushed the meeting back to Friday; it was originally planned for Monday."),
    ("The meeting got rescheduled from Monday to Friday.", "Monday's meeting will now take place on Friday instead."),
    ("The dentist appointment is now on Tuesday morning instead of Wednesday.",
     "My visit to the dentist got switched from Wednesday to Tuesday morning."),
    ("The flight to Rome leaves at seven in the evening.", "Our plane for Rome departs at 7 pm."),
    ("The flight to Oslo was cancelled because of snow.",
     "Heavy snowfall grounded the plane that was supposed to fly to Oslo."),
    ("Snow caused the cancellation of the Oslo flight.",
     "Because of heavy snow, the plane to Oslo did not take off."),
    ("The concert starts at eight, but the doors open at half past six.",
     "Doors open at 6:30 pm and the music begins at 8."),
    ("The library closes early on Saturdays.", "On Saturdays the library shuts before its usual time."),
    # weather news: titles and summaries
    ("Storm brings flooding to coastal towns",
     "Heavy rain and unusually high tides overnight left streets underwater in several seaside communities, and "
     "dozens of residents spent the night in emergency shelters set up in school halls."),
    ("Coastal towns flooded after storm",
     "Several seaside towns are under water after a night of storms, heavy rain and very high tides."),
    ("Record heat grips the capital",
     "Temperatures in the city reached forty-one degrees on Tuesday, the highest reading since measurements began, "
     "and doctors urged older people to stay indoors during the afternoon."),
    ("Snowfall closes mountain passes",
     "Half a metre of fresh snow forced the authorities to shut three high roads through the Alps, leaving lorries "
     "queuing in the valleys."),
    ("Drought forces water restrictions",
     "With reservoirs at a third of their normal level, households are banned from using hosepipes to water "
     "gardens or wash cars until further notice."),
    ("Hosepipe ban as drought drains reservoirs",
     "Households may no longer use hosepipes for gardens or cars because reservoirs have fallen to a third of "
     "their usual level."),
    ("Hailstorm damages vineyards before the harvest",
     "Hailstones the size of marbles shredded leaves and split grapes across the wine region just weeks before "
     "the harvest."),
    ("Heatwave expected to last through the weekend",
     "Forecasters say temperatures will stay above thirty-five degrees until at least Sunday evening."),
    # cooking: questions and answers
    ("How long should I boil an egg for a runny yolk?",
     "About six minutes in boiling water, then cool it under the cold tap."),
    ("How many minutes does a soft-boiled egg need?",
     "Around six minutes, so that the white sets but the yolk stays runny."),
    ("How long do hard-boiled eggs take?", "Ten to twelve minutes, until both the white and the yolk are firm."),
    ("How do I stop pasta from sticking together?",
     "Use plenty of boiling salted water and stir it during the first two minutes."),
    ("How can I tell when a steak is medium rare?",
     "It feels soft and springy when pressed, and a thermometer in the centre reads about 57 °C."),
    ("How do I know if my steak is cooked medium rare?",
     "When pressed it is soft and springy, and the centre measures about 57 °C on a thermometer."),
    ("How do I make rice less sticky?", "Rinse it in cold water until the water runs clear before you cook it."),
    ("Can I freeze cooked rice?", "Yes: cool it quickly, freeze it in sealed bags and use it within a month."),
    # small mishaps: paraphrases (near-duplicates)
    ("He lost his wallet on the train this morning.", "His wallet went missing during his train ride today."),
    ("This morning he lost his wallet on the train.", "Earlier today his wallet vanished while he was on the train."),
    ("He lost his wallet on the bus this morning.", "His wallet disappeared while he was riding the bus today."),
    ("She lost her phone on the train last night.", "Her mobile went missing on a train yesterday evening."),
    ("He left his umbrella on the train.", "His umbrella stayed behind on the train when he got off."),
    ("He forgot his umbrella on the train.", "When he got off the train, he left his umbrella behind."),
    ("He forgot his keys and had to wait outside for an hour.",
     "Without his keys, he was stuck on the doorstep for sixty minutes."),
    ("She found a wallet on the bus and gave it to the driver.",
     "She handed a purse she had picked up on the bus to the driver."),
    # the high street: titles and summaries (near-duplicate titles)
    ("Local bakery wins national bread award",
     "A small family bakery in the town centre was named the country's best sourdough producer at this year's "
     "national baking championship."),
    ("Town bakery named best in the country",
     "Judges at the national baking championship picked a small family bakery from the town centre as the "
     "nation's best."),
    ("Local bakery to close after forty years",
     "The family who have run the bakery on the high street since the 1980s will bake their last loaf in March "
     "as the owners retire."),
    ("Popular café wins best coffee prize",
     "Baristas at a busy café near the station beat dozens of rivals to take the regional title for the best "
     "espresso."),
    ("Popular café to close after rent rise",
     "The owners of the much-loved corner café say a sharp increase in rent has forced them to shut at the end "
     "of the month."),
    ("Rent increase forces popular café to shut",
     "A steep rise in rent means the well-loved café on the corner will close its doors at the end of the month."),
    ("Bookshop saved by crowdfunding campaign",
     "Readers donated more than forty thousand pounds in a week to keep the struggling independent bookshop open."),
    ("Historic cinema to be restored",
     "After a five-year campaign, a local charity has raised enough money to repair the crumbling 1930s cinema "
     "on the seafront, replace its roof and projection room and show films there again next summer."),
    # sky and seasons: questions and explanations
    ("Why is the sky blue during the day?",
     "Sunlight contains every colour, but the nitrogen and oxygen molecules in the atmosphere scatter the short "
     "blue wavelengths far more strongly than the long red ones, so scattered blue light reaches our eyes from "
     "every part of the sky."),
    ("What makes the daytime sky look blue?",
     "Air molecules scatter blue sunlight much more than red light, so blue reaches us from all directions."),
    ("Why are sunsets often red or orange?",
     "Near the horizon sunlight crosses far more air, so most of the blue is scattered away and mainly red and "
     "orange light gets through."),
    ("What causes the sound of thunder?",
     "Lightning heats the air so fast that it expands explosively, and that shock wave is what we hear."),
    ("What causes a flash of lightning?",
     "Ice and water collide inside storm clouds and build up electric charge until a giant spark jumps to the "
     "ground."),
    ("How does lightning form?",
     "Collisions between ice and water in thunderclouds build up electric charge until a huge spark leaps to the "
     "ground."),
    ("Why do leaves change colour in autumn?",
     "As the days shorten, trees stop making green chlorophyll, revealing the yellow and orange pigments that "
     "were in the leaves all along."),
    ("Why do we have leap years?",
     "A year lasts about a quarter of a day longer than 365 days, so an extra day every four years keeps the "
     "calendar in step with the seasons."),
    # office and devices: paraphrases
    ("My laptop battery drains much faster than it used to.",
     "These days the battery in my notebook runs out far more quickly than before."),
    ("My laptop's battery doesn't last as long as it used to.",
     "The notebook battery now empties much sooner than it once did."),
    ("My phone battery drains much faster than it used to.",
     "Lately my mobile runs out of charge far more quickly than it did."),
    ("The printer on the second floor is out of paper again.",
     "Once more the second-floor printer has run out of paper."),
    ("The printer on the third floor keeps jamming.", "Paper gets stuck in the third-floor printer all the time."),
    ("The third-floor printer jams constantly.", "On the third floor, paper keeps getting stuck in the printer."),
    ("Could you send me the slides before the meeting?",
     "Please share the presentation with me ahead of the meeting."),
    ("The Wi-Fi in the office keeps dropping out.", "Our office wireless connection cuts out again and again."),
    # animals: how many / how long
    ("How many legs does a spider have?", "Spiders walk on eight jointed legs."),
    ("How many legs do spiders have?", "A spider has eight legs."),
    ("How many legs does an insect have?", "Insects have six legs attached to the middle part of the body."),
    ("How many hearts does an octopus have?", "An octopus has three hearts and blue blood."),
    ("How long do elephants live?", "Elephants in the wild often live for sixty or seventy years."),
    ("What is the lifespan of an elephant?", "In the wild, elephants often reach sixty or seventy years of age."),
    ("How many legs does a centipede have?",
     "Despite the name, a centipede has anything from thirty to over three hundred legs, always an odd number of "
     "pairs."),
    ("How long do pet cats usually live?", "Indoor cats commonly live to fifteen years or more."),
]

# Texts that are not in PAIRS, embedded before and after training.
HELD_OUT = [
    "A man is playing a guitar on the street corner.",
    "How do I change a flat tyre on a bicycle?",
    "The stock market rose sharply after the announcement.",
    "Penguins are flightless birds that live mostly in cold regions.",
    "Please remember to water the plants while I'm away.",
    "New study finds coffee drinkers live slightly longer",
    "What time does the last bus leave the station?",
    "The orchestra rehearsed the symphony for three weeks before the premiere, and the conductor insisted on "
    "perfect timing in every movement.",
    "quantum computing",
    "She laughed so hard that tears ran down her face.",
]
