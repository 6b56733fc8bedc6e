"""The Python peer of `cargo xtask bench load`: opens a safetensors file with `safe_open(framework="numpy")` and
copies every tensor into a numpy array. Prints the seconds this took (imports excluded) and the bytes read."""

import sys
import time

import numpy  # noqa: F401  (imported before the clock starts)
from safetensors import safe_open

start = time.perf_counter()
total = 0
with safe_open(sys.argv[1], framework="numpy") as f:
    for name in f.keys():
        total += f.get_tensor(name).nbytes
print(f"{time.perf_counter() - start:.6f} {total}")
