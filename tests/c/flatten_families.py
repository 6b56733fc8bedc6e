"""Flattens tests/fixtures/families/reference.json for tests/c/test_families.c, which reads no JSON.

Writes one block per entry (tests/c/flatten_entries.py): a line `NAME ROWS COLUMNS`, then ROWS lines: with COLUMNS 0
each a text's UTF-8 bytes in hex ("-" when empty), else COLUMNS numbers. NAME is `family.key` (`distilbert.texts`,
`bert-reranker.scores`, ...); a reranker's query is one text, its scores one row.
Usage: python3 flatten_families.py REFERENCE_JSON OUT
"""

from flatten_entries import flatten, matrix, texts


def write(reference, out):
    for family, entry in reference.items():
        for key, value in entry.items():
            if key in ("texts", "documents"):
                texts(out, f"{family}.{key}", value)
            elif key == "query":
                texts(out, f"{family}.{key}", [value])
            elif key == "scores":
                matrix(out, f"{family}.{key}", [value])
            elif isinstance(value, list):
                matrix(out, f"{family}.{key}", value)


flatten(write)
