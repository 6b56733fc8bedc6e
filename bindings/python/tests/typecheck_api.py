"""Uses every API of the `uform` package, checked with `mypy --strict` against the installed stubs (never run)."""

from __future__ import annotations

import os
import pathlib
from typing import List, Optional, Tuple

import numpy as np
import numpy.typing as npt

import uform
from uform import Executor, Mesh, Mood


def discovery() -> None:
    compiled: str = uform.capabilities_compiled()
    available: str = uform.capabilities_available()
    devices: List[uform.GpuDevice] = uform.gpu_devices()
    for d in devices:
        vendor: uform.GpuVendor = d.vendor
        ordinal: int = d.vendor_ordinal
        gpu_class: Optional[str] = d.gpu_class
        units: int = d.compute_units
        memory: int = d.memory_bytes
        name: str = d.name
        print(compiled, available, vendor, ordinal, gpu_class, units, memory, name)
    made = uform.GpuDevice(vendor=uform.GpuVendor.AMD, vendor_ordinal=0, gpu_class=None, compute_units=1, memory_bytes=1, name="x")
    assert made == made


def executors(directory: pathlib.Path) -> None:
    ram: Executor = Executor.for_ram()
    ram = Executor.for_ram(memory_domains=[0], cpu_class="intel-haswell", threads=4, deferred_limit=64, scratch_limit=1 << 26)
    ram.drain()
    ram.drain(Mood.SPINNING)
    ram.drain(mood=Mood.PARKED)
    same: Executor = ram.compiled
    same.free()
    config: uform.ExecutorForRamConfig = {"threads": 2}
    with Executor.for_ram(**config) as scoped:
        scoped.drain()
    vram: Executor = Executor.for_vram(
        devices=(0, 1),
        gpu_class="nvidia-hopper",
        memory_domains=[0],
        cpu_class=None,
        streams=[0x7F00_0000],
        scratch_limit=1 << 30,
        deferred_limit=8,
    )
    vram.free()
    vram_config: uform.ExecutorForVramConfig = {"devices": [0]}
    pool_config: uform.ExecutorOnPoolConfig = {"deferred_limit": 8}
    Executor.for_vram(**vram_config).free()
    Executor.on_pool(0x1000, **pool_config).free()
    Executor.on_pool(0x1000, memory_domains=None, cpu_class="amd-genoa", deferred_limit=None).free()


def meshes(directory: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as executor:
        mesh: Mesh = Mesh.bootstrap(executor)
        description: uform.MeshDescription = mesh.describe()
        index: int = description.host_domain_index
        count: int = description.host_domain_count
        gpus: tuple[uform.GpuDevice, ...] = description.gpus
        per_domain: int = description.gpus_per_multimem_domain
        domains: int = description.multimem_domain_count
        tier: uform.MultimemTier = description.multimem_tier
        print(index, count, gpus, per_domain, domains, tier is uform.MultimemTier.SWITCH_REDUCED, tier.value)
        assert mesh.compiled is mesh
        mesh.free()
        with Mesh.bootstrap(
            executor,
            host_domain_index=0,
            host_domain_count=2,
            gpus_per_multimem_domain=None,
            directory=directory,
            job="typed",
            timeout_seconds=1,
        ) as peers:
            peers.describe()
        Mesh.bootstrap(executor, directory=os.fspath(directory), job="typed").free()
        options: Optional[uform.MeshOptions] = uform.mesh_options_from_environment()
        if options is not None:
            options["directory"] = directory
            Mesh.bootstrap(executor, **options).free()


def errors() -> None:
    try:
        Executor.for_ram(threads=0)
    except uform.InvalidArgumentError as e:
        code: str = e.code
        value_error: ValueError = e
        print(code, value_error)
    except uform.UnsupportedError as e:
        not_implemented: NotImplementedError = e
        print(not_implemented)
    except uform.TimeoutError as e:
        timeout: TimeoutError = e
        print(timeout)
    except uform.IoError as e:
        os_error: OSError = e
        print(os_error.errno)
    except uform.OutOfMemoryError as e:
        memory: MemoryError = e
        print(memory)
    except (
        uform.UnavailableError,
        uform.InUseError,
        uform.ConflictError,
        uform.DeviceError,
        uform.FreedHandleError,
        uform.InternalError,
    ) as e:
        runtime: RuntimeError = e
        print(runtime)
    except uform.UFormError as e:
        print(e.code)


def enums() -> None:
    vendors: List[int] = [uform.GpuVendor.UNKNOWN, uform.GpuVendor.NVIDIA, uform.GpuVendor.AMD, uform.GpuVendor.APPLE]
    tiers: List[str] = [uform.MultimemTier.SWITCH_REDUCED, uform.MultimemTier.PEER_READ]
    moods: List[Mood] = [Mood.PARKED, Mood.SPINNING]
    print(vendors, tiers, moods, uform.__version__)


def models(directory: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as ex:
        model: uform.Model = uform.Model.load_ram(directory, executor=ex)
        with uform.Model.load_ram(os.fspath(directory), executor=ex, memory_domains=[0]) as scoped:
            print(scoped.describe().path)
        d: uform.ModelDescription = model.describe()
        path: str = d.path
        architecture: Optional[str] = d.architecture
        residency: uform.Residency = d.residency
        domains: Tuple[int, ...] = d.memory_domains
        for t in d.tensors:
            tensor: uform.TensorDescription = t
            shape: Tuple[int, ...] = t.shape
            print(tensor.name, tensor.dtype, shape, tensor.bytes)
        print(path, architecture, residency, domains, d.devices, d.bytes, d.format)
        embeddings: npt.NDArray[np.float32] = model.encode_text(["hello", "world"], normalize=True, max_tokens=16)
        rows, columns = embeddings.shape
        print(rows, columns, model.encode_text([]))
        model.free()
        gpu: uform.Model = uform.Model.load_vram(directory, executor=ex, devices=[0])
        gpu.free()
    # A Hub name at a revision, on the default executor.
    with uform.Model.load_ram("sentence-transformers/all-MiniLM-L6-v2", revision="main") as by_name:
        print(by_name.describe().path)


def trainers(directory: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as ex, uform.Model.load_ram(directory, executor=ex) as model:
        config: uform.TrainerContrastiveConfig = {"learning_rate": 1e-4, "warmup_steps": 2, "dropout": 0.0}
        with uform.Trainer.contrastive(model, **config) as scoped:
            first: uform.TrainStep = scoped.step(["anchor"], ("positive",))
            print(first.step + 1, first.loss * 2.0, first.learning_rate, first.gradient_norm, first.seconds)
        trainer: uform.Trainer = uform.Trainer.contrastive(
            model,
            learning_rate=5e-5,
            weight_decay=0.01,
            warmup_steps=None,
            total_steps=20,
            max_grad_norm=1.0,
            scale=20.0,
            max_tokens=128,
            dropout=None,
            seed=12345,
        )
        number: int = trainer.step(["a", "b"], ["c", "d"]).step
        rate: float = trainer.step(["a"], ["b"]).learning_rate
        print(number, rate, trainer.compiled)
        trainer.save(directory / "trained")
        trainer.save(os.fspath(directory / "again"))
        trainer.free()
        uform.Trainer.contrastive(model).free()


def families(directory: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as ex, uform.Model.load_ram(directory, executor=ex) as model:
        d: uform.ModelDescription = model.describe()
        family: Optional[str] = d.family
        counts: Tuple[int, int] = (d.max_tokens, d.dimensions)
        prompts: Tuple[str, ...] = d.prompts
        cross_encoder: bool = d.cross_encoder
        options: uform.EncodeTextOptions = {"dimensions": 24, "prompt_name": "query"}
        cut: npt.NDArray[np.float32] = model.encode_text(["a"], **options)
        prompted: npt.NDArray[np.float32] = model.encode_text(["a"], prompt="query: ", dimensions=None)
        rerank: uform.RerankOptions = {"sorted": True, "max_tokens": 64}
        scores: List[uform.RerankScore] = model.rerank("a query", ["a document"], **rerank)
        index: int = scores[0].index
        score: float = model.rerank("a query", ("a document",), sorted=False, max_tokens=None)[0].score
        towers: Tuple[str, ...] = d.towers
        image: uform.EncodeImageOptions = {"normalize": False}
        pixels: npt.NDArray[np.float32] = model.encode_image([b"\x89PNG", bytearray(b"GIF89a")], **image)
        viewed: npt.NDArray[np.float32] = model.encode_image((memoryview(b"RIFF"),), normalize=None)
        print(family, counts, prompts, cross_encoder, cut, prompted, index, score, towers, pixels, viewed)
