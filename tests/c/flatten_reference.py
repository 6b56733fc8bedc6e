"""Flattens tests/fixtures/encode/reference.json for tests/c/test_encode.c, which reads no JSON.

Writes `ROWS DIMS LONG_TEXT_INDEX`, then per text its UTF-8 bytes in hex ("-" when empty) and its embedding.
Usage: python3 flatten_reference.py REFERENCE_JSON OUT
"""

import json
import sys

reference = json.load(open(sys.argv[1], encoding="utf-8"))
with open(sys.argv[2], "w", encoding="ascii") as out:
    out.write(f"{len(reference['texts'])} {reference['dimensions']} {reference['long_text_index']}\n")
    for text, row in zip(reference["texts"], reference["embeddings"]):
        out.write((text.encode("utf-8").hex() or "-") + "\n")
        out.write(" ".join(repr(float(x)) for x in row) + "\n")
