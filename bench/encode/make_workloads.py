#!/usr/bin/env python3
"""Writes bench/encode/workloads.json, the texts `cargo xtask bench encode` feeds every runtime.

    python3 bench/encode/make_workloads.py MODEL_DIR   (needs `tokenizers`; the bench venv has it)

- `latency`: one sentence of about ten words (13 tokens with [CLS] and [SEP]);
- `long`: 32 distinct texts of exactly 128 tokens each, [CLS] and [SEP] included (windows over the prose below);
- `short`: 32 distinct short sentences (about 12 tokens each).
Token counts use the model's tokenizer.json without its truncation and padding; the benchmark checks them again.
"""

import json
import os
import sys

from tokenizers import Tokenizer

LATENCY = "A quick brown fox jumps over the lazy dog today."

PROSE = """
The history of the printing press begins long before Johannes Gutenberg set up his workshop in Mainz. Woodblock
printing had been practised in China for centuries, and movable type made of baked clay was described in the
eleventh century. What Gutenberg combined was an adjustable mould for casting uniform type, an oil-based ink and a
screw press adapted from those used for wine. Within fifty years presses were operating in more than two hundred
towns. Photosynthesis converts light energy into chemical energy. In the chloroplasts of plant cells, chlorophyll
absorbs mostly blue and red light, and the energy drives the splitting of water, releasing oxygen. The Calvin cycle
then fixes carbon dioxide from the air into sugars that feed the plant and, through food chains, nearly every other
living thing. Rivers shape the land they cross. Over thousands of years a stream can carve a canyon through solid
rock, build a delta where it meets the sea, and leave terraces that record each change in climate. Engineers who
build dams must predict how sediment will settle behind the wall and how the river below will respond once its load
is trapped. Modern compilers translate high-level code into machine instructions through a series of passes: parsing,
type checking, lowering to an intermediate form, optimisation and finally register allocation and scheduling. Each
pass is simple on its own, but together they decide whether a loop runs at a tenth of the machine's speed or close to
its peak. The old market square fills with stalls every Saturday morning. Farmers bring cheese, honey and apples from
the surrounding valleys, a baker sells bread still warm from the oven, and musicians play near the fountain while
children chase pigeons across the cobblestones. Marathon runners train for months, slowly raising their weekly
distance while keeping most runs easy. Long runs teach the body to burn fat efficiently, intervals raise the
speed that can be held, and rest days let muscles repair the small injuries that training causes.
"""

SHORT = [
    "The cat sat quietly on the warm windowsill all afternoon.",
    "Please send me the quarterly report before Friday evening.",
    "Our flight to Berlin was delayed by two hours.",
    "She planted tomatoes and basil in the small garden.",
    "The museum opens at nine and closes at six.",
    "He fixed the leaking kitchen tap with a new washer.",
    "Heavy rain is expected across the region this weekend.",
    "The team celebrated their victory with pizza and music.",
    "My laptop battery lasts about eight hours on a charge.",
    "They walked along the beach as the sun went down.",
    "The library has extended its opening hours for students.",
    "A new bridge will connect the two sides of town.",
    "The recipe calls for three eggs and a cup of flour.",
    "Scientists discovered a new species of frog in the rainforest.",
    "The meeting was moved to the larger conference room.",
    "I forgot my umbrella on the train this morning.",
    "The price of coffee has risen sharply this year.",
    "Children were building sandcastles near the old pier.",
    "The software update fixed several security problems.",
    "We watched a documentary about deep sea creatures.",
    "The orchestra rehearsed the symphony for the last time.",
    "Traffic was light on the highway early on Sunday.",
    "She learned to play the guitar during the summer.",
    "The hotel room had a beautiful view of the lake.",
    "Volunteers cleaned up the park after the festival ended.",
    "The bakery on the corner sells excellent croissants.",
    "Our neighbours adopted a friendly dog from the shelter.",
    "The train station was crowded with holiday travellers.",
    "He wrote a long letter to his grandmother in Spain.",
    "The company plans to hire fifty new engineers soon.",
    "Snow covered the mountains after the first winter storm.",
    "The students presented their projects to the whole school.",
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_workloads.py MODEL_DIR")
    tokenizer = Tokenizer.from_file(os.path.join(sys.argv[1], "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    count = lambda text: len(tokenizer.encode(text).ids)  # noqa: E731
    words = PROSE.split()
    long = []
    start = 0
    while len(long) < 32:
        # The longest run of words from `start` that stays within 128 tokens, then one-token words to fill it.
        end = start + 1
        while count(" ".join(words[start : end + 1])) <= 128 and end < len(words):
            end += 1
        text = " ".join(words[start:end])
        while count(text) < 128:
            text += " and"
        assert count(text) == 128, (text, count(text))
        long.append(text)
        start = (start + 13) % (len(words) - 120)
    assert len(set(long)) == 32
    assert count(LATENCY) == 13, count(LATENCY)
    assert len(SHORT) == 32 and len(set(SHORT)) == 32
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads.json")
    workloads = {
        "about": "texts for cargo xtask bench encode, made by bench/encode/make_workloads.py",
        "latency": [LATENCY],
        "long": long,
        "short": SHORT,
        "tokens": {"latency": [count(LATENCY)], "long": [count(t) for t in long], "short": [count(t) for t in SHORT]},
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(workloads, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {out}; short token counts {workloads['tokens']['short']}")


if __name__ == "__main__":
    main()
