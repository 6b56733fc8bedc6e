"""Flattens tests/fixtures/families/reference.json for tests/c/test_encode.c, which reads no JSON.

Writes one block per entry: a line `NAME ROWS COLUMNS`, then ROWS lines: with COLUMNS 0 each a text's UTF-8 bytes in
hex ("-" when empty), else COLUMNS numbers. NAME is `family.key` (`distilbert.texts`, `bert-reranker.scores`, ...);
a reranker's query is one text, its scores one row.
Usage: python3 flatten_families.py REFERENCE_JSON OUT
"""

import json
import sys

reference = json.load(open(sys.argv[1], encoding="utf-8"))
with open(sys.argv[2], "w", encoding="ascii") as out:

    def texts(name, values):
        out.write(f"{name} {len(values)} 0\n")
        for text in values:
            out.write((text.encode("utf-8").hex() or "-") + "\n")

    def matrix(name, rows):
        out.write(f"{name} {len(rows)} {len(rows[0])}\n")
        for row in rows:
            out.write(" ".join(repr(float(x)) for x in row) + "\n")

    for family, entry in reference.items():
        for key, value in entry.items():
            if key in ("texts", "documents"):
                texts(f"{family}.{key}", value)
            elif key == "query":
                texts(f"{family}.{key}", [value])
            elif key == "scores":
                matrix(f"{family}.{key}", [value])
            elif isinstance(value, list):
                matrix(f"{family}.{key}", value)
