"""The Python part of `cargo xtask bench overhead`: nanoseconds per call of `capabilities_compiled()` and of
`drain()` on an idle executor, each against the bare pyo3 no-op `uform._native._noop()` in the same run; and what
returning a 32 x 384 float32 matrix costs (`uform._native._matrix(32, 384)`, handed back as `encode_text` hands back
its result), next to `encode_text` of 32 short texts when UFORM_TEST_MODEL_DIR names the test model.

Best of several `timeit` repeats, so a scheduler hiccup does not count. Not a test: it prints, it never fails on a
number.
"""

from __future__ import annotations

import os
import statistics
import time
import timeit
from typing import Callable

import uform
from uform import _native

NUMBER = 200_000
REPEAT = 7


def best_ns(call: Callable[[], object]) -> float:
    return min(timeit.repeat(call, number=NUMBER, repeat=REPEAT)) / NUMBER * 1e9


def main() -> None:
    noop = _native._noop
    capabilities = uform.capabilities_compiled
    with uform.Executor.for_ram(threads=1) as executor:
        drain = executor.drain
        drain()
        # Interleave so that frequency scaling treats all three alike.
        results = {"noop": [], "noop_with_argument": [], "capabilities": [], "drain": []}  # type: dict[str, list[float]]
        for _ in range(3):
            results["noop"].append(best_ns(noop))
            results["noop_with_argument"].append(best_ns(_native._noop_with_argument))
            results["capabilities"].append(best_ns(capabilities))
            results["drain"].append(best_ns(drain))
    matrix_ns = min(min(timeit.repeat(lambda: _native._matrix(32, 384), number=2_000, repeat=REPEAT)) / 2_000 * 1e9
                    for _ in range(3))
    encode_ms = float("nan")
    model_dir = os.environ.get("UFORM_TEST_MODEL_DIR")
    if model_dir:
        texts = [f"a short sentence, number {i}, about what embeddings are for" for i in range(32)]
        with uform.Executor.for_ram(threads=2) as executor, uform.Model.load_ram(model_dir, executor=executor) as model:
            model.encode_text(texts)
            times = []
            for _ in range(15):
                started = time.perf_counter()
                model.encode_text(texts)
                times.append(time.perf_counter() - started)
            encode_ms = statistics.median(times) * 1e3
    print(f"python: returning a 32 x 384 float32 matrix {matrix_ns:.0f} ns; encode_text of 32 short texts {encode_ms:.2f} ms")
    ns = {name: min(values) for name, values in results.items()}
    core = {name: min(_native._core_ns(name, NUMBER) for _ in range(REPEAT)) for name in ("capabilities_compiled", "drain")}
    print(f"core ns/call (from Rust, no Python): capabilities_compiled={core['capabilities_compiled']:.1f} drain={core['drain']:.1f}")
    print(
        f"python ns/call: noop={ns['noop']:.1f} (a no-op taking one optional argument, as drain does: "
        f"{ns['noop_with_argument']:.1f}) capabilities_compiled={ns['capabilities']:.1f} drain={ns['drain']:.1f}"
    )
    print(
        f"overhead python: capabilities/noop={ns['capabilities'] / ns['noop']:.2f} drain/noop={ns['drain'] / ns['noop']:.2f} "
        f"noop_ns={ns['noop']:.1f} capabilities_ns={ns['capabilities']:.1f} drain_ns={ns['drain']:.1f} "
        f"matrix_ns={matrix_ns:.0f} encode_ms={encode_ms:.2f}"
    )


if __name__ == "__main__":
    main()
