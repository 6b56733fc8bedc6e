"""Bad input (issue 9): every public function and method called with every kind of bad value Python allows.

One table, one pytest case per row, so the count shows in the run: wrong types are `TypeError`s naming the
argument; bad values (negative, fractional only as a type error, zero where a count must be positive, too large,
NUL bytes, lone surrogates, unknown enum values and names) are `uform.InvalidArgumentError`s (a `ValueError`)
naming the argument and, for numbers, the value; a path the file system refuses is `uform.IoError` naming the
path; calls on freed handles are `uform.FreedHandleError`s naming the method. Never a crash, never a
`SystemError` or a `PanicException` (which derives from `BaseException` and would escape `pytest.raises`).

Rows are built per parameter from shared lists of bad values, so a parameter added to the IDL needs one line here.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pathlib
import pickle
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Type

import pytest

import uform
from uform import Executor, Mesh, Model, Mood, Trainer

NAN, INF = float("nan"), float("inf")
SURROGATE_PATH = os.fsdecode(b"/tmp/uform-\xff")  # a non-UTF-8 file name as Python's os functions decode it


class World(NamedTuple):
    """What the calls in the table act on."""

    executor: Executor
    freed_executor: Executor
    freed_mesh: Mesh
    directory: pathlib.Path
    a_file: pathlib.Path
    model: Model
    freed_model: Model
    trainer: Trainer
    freed_trainer: Trainer


class Case(NamedTuple):
    id: str
    call: Callable[[World], Any]
    error: Type[BaseException]
    words: Tuple[str, ...] = ()


# ---- Bad values, shared by every parameter of a kind ----

NOT_INTS: List[Tuple[str, object]] = [
    ("str", "2"),
    ("bytes", b"2"),
    ("float", 1.5),
    ("integral-float", 2.0),
    ("nan", NAN),
    ("inf", INF),
    ("-inf", -INF),
    ("True", True),
    ("False", False),
    ("list", [1]),
    ("tuple", (1,)),
    ("dict", {"n": 1}),
    ("object", object()),
    ("Decimal", Decimal(2)),
    ("Fraction", Fraction(4, 2)),
    ("complex", 1 + 0j),
]

NEGATIVE_INTS: List[int] = [-1, -(2**31), -(2**63), -(2**1000)]


def too_large(bits: int) -> List[int]:
    return [2**bits, 2**64, 2**1000] if bits == 32 else [2**64, 2**65, 2**1000]


NOT_STRS: List[Tuple[str, object]] = [
    ("int", 7),
    ("float", 1.5),
    ("nan", NAN),
    ("True", True),
    ("bytes", b"portable"),
    ("bytearray", bytearray(b"portable")),
    ("list", ["portable"]),
    ("tuple", ("portable",)),
    ("path", pathlib.PurePosixPath("portable")),
    ("object", object()),
]

# Strings no class, job or path may be: empty, NUL inside, a lone surrogate (UTF-8 cannot carry it).
BAD_NAMES: List[Tuple[str, str]] = [("empty", ""), ("nul", "a\x00b"), ("surrogate", "\udcff"), ("trailing-nul", "portable\x00")]

BAD_CLASS_SPELLINGS: List[Tuple[str, str]] = [
    ("upper", "PORTABLE"),
    ("leading-space", " portable"),
    ("underscore", "intel_haswell"),
    ("unknown", "intel-486"),
    ("huge", "x" * 10_000),
]


class BytesPath:
    def __fspath__(self) -> bytes:
        return b"/tmp"


class IntPath:
    def __fspath__(self) -> int:
        return 7


NOT_PATHS: List[Tuple[str, object]] = [
    ("int", 42),
    ("float", 1.5),
    ("True", True),
    ("bytes", b"/tmp"),
    ("non-utf8-bytes", b"/tmp/\xff"),
    ("bytearray", bytearray(b"/tmp")),
    ("list", ["/tmp"]),
    ("object", object()),
    ("pathlike-of-bytes", BytesPath()),
    ("pathlike-of-int", IntPath()),
]

NOT_LISTS: List[Tuple[str, Callable[[], object]]] = [
    ("str", lambda: "0"),
    ("bytes", lambda: b"\x00"),
    ("bytearray", lambda: bytearray(b"\x00")),
    ("int", lambda: 0),
    ("float", lambda: 0.5),
    ("True", lambda: True),
    ("generator", lambda: (i for i in [0])),
    ("iterator", lambda: iter([0])),
    ("set", lambda: {0}),
    ("dict", lambda: {0: 0}),
    ("object", lambda: object()),
]

NOT_FLOATS: List[Tuple[str, object]] = [
    ("str", "1e-4"),
    ("bytes", b"1"),
    ("True", True),
    ("False", False),
    ("list", [1.0]),
    ("tuple", (1.0,)),
    ("dict", {"x": 1.0}),
    ("object", object()),
    ("complex", 1 + 0j),
]

# Floats no rate, decay or norm may be: not a number, not finite, negative (an int that is converted first).
BAD_FLOATS: List[Tuple[str, float]] = [
    ("nan", NAN),
    ("-nan", -NAN),
    ("inf", INF),
    ("-inf", -INF),
    ("-1", -1.0),
    ("-tiny", -5e-324),
    ("-int", -(2**1000)),
    ("huge-int", 2**1024),  # no double holds it
    ("-huge-int", -(2**1024)),
]

NOT_INT_ELEMENTS: List[Tuple[str, object]] = [
    ("None", None),
    ("str", "0"),
    ("float", 0.5),
    ("nan", NAN),
    ("True", True),
    ("list", [0]),
]


# ---- Rows ----


def short(value: int) -> str:
    text = str(value)
    return text if len(text) <= 12 else text[:12] + "..."


def int_rows(where: str, name: str, call: Callable[[World, object], Any], bits: int, zero_is_bad: bool) -> Iterator[Case]:
    """Every bad value of the integer parameter `name` of `where`, passed to it by `call(world, value)`."""
    for label, value in NOT_INTS:
        yield Case(f"{where}-{name}={label}", lambda w, v=value: call(w, v), TypeError, (f"`{name}`",))
    for value in NEGATIVE_INTS + too_large(bits) + ([0] if zero_is_bad else []):
        what = "must not be negative" if value < 0 else "must be at least 1" if value == 0 else "must be at most"
        words = (f"`{name}`", what, str(value)[:24])
        yield Case(f"{where}-{name}={short(value)}", lambda w, v=value: call(w, v), uform.InvalidArgumentError, words)


def str_rows(where: str, name: str, call: Callable[[World, object], Any], spellings: Sequence[Tuple[str, str]]) -> Iterator[Case]:
    for label, value in NOT_STRS:
        yield Case(f"{where}-{name}={label}", lambda w, v=value: call(w, v), TypeError, (f"`{name}`",))
    for label, text in list(BAD_NAMES) + list(spellings):
        yield Case(f"{where}-{name}={label}-str", lambda w, v=text: call(w, v), uform.InvalidArgumentError, (f"`{name}`",))


def float_rows(where: str, name: str, call: Callable[[World, object], Any], extra: Sequence[Tuple[str, float]] = ()) -> Iterator[Case]:
    """Every bad value of the float parameter `name`: wrong types are TypeErrors, bad numbers the core refuses."""
    for label, value in NOT_FLOATS:
        yield Case(f"{where}-{name}={label}", lambda w, v=value: call(w, v), TypeError, (f"`{name}`",))
    for label, number in list(BAD_FLOATS) + list(extra):
        yield Case(f"{where}-{name}={label}", lambda w, v=number: call(w, v), uform.InvalidArgumentError, (f"`{name}`",))
    yield Case(f"{where}-{name}=float-raises", lambda w: call(w, RaisingFloat()), LookupError, ("from __float__",))


def str_list_rows(where: str, name: str, call: Callable[[World, object], Any]) -> Iterator[Case]:
    """A list of texts: not a list, a non-str element, a text UTF-8 or C cannot carry (the message names the element)."""
    for label, make in NOT_LISTS:
        yield Case(f"{where}-{name}={label}", lambda w, m=make: call(w, m()), TypeError, (f"`{name}`",))
    for label, element in [("None", None), ("int", 7), ("bytes", b"text"), ("nan", NAN), ("list", ["text"])]:
        yield Case(f"{where}-{name}=[ok,{label}]", lambda w, e=element: call(w, ["ok", e]), TypeError, (f"`{name}[1]`",))
    for label, text in [("nul", "a\x00b"), ("trailing-nul", "text\x00"), ("surrogate", "\udcff")]:
        yield Case(f"{where}-{name}=[ok,{label}]", lambda w, t=text: call(w, ["ok", t]), uform.InvalidArgumentError, (f"`{name}[1]`",))


def list_rows(where: str, name: str, call: Callable[[World, object], Any], bits: int) -> Iterator[Case]:
    for label, make in NOT_LISTS:
        yield Case(f"{where}-{name}={label}", lambda w, m=make: call(w, m()), TypeError, (f"`{name}`",))
    for label, element in NOT_INT_ELEMENTS:
        yield Case(f"{where}-{name}=[{label}]", lambda w, e=element: call(w, [e]), TypeError, (f"`{name}[0]`",))
    for value in NEGATIVE_INTS + too_large(bits):
        words = (f"`{name}[1]`", str(value)[:24])
        yield Case(f"{where}-{name}=[0,{short(value)}]", lambda w, v=value: call(w, [0, v]), uform.InvalidArgumentError, words)


def for_ram(**kwargs: object) -> Any:
    return Executor.for_ram(**kwargs)  # type: ignore[arg-type]


def for_vram(**kwargs: object) -> Any:
    return Executor.for_vram(**kwargs)  # type: ignore[arg-type]


def on_pool(pool: object = 0x1000, **kwargs: object) -> Any:
    return Executor.on_pool(pool, **kwargs)  # type: ignore[arg-type]


def bootstrap(w: World, **kwargs: object) -> Any:
    return Mesh.bootstrap(w.executor, **kwargs)  # type: ignore[arg-type]


def with_peers(w: World, **kwargs: object) -> Any:
    """Bootstrap with a peer that never comes, so `directory`, `job` and `timeout_seconds` are all read."""
    options: dict[str, object] = {"host_domain_count": 2, "directory": w.directory, "job": "bad-input", "timeout_seconds": 1}
    options.update(kwargs)
    return Mesh.bootstrap(w.executor, **options)  # type: ignore[arg-type]


def contrastive(w: World, **kwargs: object) -> Any:
    return Trainer.contrastive(w.model, **kwargs)  # type: ignore[arg-type]


def trainer_rows() -> Iterator[Case]:
    # Trainer.contrastive: the model, then every field of the config (f64 fields are new: NaN, inf, negatives).
    yield Case("contrastive-model=None", lambda w: Trainer.contrastive(None), TypeError)  # type: ignore[arg-type]
    yield Case("contrastive-model=str", lambda w: Trainer.contrastive("model"), TypeError)  # type: ignore[arg-type]
    yield Case("contrastive-model=Executor", lambda w: Trainer.contrastive(w.executor), TypeError)  # type: ignore[arg-type]
    yield Case("contrastive-model=Trainer", lambda w: Trainer.contrastive(w.trainer), TypeError)  # type: ignore[arg-type]
    yield Case("contrastive-model=class", lambda w: Trainer.contrastive(Model), TypeError)  # type: ignore[arg-type]
    yield Case("contrastive-model=freed", lambda w: Trainer.contrastive(w.freed_model), uform.FreedHandleError, ("Trainer.contrastive", "freed"))
    for name in ("learning_rate", "weight_decay", "max_grad_norm"):
        yield from float_rows("contrastive", name, lambda w, v, n=name: contrastive(w, **{n: v}))
    yield from float_rows("contrastive", "scale", lambda w, v: contrastive(w, scale=v), [("0", 0.0), ("-0", -0.0)])
    yield from float_rows("contrastive", "dropout", lambda w, v: contrastive(w, dropout=v), [("1", 1.0), ("1.5", 1.5), ("int-2", 2)])
    yield from int_rows("contrastive", "warmup_steps", lambda w, v: contrastive(w, warmup_steps=v), 32, False)
    yield from int_rows("contrastive", "total_steps", lambda w, v: contrastive(w, total_steps=v), 32, False)
    yield from int_rows("contrastive", "max_tokens", lambda w, v: contrastive(w, max_tokens=v), 32, False)
    yield from int_rows("contrastive", "seed", lambda w, v: contrastive(w, seed=v), 64, False)
    yield Case("contrastive-max_tokens=0", lambda w: contrastive(w, max_tokens=0), uform.InvalidArgumentError, ("`max_tokens`",))
    yield Case("contrastive-max_tokens=513", lambda w: contrastive(w, max_tokens=513), uform.InvalidArgumentError, ("`max_tokens`", "513"))
    yield Case("contrastive-unknown-keyword", lambda w: contrastive(w, lr=1e-4), TypeError)
    yield Case("contrastive-config-positional", lambda w: Trainer.contrastive(w.model, 1e-4), TypeError)  # type: ignore[misc]
    yield Case("contrastive-missing-model", lambda w: Trainer.contrastive(), TypeError)  # type: ignore[call-arg]
    yield Case("Trainer()", lambda w: Trainer(), TypeError)
    yield Case("subclass-Trainer", lambda w: type("MyTrainer", (Trainer,), {}), TypeError)
    yield Case("pickle-trainer", lambda w: pickle.dumps(w.trainer), TypeError)

    # Trainer.step: two lists of texts of one length, at least one pair.
    yield from str_list_rows("step", "anchors", lambda w, v: w.trainer.step(v, ["p", "q"]))  # type: ignore[arg-type]
    yield from str_list_rows("step", "positives", lambda w, v: w.trainer.step(["a", "b"], v))  # type: ignore[arg-type]
    yield Case("step-anchors=None", lambda w: w.trainer.step(None, ["p"]), TypeError, ("`anchors`",))  # type: ignore[arg-type]
    yield Case("step-positives=None", lambda w: w.trainer.step(["a"], None), TypeError, ("`positives`",))  # type: ignore[arg-type]
    yield Case("step-lengths-differ", lambda w: w.trainer.step(["a", "b"], ["p"]), uform.InvalidArgumentError, ("`positives`",))
    yield Case("step-positives-longer", lambda w: w.trainer.step(["a"], ["p", "q"]), uform.InvalidArgumentError, ("`positives`",))
    yield Case("step-empty", lambda w: w.trainer.step([], []), uform.InvalidArgumentError, ("`anchors`",))
    yield Case("step-missing-positives", lambda w: w.trainer.step(["a"]), TypeError)  # type: ignore[call-arg]
    yield Case("step-unknown-keyword", lambda w: w.trainer.step(["a"], ["p"], batch=1), TypeError)  # type: ignore[call-arg]

    # Trainer.save: a folder that does not exist yet, whose parent does.
    for label, value in NOT_PATHS:
        yield Case(f"save-directory={label}", lambda w, v=value: w.trainer.save(v), TypeError, ("`directory`",))
    yield Case("save-directory=None", lambda w: w.trainer.save(None), TypeError, ("`directory`",))  # type: ignore[arg-type]
    yield Case("save-directory=surrogate-path", lambda w: w.trainer.save(SURROGATE_PATH), uform.InvalidArgumentError, ("`directory`", "\\udcff"))
    yield Case("save-directory=existing", lambda w: w.trainer.save(w.directory), uform.InvalidArgumentError, ("`directory`", "already exists"))
    yield Case("save-directory=a-file", lambda w: w.trainer.save(w.a_file), uform.InvalidArgumentError, ("`directory`", "already exists"))
    yield Case("save-directory=missing-parent", lambda w: w.trainer.save(w.directory / "missing" / "trained"), uform.IoError, ("missing",))
    yield Case("save-directory=below-a-file", lambda w: w.trainer.save(w.a_file / "trained"), uform.IoError, ("a-file",))
    yield Case("save-directory=pathlike-raises", lambda w: w.trainer.save(RaisingPath()), LookupError, ("from __fspath__",))
    yield Case("save-missing-directory", lambda w: w.trainer.save(), TypeError)  # type: ignore[call-arg]

    # A freed trainer refuses every call but free().
    yield Case("freed-step", lambda w: w.freed_trainer.step(["a"], ["p"]), uform.FreedHandleError, ("`step`", "freed"))
    yield Case("freed-save", lambda w: w.freed_trainer.save(w.directory / "never"), uform.FreedHandleError, ("`save`", "freed"))
    yield Case("freed-with-trainer", lambda w: w.freed_trainer.__enter__(), uform.FreedHandleError, ("`__enter__`", "freed"))
    # Freeing the model under a live trainer is in use.
    yield Case("model-free-under-trainer", lambda w: w.model.free(), uform.InUseError, ("1 trainer borrows it",))


def rows() -> Iterator[Case]:
    yield from trainer_rows()
    # Executor.for_ram
    yield from int_rows("for_ram", "threads", lambda w, v: for_ram(threads=v), 32, True)
    yield from int_rows("for_ram", "deferred_limit", lambda w, v: for_ram(deferred_limit=v), 32, True)
    yield from str_rows("for_ram", "cpu_class", lambda w, v: for_ram(cpu_class=v), BAD_CLASS_SPELLINGS)
    yield from list_rows("for_ram", "memory_domains", lambda w, v: for_ram(memory_domains=v), 32)
    yield Case("for_ram-memory_domains=[]", lambda w: for_ram(memory_domains=[]), uform.InvalidArgumentError, ("`memory_domains`",))
    yield Case("for_ram-memory_domains=[0,0]", lambda w: for_ram(memory_domains=[0, 0]), uform.InvalidArgumentError, ("`memory_domains`", "0"))
    yield Case("for_ram-memory_domains=[4096]", lambda w: for_ram(memory_domains=[4096]), uform.InvalidArgumentError, ("`memory_domains`", "4096"))

    # Executor.for_vram: shape errors come before the check for a GPU, so they hold with and without one.
    yield from int_rows("for_vram", "scratch_limit", lambda w, v: for_vram(scratch_limit=v), 64, True)
    yield from int_rows("for_vram", "deferred_limit", lambda w, v: for_vram(deferred_limit=v), 32, True)
    yield from str_rows("for_vram", "gpu_class", lambda w, v: for_vram(gpu_class=v), [("unknown", "nvidia-kepler-9000"), ("cpu-class", "intel-haswell")])
    yield from str_rows("for_vram", "cpu_class", lambda w, v: for_vram(cpu_class=v), BAD_CLASS_SPELLINGS[:2])
    yield from list_rows("for_vram", "devices", lambda w, v: for_vram(devices=v), 32)
    yield from list_rows("for_vram", "memory_domains", lambda w, v: for_vram(memory_domains=v), 32)
    yield from list_rows("for_vram", "streams", lambda w, v: for_vram(devices=[0, 1], streams=v), 64)
    yield Case("for_vram-devices=[]", lambda w: for_vram(devices=[]), uform.InvalidArgumentError, ("`devices`",))
    yield Case("for_vram-devices=[0,0]", lambda w: for_vram(devices=[0, 0]), uform.InvalidArgumentError, ("`devices`", "0"))
    yield Case("for_vram-streams-count", lambda w: for_vram(devices=[0], streams=[1, 2]), uform.InvalidArgumentError, ("`streams`",))

    # Executor.on_pool: `pool` is required (None is no int), the config is validated before `unsupported`.
    yield Case("on_pool-pool=None", lambda w: on_pool(None), TypeError, ("`pool`",))
    yield from int_rows("on_pool", "pool", lambda w, v: on_pool(v), 64, False)
    yield from int_rows("on_pool", "deferred_limit", lambda w, v: on_pool(deferred_limit=v), 32, True)
    yield from str_rows("on_pool", "cpu_class", lambda w, v: on_pool(cpu_class=v), BAD_CLASS_SPELLINGS[:2])
    yield from list_rows("on_pool", "memory_domains", lambda w, v: on_pool(memory_domains=v), 32)

    # Executor.drain: `mood` is a Mood; numbers outside it are unknown values.
    for label, value in NOT_INTS:
        yield Case(f"drain-mood={label}", lambda w, v=value: w.executor.drain(v), TypeError, ("`mood`",))
    for value in [2, -1, 99, 2**31, -(2**31) - 1, 2**64, 2**1000, -(2**1000)]:
        yield Case(f"drain-mood={short(value)}", lambda w, v=value: w.executor.drain(v), uform.InvalidArgumentError, ("`mood`",))
    yield Case("drain-mood=name", lambda w: w.executor.drain("PARKED"), TypeError, ("`mood`",))
    # A member of another IntEnum is not taken for its number.
    yield Case("drain-mood=GpuVendor.NVIDIA", lambda w: w.executor.drain(uform.GpuVendor.NVIDIA), TypeError, ("`mood`", "Mood"))  # type: ignore[arg-type]

    # Mesh.bootstrap: the executor is required and must be an Executor.
    yield Case("bootstrap-executor=None", lambda w: Mesh.bootstrap(None), TypeError)  # type: ignore[arg-type]
    yield Case("bootstrap-executor=None-keyword", lambda w: Mesh.bootstrap(executor=None), TypeError)  # type: ignore[arg-type]
    yield Case("bootstrap-executor=str", lambda w: Mesh.bootstrap("executor"), TypeError)  # type: ignore[arg-type]
    yield Case("bootstrap-executor=Mesh", lambda w: Mesh.bootstrap(w.freed_mesh), TypeError)  # type: ignore[arg-type]
    yield Case("bootstrap-executor=class", lambda w: Mesh.bootstrap(Executor), TypeError)  # type: ignore[arg-type]
    yield from int_rows("bootstrap", "host_domain_index", lambda w, v: bootstrap(w, host_domain_index=v), 32, False)
    yield from int_rows("bootstrap", "host_domain_count", lambda w, v: bootstrap(w, host_domain_count=v), 32, True)
    yield from int_rows("bootstrap", "gpus_per_multimem_domain", lambda w, v: bootstrap(w, gpus_per_multimem_domain=v), 32, True)
    yield from int_rows("bootstrap", "timeout_seconds", lambda w, v: bootstrap(w, timeout_seconds=v), 32, True)
    yield Case("host_domain_index=count", lambda w: bootstrap(w, host_domain_index=2, host_domain_count=2, directory=w.directory, job="j"), uform.InvalidArgumentError, ("`host_domain_index`", "2"))
    yield Case("host_domain_index-without-count", lambda w: bootstrap(w, host_domain_index=1), uform.InvalidArgumentError, ("`host_domain_index`", "1"))
    yield Case("peers-without-directory", lambda w: bootstrap(w, host_domain_count=2, job="j"), uform.InvalidArgumentError, ("`directory`",))
    yield Case("peers-without-job", lambda w: bootstrap(w, host_domain_count=2, directory=w.directory), uform.InvalidArgumentError, ("`job`",))
    yield from str_rows("bootstrap", "job", lambda w, v: with_peers(w, job=v), [("dot", "."), ("dotdot", ".."), ("slash", "a/b"), ("backslash", "a\\b")])
    yield Case("job=too-long", lambda w: with_peers(w, job="j" * 300), uform.IoError, ("j" * 40,))
    for label, value in NOT_PATHS:
        yield Case(f"directory={label}", lambda w, v=value: with_peers(w, directory=v), TypeError, ("`directory`",))
    for label, text in BAD_NAMES:
        yield Case(f"directory={label}-str", lambda w, v=text: with_peers(w, directory="/tmp/" + v if v else v), uform.InvalidArgumentError, ("`directory`",))
    yield Case("directory=surrogate-path", lambda w: with_peers(w, directory=SURROGATE_PATH), uform.InvalidArgumentError, ("`directory`", "\\udcff"))
    yield Case("directory=surrogate-pathlib", lambda w: with_peers(w, directory=pathlib.Path(SURROGATE_PATH)), uform.InvalidArgumentError, ("`directory`",))
    yield Case("directory=missing", lambda w: with_peers(w, directory=w.directory / "missing"), uform.IoError, ("missing",))
    yield Case("directory=a-file", lambda w: with_peers(w, directory=w.a_file), uform.IoError, ("a-file",))
    yield Case("directory=pathlike-raises", lambda w: with_peers(w, directory=RaisingPath()), LookupError, ("from __fspath__",))

    # Unknown keyword arguments, positional arguments where keyword-only, missing and extra arguments.
    calls: List[Tuple[str, Callable[[World], Any]]] = [
        ("for_ram-unknown-keyword", lambda w: Executor.for_ram(thread=2)),  # type: ignore[call-arg]
        ("for_vram-unknown-keyword", lambda w: Executor.for_vram(device=[0])),  # type: ignore[call-arg]
        ("on_pool-unknown-keyword", lambda w: Executor.on_pool(0, threads=1)),  # type: ignore[call-arg]
        ("bootstrap-unknown-keyword", lambda w: Mesh.bootstrap(w.executor, index=0)),  # type: ignore[call-arg]
        ("drain-unknown-keyword", lambda w: w.executor.drain(moods=Mood.PARKED)),  # type: ignore[call-arg]
        ("free-unknown-keyword", lambda w: w.freed_executor.free(now=True)),  # type: ignore[call-arg]
        ("describe-unknown-keyword", lambda w: w.freed_mesh.describe(verbose=True)),  # type: ignore[call-arg]
        ("mesh-free-unknown-keyword", lambda w: w.freed_mesh.free(now=True)),  # type: ignore[call-arg]
        ("gpu_devices-keyword", lambda w: uform.gpu_devices(vendor=1)),  # type: ignore[call-arg]
        ("capabilities_compiled-keyword", lambda w: uform.capabilities_compiled(x=1)),  # type: ignore[call-arg]
        ("capabilities_available-keyword", lambda w: uform.capabilities_available(x=1)),  # type: ignore[call-arg]
        ("mesh_options_from_environment-keyword", lambda w: uform.mesh_options_from_environment(environ={})),  # type: ignore[call-arg]
        ("for_ram-positional", lambda w: Executor.for_ram(2)),  # type: ignore[misc]
        ("for_vram-positional", lambda w: Executor.for_vram([0])),  # type: ignore[misc]
        ("on_pool-positional-config", lambda w: Executor.on_pool(0, [0])),  # type: ignore[misc]
        ("on_pool-missing-pool", lambda w: Executor.on_pool()),  # type: ignore[call-arg]
        ("bootstrap-positional-option", lambda w: Mesh.bootstrap(w.executor, 0)),  # type: ignore[misc]
        ("bootstrap-missing-executor", lambda w: Mesh.bootstrap()),  # type: ignore[call-arg]
        ("drain-extra-positional", lambda w: w.executor.drain(Mood.PARKED, Mood.PARKED)),  # type: ignore[call-arg]
        ("drain-twice-named", lambda w: w.executor.drain(Mood.PARKED, mood=Mood.PARKED)),  # type: ignore[misc]
        ("free-positional", lambda w: w.freed_executor.free(True)),  # type: ignore[call-arg]
        ("describe-positional", lambda w: w.freed_mesh.describe(0)),  # type: ignore[call-arg]
        ("gpu_devices-positional", lambda w: uform.gpu_devices(0)),  # type: ignore[call-arg]
        ("capabilities_compiled-positional", lambda w: uform.capabilities_compiled("x")),  # type: ignore[call-arg]
        ("capabilities_available-positional", lambda w: uform.capabilities_available("x")),  # type: ignore[call-arg]
        ("mesh_options_from_environment-positional", lambda w: uform.mesh_options_from_environment({})),  # type: ignore[call-arg]
        ("drain-unbound", lambda w: Executor.drain(None)),  # type: ignore[arg-type]
        ("describe-unbound-wrong-self", lambda w: Mesh.describe(w.executor)),  # type: ignore[arg-type]
        ("Executor()", lambda w: Executor()),
        ("Executor(threads=2)", lambda w: Executor(threads=2)),  # type: ignore[call-arg]
        ("Mesh()", lambda w: Mesh()),
        ("subclass-Executor", lambda w: type("MyExecutor", (Executor,), {})),
        ("subclass-Mesh", lambda w: type("MyMesh", (Mesh,), {})),
        ("pickle-executor", lambda w: pickle.dumps(w.executor)),
        ("copy-executor", lambda w: copy.copy(w.executor)),
        ("deepcopy-mesh", lambda w: copy.deepcopy(w.freed_mesh)),
        ("spread-non-str-keys", lambda w: Executor.for_ram(**{1: 2})),  # type: ignore[arg-type]
        ("record-missing-field", lambda w: uform.GpuDevice(vendor=uform.GpuVendor.AMD)),  # type: ignore[call-arg]
    ]
    for name, call in calls:
        yield Case(name, call, TypeError)

    # Unknown enum values and names (Python's enum lookups), and records are immutable.
    yield Case("Mood(2)", lambda w: Mood(2), ValueError, ("2",))
    yield Case("Mood('PARKED')", lambda w: Mood("PARKED"), ValueError)
    yield Case("GpuVendor(7)", lambda w: uform.GpuVendor(7), ValueError, ("7",))
    yield Case("MultimemTier('bogus')", lambda w: uform.MultimemTier("bogus"), ValueError, ("bogus",))
    yield Case("MultimemTier('PEER_READ')", lambda w: uform.MultimemTier("PEER_READ"), ValueError)
    yield Case("Mood.UNKNOWN", lambda w: Mood["UNKNOWN"], KeyError)
    yield Case("record-assign", lambda w: setattr(uform.MeshDescription(0, 1, (), 0, 0, uform.MultimemTier.PEER_READ), "host_domain_index", 1), dataclasses.FrozenInstanceError)

    # Freed handles: every method but free() (and leaving `with`, which frees) is a freed-handle error.
    freed: List[Tuple[str, Callable[[World], Any], str]] = [
        ("drain", lambda w: w.freed_executor.drain(), "`drain`"),
        ("drain(PARKED)", lambda w: w.freed_executor.drain(Mood.PARKED), "`drain`"),
        ("drain(SPINNING)", lambda w: w.freed_executor.drain(mood=Mood.SPINNING), "`drain`"),
        ("bootstrap", lambda w: Mesh.bootstrap(w.freed_executor), "Mesh.bootstrap"),
        ("bootstrap-with-peers", lambda w: Mesh.bootstrap(w.freed_executor, host_domain_count=2, directory=w.directory, job="j", timeout_seconds=1), "Mesh.bootstrap"),
        ("with-executor", lambda w: w.freed_executor.__enter__(), "`__enter__`"),
        ("describe", lambda w: w.freed_mesh.describe(), "`describe`"),
        ("with-mesh", lambda w: w.freed_mesh.__enter__(), "`__enter__`"),
    ]
    for name, call, method in freed:
        yield Case(f"freed-{name}", call, uform.FreedHandleError, (method, "freed"))


class RaisingFloat:
    """A number whose `__float__` fails: its own error propagates."""

    def __float__(self) -> float:
        raise LookupError("from __float__")


class RaisingPath:
    """A path-like whose `__fspath__` fails: its own error propagates, not a TypeError that hides it."""

    def __fspath__(self) -> str:
        raise LookupError("from __fspath__")


CASES = list(rows())


def test_the_table_has_no_duplicate_ids() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, test_model_dir: pathlib.Path) -> Iterator[World]:
    directory = tmp_path_factory.mktemp("bad-input-mesh")
    a_file = tmp_path_factory.mktemp("bad-input-file") / "a-file"
    a_file.write_text("not a directory")
    executor = Executor.for_ram(threads=2)
    freed_executor = Executor.for_ram(threads=1)
    freed_mesh = Mesh.bootstrap(freed_executor)
    freed_mesh.free()
    freed_executor.free()
    model = Model.load_ram(test_model_dir, executor=executor)
    freed_model = Model.load_ram(test_model_dir, executor=executor)
    freed_model.free()
    trainer = Trainer.contrastive(model)
    freed_trainer = Trainer.contrastive(model)
    freed_trainer.free()
    yield World(executor, freed_executor, freed_mesh, directory, a_file, model, freed_model, trainer, freed_trainer)
    executor.drain()  # still usable after every bad call
    assert model.encode_text(["still usable"]).shape == (1, 384)
    trainer.free()
    model.free()
    executor.free()
    assert os.listdir(directory) == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_raises_the_documented_error(world: World, case: Case) -> None:
    with pytest.raises(case.error) as caught:
        case.call(world)
    error = caught.value
    assert not isinstance(error, SystemError)
    if issubclass(case.error, uform.UFormError):
        assert type(error) is case.error, (type(error), error)
        assert error.code == case.error.code
    elif case.error is TypeError:
        assert not isinstance(error, uform.UFormError), error
    message = str(error)
    assert message, "the error has no message"
    for word in case.words:
        assert word in message, (word, message)
    # A failed bootstrap leaves nothing behind in the mesh directory.
    assert os.listdir(world.directory) == []


def test_a_config_field_is_named_as_the_keyword_argument_python_passed() -> None:
    # Core names the field `config.cpu_class`; Python passes it as the keyword argument `cpu_class`.
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Executor.for_ram(cpu_class="no-such-cpu")
    message = str(caught.value)
    assert message.startswith('`cpu_class` names an unknown CPU class "no-such-cpu"'), message
    assert "cpuClass" not in message and "config" not in message, message


# ---- What is not an error: None means absent, and free() on a freed handle does nothing ----


def test_none_means_absent_for_every_optional_argument(world: World) -> None:
    Executor.for_ram(memory_domains=None, cpu_class=None, threads=None, deferred_limit=None).free()
    Executor.for_ram(threads=1, deferred_limit=None).free()
    with pytest.raises(uform.UnsupportedError):
        Executor.on_pool(0x1000, memory_domains=None, cpu_class=None, deferred_limit=None)
    world.executor.drain(None)  # type: ignore[arg-type]
    world.executor.drain(mood=None)  # type: ignore[arg-type]
    mesh = Mesh.bootstrap(
        world.executor,
        host_domain_index=None,
        host_domain_count=None,
        gpus_per_multimem_domain=None,
        directory=None,
        job=None,
        timeout_seconds=None,
    )
    assert mesh.describe().host_domain_count == 1
    mesh.free()


def test_free_and_leaving_with_on_freed_handles_do_nothing(world: World) -> None:
    world.freed_executor.free()
    world.freed_mesh.free()
    assert world.freed_executor.__exit__(None, None, None) is False
    assert world.freed_mesh.__exit__(None, None, None) is False
    assert world.freed_executor.compiled is world.freed_executor
    assert "Executor" in repr(world.freed_executor)


def test_what_float_converts_is_a_float(world: World) -> None:
    """Ints, Decimals, Fractions and numpy's scalars convert as `float()` converts them; none is refused by type."""
    import numpy as np

    for value in (1, 10**300, Decimal("1e-4"), Fraction(1, 10_000), np.float32(1e-4), np.float64(0.5), np.int64(2)):
        Trainer.contrastive(world.model, learning_rate=value, max_grad_norm=value).free()  # type: ignore[arg-type]
    Trainer.contrastive(world.model, dropout=np.float16(0.25), scale=Decimal(20)).free()  # type: ignore[arg-type]


def test_largest_values_in_range_are_accepted(world: World) -> None:
    """The edges of the ranges the table's too-large values lie just outside: not errors of reading."""
    with pytest.raises(uform.UnsupportedError) as caught:
        Executor.on_pool(2**64 - 1)
    assert "0xffffffffffffffff" in str(caught.value)
    with pytest.raises(uform.InvalidArgumentError) as index:  # read as a u32, then checked against the count
        Mesh.bootstrap(world.executor, host_domain_index=2**32 - 1)
    assert "4294967295" in str(index.value)
