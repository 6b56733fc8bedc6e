"""Reliability (issue 9): create/free cycles that must not leak, finalizers that reclaim handles nobody freed, and
executors and meshes used from many Python threads at once.

Numbers follow SCENARIOS.md where a test extends a scenario (6 and 7: life cycle and scoped release; 11 and 15:
mesh). Observations, not timings: resident memory (VmRSS) and the process's OS thread count (/proc/self/task),
which an executor of `threads=2` raises by one worker while it lives.

Every test runs under a watchdog (faulthandler): a deadlock dumps every thread's stack and ends the run instead
of hanging it. `UFORM_LEAK_CYCLES` scales the create/free loops (default 100,000). A cycle of a two-thread
executor spawns and joins its worker (~0.15 ms), so, as in the Node suite, those loops run 10,000 cycles; set
`UFORM_LEAK_THREADED_CYCLES=100000` to run them at full length.
"""

from __future__ import annotations

import collections
import faulthandler
import gc
import os
import pathlib
import threading
import time
from typing import Callable, Counter, Dict, Iterator, List

import pytest

import uform
from uform import Executor, Mesh, Mood

CYCLES = int(os.environ.get("UFORM_LEAK_CYCLES", "100000"))
THREADED_CYCLES = int(os.environ.get("UFORM_LEAK_THREADED_CYCLES", "10000"))
WARM_UP = 2_000
RSS_BUDGET_KIB = 5 * 1024
WATCHDOG_SECONDS = 240


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def os_threads() -> int:
    return len(os.listdir("/proc/self/task"))


def settle_threads(expected: int, within: float = 5.0) -> int:
    """The OS thread count once it reaches `expected` (an exiting thread leaves /proc a moment after join)."""
    deadline = time.monotonic() + within
    while True:
        count = os_threads()
        if count <= expected or time.monotonic() > deadline:
            return count
        time.sleep(0.01)


def report(request: pytest.FixtureRequest, **numbers: int) -> None:
    """Records the measured numbers in the JUnit properties and prints them (seen with `pytest -s`)."""
    for key, value in numbers.items():
        request.node.user_properties.append((key, value))
    print(f"\n{request.node.name}: " + ", ".join(f"{k}={v}" for k, v in numbers.items()))


def run_threads(targets: List[Callable[[], None]], timeout: float = 60.0) -> None:
    """Starts one thread per target, joins them all and fails when one is still running after `timeout`."""
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    assert not stuck, f"threads still running after {timeout} s (deadlock?): {stuck}"


def until_freed(
    started: threading.Barrier, lock: threading.Lock, outcomes: Counter[str], call: Callable[[], None]
) -> Callable[[], None]:
    """A thread's loop: past `started`, `call` until it raises, counting each outcome in `outcomes` ("ok", "freed"
    for FreedHandleError, any other exception as its type and message)."""

    def loop() -> None:
        started.wait()
        while True:
            try:
                call()
                outcome = "ok"
            except uform.FreedHandleError:
                outcome = "freed"
            except BaseException as e:  # noqa: B902 - counted, then failed below
                outcome = f"{type(e).__name__}: {e}"
            with lock:
                outcomes[outcome] += 1
            if outcome != "ok":
                return

    return loop


# ---- Leaks: create/free cycles ----


def measure_cycles(cycle: Callable[[], None], cycles: int) -> Dict[str, int]:
    for _ in range(WARM_UP):
        cycle()
    gc.collect()
    threads_before, rss_before = os_threads(), rss_kib()
    for _ in range(cycles):
        cycle()
    gc.collect()
    return {
        "cycles": cycles,
        "rss_before_kib": rss_before,
        "rss_growth_kib": rss_kib() - rss_before,
        "threads_before": threads_before,
        "threads_after": settle_threads(threads_before),
    }


def check_cycles(request: pytest.FixtureRequest, cycle: Callable[[], None], cycles: int) -> None:
    numbers = measure_cycles(cycle, cycles)
    report(request, **numbers)
    assert numbers["rss_growth_kib"] < RSS_BUDGET_KIB, numbers
    assert numbers["threads_after"] == numbers["threads_before"], numbers


def test_06_create_and_free_two_threads_does_not_leak(request: pytest.FixtureRequest) -> None:
    def cycle() -> None:
        executor = Executor.for_ram(threads=2)
        executor.free()

    check_cycles(request, cycle, THREADED_CYCLES)


def test_07_with_block_does_not_leak(request: pytest.FixtureRequest) -> None:
    """One cycle in ten spawns a worker (`threads=2`); the rest are caller-only (`threads=1`), to keep the file's
    run time near half a minute on two cores: a worker's spawn and join cost about 0.15 ms."""
    count = iter(range(10**9))

    def cycle() -> None:
        with Executor.for_ram(threads=2 if next(count) % 10 == 0 else 1) as executor:
            executor.drain()

    check_cycles(request, cycle, CYCLES)


def test_15_mesh_of_one_with_its_executor_does_not_leak(request: pytest.FixtureRequest) -> None:
    def cycle() -> None:
        with Executor.for_ram(threads=1) as executor:
            with Mesh.bootstrap(executor) as mesh:
                mesh.describe()

    check_cycles(request, cycle, CYCLES)


def test_16_failing_calls_do_not_leak(request: pytest.FixtureRequest) -> None:
    freed = Executor.for_ram(threads=1)
    freed.free()

    def cycle() -> None:
        for call in (
            lambda: Executor.for_ram(threads=0),
            lambda: Executor.for_ram(cpu_class="intel-486"),
            lambda: Executor.for_ram(memory_domains=[0, 0]),
            lambda: freed.drain(),
            lambda: Mesh.bootstrap(freed),
        ):
            try:
                call()
            except uform.UFormError:
                pass
            else:
                raise AssertionError("the call should have failed")

    check_cycles(request, cycle, CYCLES // 10)


# ---- Finalizers: handles dropped without free() ----


def test_06_unfreed_executors_are_reclaimed_when_dropped(request: pytest.FixtureRequest) -> None:
    gc.collect()
    baseline = settle_threads(os_threads())
    executors = [Executor.for_ram(threads=2) for _ in range(200)]
    alive = os_threads()
    assert alive == baseline + 200, (baseline, alive)  # one worker each; the caller is thread 0
    del executors
    gc.collect()
    after = settle_threads(baseline)
    report(request, baseline_threads=baseline, threads_with_200_alive=alive, threads_after_drop=after)
    assert after == baseline


def test_06_unfreed_executors_in_a_reference_cycle_are_reclaimed_by_gc(request: pytest.FixtureRequest) -> None:
    gc.collect()
    baseline = settle_threads(os_threads())
    for _ in range(50):
        cycle: List[object] = [Executor.for_ram(threads=2)]
        cycle.append(cycle)  # only the cycle collector can free it
    del cycle
    kept = os_threads()
    assert kept > baseline  # the cycles still hold their executors
    gc.collect()
    after = settle_threads(baseline)
    report(request, baseline_threads=baseline, threads_before_collect=kept, threads_after_collect=after)
    assert after == baseline


def test_06_dropping_unfreed_executors_in_a_loop_does_not_leak(request: pytest.FixtureRequest) -> None:
    def cycle() -> None:
        Executor.for_ram(threads=2).drain()  # never freed: the finalizer joins its worker

    check_cycles(request, cycle, THREADED_CYCLES)


def test_15_a_dropped_mesh_releases_the_executor_it_keeps() -> None:
    gc.collect()
    baseline = settle_threads(os_threads())
    mesh = Mesh.bootstrap(Executor.for_ram(threads=2))  # the mesh keeps its executor alive
    assert os_threads() == baseline + 1
    assert mesh.describe().host_domain_count == 1
    del mesh
    gc.collect()
    assert settle_threads(baseline) == baseline


def test_15_dropped_unfreed_meshes_leave_and_remove_the_job_directory(mesh_dir: pathlib.Path) -> None:
    """Two threads of this process meet as a mesh of two; dropping both meshes without free() leaves the run."""
    meshes: Dict[int, object] = {}

    def member(index: int) -> Callable[[], None]:
        def join() -> None:
            executor = Executor.for_ram(threads=1)
            meshes[index] = Mesh.bootstrap(
                executor, directory=mesh_dir, job="dropped", host_domain_index=index, host_domain_count=2, timeout_seconds=30
            )

        return join

    run_threads([member(0), member(1)])
    assert sorted(meshes) == [0, 1] and all(isinstance(m, Mesh) for m in meshes.values()), meshes
    assert os.listdir(mesh_dir) == ["dropped"]
    meshes.clear()
    gc.collect()
    assert os.listdir(mesh_dir) == []


# ---- Concurrency ----


def test_05_eight_threads_create_drain_and_free_at_once() -> None:
    gc.collect()
    baseline = settle_threads(os_threads())
    failures: List[BaseException] = []
    done: Counter[str] = collections.Counter()
    lock = threading.Lock()

    def worker(k: int) -> Callable[[], None]:
        def loop() -> None:
            try:
                for i in range(300):
                    if i % 2:
                        with Executor.for_ram(threads=2) as executor:
                            executor.drain(Mood.SPINNING)
                            executor.drain()
                    else:
                        executor = Executor.for_ram(threads=1 + k % 3, deferred_limit=1 + i)
                        executor.drain(Mood(k % 2))
                        executor.free()
                        executor.free()
                    with lock:
                        done["cycles"] += 1
            except BaseException as e:  # noqa: B902 - any failure is reported below
                with lock:
                    failures.append(e)

        return loop

    run_threads([worker(k) for k in range(8)])
    assert not failures, failures
    assert done["cycles"] == 8 * 300
    assert settle_threads(baseline) == baseline


def test_06_drain_from_many_threads_while_another_frees() -> None:
    """Each drain() either returns or raises FreedHandleError; no thread crashes, none hangs."""
    for round in range(10):
        executor = Executor.for_ram(threads=2)
        outcomes: Counter[str] = collections.Counter()
        lock = threading.Lock()
        started = threading.Barrier(17)

        def drainer(k: int) -> Callable[[], None]:
            return until_freed(started, lock, outcomes, lambda: executor.drain(Mood(k % 2)))

        def freer() -> None:
            started.wait()
            time.sleep(0.002 * round)
            executor.free()

        run_threads([drainer(k) for k in range(16)] + [freer])
        assert set(outcomes) <= {"ok", "freed"}, outcomes
        assert outcomes["freed"] == 16, outcomes


def test_06_free_from_many_threads_at_once() -> None:
    """Concurrent free() calls: one frees, the others find it freed and return; later calls are freed-handle errors."""
    gc.collect()
    baseline = settle_threads(os_threads())
    for _ in range(20):
        executor = Executor.for_ram(threads=2)
        failures: List[BaseException] = []
        gate = threading.Barrier(8)

        def free() -> None:
            gate.wait()
            try:
                executor.free()
            except BaseException as e:  # noqa: B902 - reported below
                failures.append(e)

        run_threads([free] * 8)
        assert not failures, failures
        with pytest.raises(uform.FreedHandleError):
            executor.drain()
    assert settle_threads(baseline) == baseline


def test_15_meshes_bootstrapped_from_many_threads_while_the_executor_is_freed() -> None:
    """While meshes borrow the executor, free() is InUseError; once it succeeds, bootstrap is FreedHandleError.

    A mesh made first guarantees refusals; the freer frees it after twenty, then races the members. Members pause
    between meshes and make a bounded number, so free() cannot be refused forever."""
    executor = Executor.for_ram(threads=2)
    first = Mesh.bootstrap(executor)
    outcomes: Counter[str] = collections.Counter()
    lock = threading.Lock()
    started = threading.Barrier(9)

    def count(outcome: str) -> None:
        with lock:
            outcomes[outcome] += 1

    def member() -> None:
        started.wait()
        for _ in range(2_000):
            try:
                with Mesh.bootstrap(executor) as mesh:
                    assert mesh.describe().host_domain_count == 1
                    executor.drain()
                outcome = "ok"
            except uform.FreedHandleError:
                outcome = "freed"
            except BaseException as e:  # noqa: B902 - counted, then failed below
                outcome = f"{type(e).__name__}: {e}"
            count(outcome)
            if outcome != "ok":
                return
            time.sleep(0.0002)
        count("member done")

    def freer() -> None:
        started.wait()
        refused = 0
        while True:
            try:
                executor.free()
                count("free ok")
                return
            except uform.InUseError:
                count("free in use")
                refused += 1
            except BaseException as e:  # noqa: B902 - counted, then failed below
                count(f"free {type(e).__name__}: {e}")
                return
            if refused == 20:
                first.free()
            time.sleep(0.0002)

    run_threads([member] * 8 + [freer])
    assert set(outcomes) <= {"ok", "freed", "member done", "free ok", "free in use"}, outcomes
    assert outcomes["free ok"] == 1 and outcomes["freed"] + outcomes["member done"] == 8, outcomes
    assert outcomes["ok"] > 0 and outcomes["free in use"] >= 20, outcomes
    with pytest.raises(uform.FreedHandleError):
        Mesh.bootstrap(executor)


def test_11_mesh_of_one_described_from_many_threads_while_freed(mesh_dir: pathlib.Path) -> None:
    with Executor.for_ram(threads=2) as executor:
        for round in range(10):
            mesh = Mesh.bootstrap(executor, directory=mesh_dir, job="solo", host_domain_index=0, host_domain_count=1)
            outcomes: Counter[str] = collections.Counter()
            lock = threading.Lock()
            started = threading.Barrier(17)

            def describe() -> None:
                d = mesh.describe()
                assert (d.host_domain_index, d.host_domain_count) == (0, 1)

            describer = until_freed(started, lock, outcomes, describe)

            def freer() -> None:
                started.wait()
                time.sleep(0.002 * round)
                mesh.free()

            run_threads([describer] * 16 + [freer])
            assert set(outcomes) <= {"ok", "freed"}, outcomes
            assert outcomes["freed"] == 16, outcomes
        # Every mesh left: the executor is no longer borrowed, and a mesh of one never wrote to the directory.
    assert os.listdir(mesh_dir) == []


def test_13_other_threads_keep_working_while_bootstrap_blocks(mesh_dir: pathlib.Path) -> None:
    """One thread waits in Mesh.bootstrap for a peer; the others create, drain and free executors meanwhile, and
    freeing the waiting call's executor is the in-use error, not a hang or a crash."""
    waiting = Executor.for_ram(threads=2)
    entered = threading.Event()
    outcome: Dict[str, object] = {}
    work: Counter[str] = collections.Counter()

    def waiter() -> None:
        entered.set()
        started = time.monotonic()
        try:
            Mesh.bootstrap(waiting, directory=mesh_dir, job="alone", host_domain_count=2, timeout_seconds=2)
        except BaseException as e:  # noqa: B902 - checked below
            outcome["error"] = e
        outcome["seconds"] = time.monotonic() - started

    def busy() -> None:
        entered.wait()
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            with Executor.for_ram(threads=2) as executor:
                executor.drain()
            work["cycles"] += 1

    def free_under_bootstrap() -> None:
        entered.wait()
        time.sleep(0.3)  # well inside the two seconds bootstrap waits
        try:
            waiting.free()
            outcome["free"] = "freed"
        except uform.InUseError:
            outcome["free"] = "in use"

    run_threads([waiter, busy, busy, free_under_bootstrap])
    assert isinstance(outcome["error"], uform.TimeoutError), outcome
    assert outcome["free"] == "in use", outcome
    assert work["cycles"] > 50, work
    waiting.free()
    assert os.listdir(mesh_dir) == []
