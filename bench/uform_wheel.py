"""What the Python workers of `cargo xtask bench encode` and `cargo xtask bench train` (bench/encode/worker.py,
bench/train/worker.py) share: their thread count, and the uform wheel's model, or why a worker cannot load it."""

import os

THREADS = int(os.environ.get("UFORM_BENCH_THREADS", "2"))


class Unavailable(Exception):
    """This runtime cannot run here; the worker answers {"unavailable": ...} with the message."""


def load_model(model_dir, needs):
    """The uform package and `Model.load_ram(model_dir)` on a THREADS-thread RAM executor; Unavailable without the
    package, or when it has no `needs` (the class the worker uses) yet."""
    try:
        import uform
    except ImportError as e:
        raise Unavailable(f"no uform package: {e}")
    if not hasattr(uform, needs):
        raise Unavailable(f"the uform package has no {needs} yet")
    executor = uform.Executor.for_ram(threads=THREADS)
    return uform, uform.Model.load_ram(model_dir, executor=executor)
