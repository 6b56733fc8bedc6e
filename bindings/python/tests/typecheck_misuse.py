"""Misuses the stubs must reject: `cargo xtask test python` runs `mypy --strict` here and requires an error on
every line marked with the expect-error comment and on no other line (never run)."""

from __future__ import annotations

import uform
from uform import Executor, Mesh, Model, Mood, Trainer

Executor.for_ram(4)  # expect-error: keyword-only
Executor.for_ram(threads="4")  # expect-error: a count is an int
Executor.for_ram(thread=4)  # expect-error: no such keyword
Executor.for_ram(memory_domains=0)  # expect-error: a list of nodes
Executor.for_vram(streams=["0x10"])  # expect-error: addresses are ints
Executor.on_pool()  # expect-error: the pool is required
Mesh.bootstrap(None)  # expect-error: an executor is required
Mesh.bootstrap(Executor.for_ram(), directory=3)  # expect-error: a path
Executor.for_ram().drain("spinning")  # expect-error: a Mood
tier: int = uform.MultimemTier.PEER_READ  # expect-error: a str enum
name: int = uform.capabilities_compiled()  # expect-error: returns str
uform.gpu_devices()[0].memory_bytes = 1  # expect-error: records are frozen
Mood.FAST  # expect-error: no such mood
code: int = uform.UFormError("x").code  # expect-error: code is a str
Trainer.contrastive(Model.load_ram("m", executor=Executor.for_ram()), 1e-4)  # expect-error: keyword-only
Trainer.contrastive(Executor.for_ram())  # expect-error: a Model
Trainer.contrastive(Model.load_ram("m", executor=Executor.for_ram()), learning_rate="1e-4")  # expect-error: a float
loss: str = Trainer.contrastive(Model.load_ram("m", executor=Executor.for_ram())).step(["a"], ["b"]).loss  # expect-error: a float
