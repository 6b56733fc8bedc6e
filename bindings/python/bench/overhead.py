"""The Python part of `cargo xtask bench overhead`: nanoseconds per call of `capabilities_compiled()` and of
`drain()` on an idle executor, each against the bare pyo3 no-op `uform._native._noop()` in the same run.

Best of several `timeit` repeats, so a scheduler hiccup does not count. Not a test: it prints, it never fails on a
number.
"""

from __future__ import annotations

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
    ns = {name: min(values) for name, values in results.items()}
    core = {name: min(_native._core_ns(name, NUMBER) for _ in range(REPEAT)) for name in ("capabilities_compiled", "drain")}
    print(f"core ns/call (from Rust, no Python): capabilities_compiled={core['capabilities_compiled']:.1f} drain={core['drain']:.1f}")
    print(
        f"python ns/call: noop={ns['noop']:.1f} (a no-op taking one optional argument, as drain does: "
        f"{ns['noop_with_argument']:.1f}) capabilities_compiled={ns['capabilities']:.1f} drain={ns['drain']:.1f}"
    )
    print(
        f"overhead python: capabilities/noop={ns['capabilities'] / ns['noop']:.2f} drain/noop={ns['drain'] / ns['noop']:.2f} "
        f"noop_ns={ns['noop']:.1f} capabilities_ns={ns['capabilities']:.1f} drain_ns={ns['drain']:.1f}"
    )


if __name__ == "__main__":
    main()
