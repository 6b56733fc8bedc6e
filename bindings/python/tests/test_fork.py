"""Scenario 43 of SCENARIOS.md, in part: handles made before `fork()` fail fast or work in the child and never hang,
and leaving a `with` block never hides the exception that left it."""

from __future__ import annotations

import multiprocessing
import os
import pathlib
import signal
import time
from typing import List

import pytest

import uform
from uform import Executor, Model

TEXTS = ["A man is eating food.", "A man rides a horse."]


def wait_for(pid: int, seconds: float) -> int:
    """The child's exit code; kills it and fails when it runs past `seconds` (it hangs)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child did not finish in {seconds} s: it hangs")


def test_43_a_two_thread_executor_fails_fast_after_fork_and_the_child_makes_its_own(tiny_model_dir: pathlib.Path) -> None:
    with Executor.for_ram(threads=2) as ex, Model.load_ram(str(tiny_model_dir), executor=ex) as model:
        want = model.encode_text(TEXTS).tolist()
        pid = os.fork()
        if pid == 0:  # the child: every outcome is an exit code, nothing may raise past this point
            code = 10
            try:
                try:
                    model.encode_text(TEXTS)
                    code = 11  # ran on threads that do not exist here
                except uform.UnavailableError as error:
                    code = 0 if "fork" in str(error) else 12
                if code == 0:
                    with Model.load_ram(str(tiny_model_dir)) as own:  # this process's default executor
                        code = 0 if own.encode_text(TEXTS).tolist() == want else 13
                if code == 0:
                    model.free()
                    ex.free()  # forgets the parent's thread, joins nothing
            finally:
                os._exit(code)
        assert wait_for(pid, 60) == 0
        assert model.encode_text(TEXTS).tolist() == want, "the parent's executor is untouched"


def test_43_a_one_thread_executor_works_in_the_child(tiny_model_dir: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as ex, Model.load_ram(str(tiny_model_dir), executor=ex) as model:
        want = model.encode_text(TEXTS).tolist()
        pid = os.fork()
        if pid == 0:
            code = 10
            try:
                code = 0 if model.encode_text(TEXTS).tolist() == want else 11
            finally:
                os._exit(code)
        assert wait_for(pid, 60) == 0


def embed_in_worker(folder: str) -> List[List[float]]:
    with Model.load_ram(folder) as model:
        rows: List[List[float]] = model.encode_text(TEXTS).tolist()
        return rows


def test_43_a_fork_pool_started_after_a_two_thread_executor_embeds(tiny_model_dir: pathlib.Path) -> None:
    with Executor.for_ram(threads=2) as ex, Model.load_ram(str(tiny_model_dir), executor=ex) as model:
        want = model.encode_text(TEXTS).tolist()
        with multiprocessing.get_context("fork").Pool(2) as pool:
            rows = pool.map_async(embed_in_worker, [str(tiny_model_dir)] * 2).get(timeout=60)
        assert rows == [want, want]


def test_43_leaving_a_with_block_by_an_exception_never_hides_it(tiny_model_dir: pathlib.Path) -> None:
    with pytest.raises(KeyError, match="the real error") as raised:
        with Executor.for_ram(threads=1) as ex:
            model = Model.load_ram(str(tiny_model_dir), executor=ex)
            raise KeyError("the real error")
    notes = getattr(raised.value, "__notes__", None)
    if notes is not None:  # Python 3.11 and later
        assert any("could not free the Executor" in note and "borrow" in note for note in notes), notes
    model.free()
    ex.free()  # left unfreed by the block, and free now
    with pytest.raises(uform.InUseError):  # without an exception, the free's own error is raised
        with Executor.for_ram(threads=1) as ex:
            model = Model.load_ram(str(tiny_model_dir), executor=ex)
    model.free()
    ex.free()
