"""Flattens tests/fixtures/train/reference.json for tests/c/test_train.c, which reads no JSON.

Writes, one item a line: `STEPS PAIRS HELD_OUT DIMS`; the config as `learning_rate weight_decay warmup_steps
total_steps max_grad_norm scale dropout seed`; per pair its anchor and its positive as UTF-8 hex ("-" when empty);
per step `loss learning_rate gradient_norm COUNT` and the COUNT pair indices; per held-out text its hex, its
embedding before training and after. Floats are written with repr, so they read back exactly.
Usage: python3 flatten_train_reference.py REFERENCE_JSON OUT

With a DDP fixture (ddp2.json, ddp4.json) and `--rank R` it writes rank R's view in the same format: its share of
every step, its losses, the shared learning rates and gradient norms, and the held-out embeddings after training
(in place of both before and after: the fixture records no untrained ones).
Usage: python3 flatten_train_reference.py DDP_JSON OUT --rank R
"""

import json
import sys


def hex_of(text):
    return text.encode("utf-8").hex() or "-"


def floats(row):
    return " ".join(repr(float(x)) for x in row)


reference = json.load(open(sys.argv[1], encoding="utf-8"))
config = reference["config"]
pairs, steps, held_out = reference["pairs"], reference["steps"], reference["held_out"]
after = reference["held_out_embeddings_after"]
before = reference.get("held_out_embeddings_before", after)
if len(sys.argv) == 5 and sys.argv[3] == "--rank":
    rank = reference["ranks"][int(sys.argv[4])]
    steps = rank["local_steps"]
    reference = dict(reference, loss=rank["loss"])
with open(sys.argv[2], "w", encoding="ascii") as out:
    out.write(f"{len(steps)} {len(pairs)} {len(held_out)} {len(before[0])}\n")
    total_steps = config.get("total_steps", config.get("max_steps"))
    out.write(
        f"{float(config['learning_rate'])!r} {float(config['weight_decay'])!r} {int(config['warmup_steps'])} "
        f"{int(total_steps)} {float(config['max_grad_norm'])!r} {float(config['scale'])!r} "
        f"{float(config['dropout'])!r} {int(config['seed'])}\n"
    )
    for anchor, positive in pairs:
        out.write(hex_of(anchor) + "\n" + hex_of(positive) + "\n")
    for k, indices in enumerate(steps):
        out.write(f"{float(reference['loss'][k])!r} {float(reference['lr'][k])!r} {float(reference['grad_norm'][k])!r} ")
        out.write(f"{len(indices)} " + " ".join(str(i) for i in indices) + "\n")
    for text, b, a in zip(held_out, before, after):
        out.write(hex_of(text) + "\n" + floats(b) + "\n" + floats(a) + "\n")
