"""The block format tests/c/flatten_families.py and flatten_images.py write, for the C suites, which read no JSON.

One block per entry: a line `NAME ROWS COLUMNS`, then ROWS lines: with COLUMNS 0 each a string's UTF-8 bytes in hex
("-" when empty), else COLUMNS numbers (tests/c/suite.h's `read_entries` reads them).
"""

import json
import sys


def texts(out, name, values):
    out.write(f"{name} {len(values)} 0\n")
    for text in values:
        out.write((text.encode("utf-8").hex() or "-") + "\n")


def matrix(out, name, rows):
    out.write(f"{name} {len(rows)} {len(rows[0])}\n")
    for row in rows:
        out.write(" ".join(repr(float(x)) for x in row) + "\n")


def flatten(write):
    """Reads the JSON named by the first argument and calls `write(reference, out)` on the file the second names."""
    reference = json.load(open(sys.argv[1], encoding="utf-8"))
    with open(sys.argv[2], "w", encoding="ascii") as out:
        write(reference, out)
