"""The SHA-256 the fixture scripts (make-encode-reference.py, make-train-fixture.py) record of the files they read."""

import hashlib


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
