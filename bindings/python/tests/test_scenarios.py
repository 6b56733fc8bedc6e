"""The scenario list (SCENARIOS.md) in Python, one test (or a few) per numbered scenario, on a machine without a GPU.

Where a scenario needs a GPU, the test checks what happens without one; on a machine with GPUs those checks adapt.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
from typing import List

import pytest

import uform
from uform import Executor, Mesh, Mood


def names(listing: str) -> List[str]:
    return listing.split(",")


def is_gpu_class(name: str) -> bool:
    return name.startswith(("nvidia-", "amd-cdna", "amd-rdna"))


HAVE_GPUS = bool(uform.gpu_devices())


# ---- Discovery ----


def test_01_capabilities_are_comma_separated_names() -> None:
    for listing in (uform.capabilities_compiled(), uform.capabilities_available()):
        assert isinstance(listing, str)
        assert listing
        assert " " not in listing
        assert all(names(listing)), listing


def test_02_every_available_cpu_class_is_accepted() -> None:
    cpu_classes = [n for n in names(uform.capabilities_available()) if not is_gpu_class(n)]
    assert cpu_classes
    for name in cpu_classes:
        with Executor.for_ram(cpu_class=name, threads=1) as executor:
            executor.drain()


def test_02_unknown_cpu_class_lists_the_accepted_names() -> None:
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Executor.for_ram(cpu_class="intel-pentium-pro")
    message = str(caught.value)
    assert "cpu_class" in message and "intel-pentium-pro" in message
    for name in names(uform.capabilities_available()):
        if not is_gpu_class(name):
            assert name in message


def test_03_gpu_devices_without_a_driver_is_an_empty_list() -> None:
    devices = uform.gpu_devices()
    assert isinstance(devices, list)
    if not HAVE_GPUS:
        assert devices == []
    for device in devices:
        assert isinstance(device, uform.GpuDevice)
        assert isinstance(device.vendor, uform.GpuVendor)


def test_04_enum_values() -> None:
    assert uform.MultimemTier.SWITCH_REDUCED == "switch-reduced"
    assert uform.MultimemTier.PEER_READ.value == "peer-read"
    assert uform.MultimemTier("peer-read") is uform.MultimemTier.PEER_READ
    assert isinstance(uform.MultimemTier.PEER_READ, str)
    assert [(v.name, int(v)) for v in uform.GpuVendor] == [("UNKNOWN", 0), ("NVIDIA", 1), ("AMD", 2), ("APPLE", 3)]
    assert uform.GpuVendor(2) is uform.GpuVendor.AMD
    assert [v.name for v in Mood] == ["PARKED", "SPINNING"]


# ---- Executor life cycle ----


def test_05_for_ram_with_no_config_and_drains() -> None:
    executor = Executor.for_ram()
    executor.drain()
    executor.drain(Mood.PARKED)
    executor.drain(Mood.SPINNING)
    executor.drain(mood=Mood.PARKED)
    assert executor.compiled is executor
    executor.free()


def test_05_for_ram_with_every_field_set() -> None:
    cpu_class = names(uform.capabilities_available())[0]
    executor = Executor.for_ram(memory_domains=[0], cpu_class=cpu_class, threads=2, deferred_limit=16)
    executor.drain(Mood.SPINNING)
    executor.drain()
    executor.free()


def test_05_config_spreads_from_a_typed_dict() -> None:
    config: uform.ExecutorForRamConfig = {"threads": 1, "deferred_limit": 4}
    with Executor.for_ram(**config) as executor:
        executor.drain()


def test_06_free_twice_then_any_call_is_a_freed_handle_error() -> None:
    executor = Executor.for_ram(threads=1)
    executor.free()
    executor.free()
    with pytest.raises(uform.FreedHandleError) as caught:
        executor.drain()
    assert caught.value.code == "freed_handle"
    assert isinstance(caught.value, RuntimeError)
    with pytest.raises(uform.FreedHandleError):
        Mesh.bootstrap(executor)


def test_07_with_frees_the_executor() -> None:
    with Executor.for_ram(threads=1) as executor:
        executor.drain()
    with pytest.raises(uform.FreedHandleError):
        executor.drain()


def test_07_with_frees_the_executor_when_the_block_raises() -> None:
    with pytest.raises(KeyError):
        with Executor.for_ram(threads=1) as executor:
            raise KeyError("boom")
    with pytest.raises(uform.FreedHandleError):
        executor.drain()


def test_08_explicit_zero_counts_are_invalid() -> None:
    for field in ("threads", "deferred_limit"):
        with pytest.raises(uform.InvalidArgumentError) as caught:
            Executor.for_ram(**{field: 0})  # type: ignore[arg-type]
        assert field in str(caught.value) and "0" in str(caught.value)


def test_08_negative_counts_are_invalid() -> None:
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Executor.for_ram(threads=-3)
    assert "threads" in str(caught.value) and "-3" in str(caught.value)
    with pytest.raises(uform.InvalidArgumentError):
        Executor.for_ram(memory_domains=[-1])
    with pytest.raises(uform.InvalidArgumentError):
        Executor.for_ram(threads=2**40)


def test_08_wrong_python_types_are_type_errors() -> None:
    bad = [
        {"threads": 1.5},
        {"threads": 2.0},
        {"threads": True},
        {"threads": "2"},
        {"memory_domains": "0"},
        {"memory_domains": 0},
        {"memory_domains": [0.5]},
        {"cpu_class": 7},
    ]
    for kwargs in bad:
        with pytest.raises(TypeError):
            Executor.for_ram(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Executor.for_ram(2)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Executor.for_ram(thread=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Mesh.bootstrap("not an executor")  # type: ignore[arg-type]


def test_08_unknown_numa_node_is_invalid() -> None:
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Executor.for_ram(memory_domains=[4096])
    assert "memory_domains" in str(caught.value) and "4096" in str(caught.value)


def test_08_unrunnable_cpu_class_is_unsupported() -> None:
    compiled = [n for n in names(uform.capabilities_compiled()) if not is_gpu_class(n)]
    available = set(names(uform.capabilities_available()))
    unrunnable = [n for n in compiled if n not in available]
    for name in unrunnable:
        with pytest.raises(uform.UnsupportedError) as caught:
            Executor.for_ram(cpu_class=name)
        assert name in str(caught.value)
        assert isinstance(caught.value, NotImplementedError)


def test_09_on_pool_is_unsupported() -> None:
    with pytest.raises(uform.UnsupportedError) as caught:
        Executor.on_pool(0x1234, deferred_limit=8)
    assert caught.value.code == "unsupported"
    assert isinstance(caught.value, NotImplementedError)
    with pytest.raises(uform.InvalidArgumentError):
        Executor.on_pool(-1)
    with pytest.raises(TypeError):
        Executor.on_pool("0x1234")  # type: ignore[arg-type]


def test_10_for_vram_without_gpus() -> None:
    if HAVE_GPUS:
        with pytest.raises(uform.InvalidArgumentError):
            Executor.for_vram(devices=[len(uform.gpu_devices()) + 7])
        return
    with pytest.raises(uform.UnavailableError) as caught:
        Executor.for_vram()
    assert caught.value.code == "unavailable"
    with pytest.raises(uform.UnavailableError):
        Executor.for_vram(devices=[99])


def test_10_for_vram_bad_shapes() -> None:
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Executor.for_vram(devices=[0], streams=[1, 2])
    assert "streams" in str(caught.value)
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Executor.for_vram(gpu_class="nvidia-kepler-9000")
    assert "gpu_class" in str(caught.value) and "nvidia-kepler-9000" in str(caught.value)
    with pytest.raises(uform.InvalidArgumentError):
        Executor.for_vram(devices=[])
    with pytest.raises(uform.InvalidArgumentError):
        Executor.for_vram(scratch_limit=0)
    with pytest.raises(TypeError):
        Executor.for_vram(streams=[1.0])  # type: ignore[list-item]


# ---- Mesh ----


def test_11_mesh_of_one_process() -> None:
    with Executor.for_ram(threads=1) as executor:
        mesh = Mesh.bootstrap(executor)
        d = mesh.describe()
        assert isinstance(d, uform.MeshDescription)
        assert (d.host_domain_index, d.host_domain_count) == (0, 1)
        assert d.gpus == ()
        assert d.multimem_tier in (uform.MultimemTier.SWITCH_REDUCED, uform.MultimemTier.PEER_READ)
        assert isinstance(d.multimem_tier, uform.MultimemTier)
        assert mesh.compiled is mesh
        mesh.free()
        mesh.free()
        with pytest.raises(uform.FreedHandleError):
            mesh.describe()


def test_11_mesh_options_from_environment_feed_bootstrap(mesh_dir: pathlib.Path) -> None:
    script = (
        "import uform, json, sys\n"
        "options = uform.mesh_options_from_environment()\n"
        "print(json.dumps(options))\n"
        "with uform.Executor.for_ram(threads=1) as ex:\n"
        "    with uform.Mesh.bootstrap(ex, **options, directory=sys.argv[1], timeout_seconds=30) as mesh:\n"
        "        print(mesh.describe().host_domain_count)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "TORCHELASTIC_"))}
    env.update({"RANK": "0", "WORLD_SIZE": "1", "TORCHELASTIC_RUN_ID": "run-42"})
    out = subprocess.run([sys.executable, "-c", script, os.fspath(mesh_dir)], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    options = json.loads(lines[0])
    assert options["host_domain_index"] == 0 and options["host_domain_count"] == 1
    assert "torchrun" in options["job"] and "directory" not in options
    assert lines[1] == "1"
    bare = {k: v for k, v in env.items() if k not in ("RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID")}
    none = subprocess.run([sys.executable, "-c", "import uform; print(uform.mesh_options_from_environment())"], env=bare, capture_output=True, text=True, timeout=60)
    assert none.stdout.strip() == "None", none.stderr


def test_12_peers_need_a_directory_and_a_job(mesh_dir: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as executor:
        cases = [
            ({"host_domain_count": 2, "job": "j"}, "directory"),
            ({"host_domain_count": 2, "directory": mesh_dir}, "job"),
            ({"host_domain_count": 2, "directory": mesh_dir, "job": "a/b"}, "job"),
            ({"host_domain_count": 2, "directory": mesh_dir, "job": ".."}, "job"),
            ({"host_domain_count": 2, "directory": mesh_dir, "job": ""}, "job"),
            ({"host_domain_count": 2, "host_domain_index": 2, "directory": mesh_dir, "job": "j"}, "host_domain_index"),
            ({"host_domain_count": 0}, "host_domain_count"),
            ({"host_domain_count": 2, "directory": mesh_dir, "job": "j", "timeout_seconds": 0}, "timeout_seconds"),
        ]
        for kwargs, argument in cases:
            with pytest.raises(uform.InvalidArgumentError) as caught:
                Mesh.bootstrap(executor, **kwargs)  # type: ignore[arg-type]
            assert argument in str(caught.value), (kwargs, str(caught.value))
        with pytest.raises(TypeError):
            Mesh.bootstrap(executor, directory=42, job="j", host_domain_count=2)  # type: ignore[arg-type]
    assert os.listdir(mesh_dir) == []


def test_18_a_job_name_planted_as_a_link_is_refused(mesh_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "data.txt").write_text("precious")
    (mesh_dir / "job1").symlink_to(victim)
    with Executor.for_ram(threads=1) as executor:
        with pytest.raises(uform.ConflictError) as caught:
            Mesh.bootstrap(executor, directory=mesh_dir, job="job1", host_domain_index=0, host_domain_count=2, timeout_seconds=5)
        message = str(caught.value)
        assert "symbolic link" in message and str(victim) in message and "nothing was written" in message, message
        # The `group` option crosses the binding: a group this host does not know is an invalid argument.
        with pytest.raises(uform.InvalidArgumentError) as caught_group:
            Mesh.bootstrap(executor, directory=mesh_dir, job="fresh", host_domain_count=2, group="uform-no-such-group")
        assert "group" in str(caught_group.value)
    assert os.listdir(victim) == ["data.txt"]
    assert (victim / "data.txt").read_text() == "precious"
    assert os.listdir(mesh_dir) == ["job1"] and (mesh_dir / "job1").is_symlink()


def test_13_a_peer_that_never_comes_times_out(mesh_dir: pathlib.Path) -> None:
    with Executor.for_ram(threads=1) as executor:
        started = time.monotonic()
        with pytest.raises(uform.TimeoutError) as caught:
            Mesh.bootstrap(executor, directory=mesh_dir, job="lonely", host_domain_index=0, host_domain_count=2, timeout_seconds=1)
        elapsed = time.monotonic() - started
    assert isinstance(caught.value, TimeoutError)  # the builtin
    assert caught.value.code == "timeout"
    assert "1" in str(caught.value)
    assert elapsed >= 0.9
    assert os.listdir(mesh_dir) == []


def test_13_other_threads_run_while_bootstrap_waits(mesh_dir: pathlib.Path) -> None:
    count = 0
    stop = threading.Event()

    def counter() -> None:
        nonlocal count
        while not stop.is_set():
            count += 1

    thread = threading.Thread(target=counter)
    with Executor.for_ram(threads=1) as executor:
        thread.start()
        time.sleep(0.05)
        before = count
        try:
            with pytest.raises(uform.TimeoutError):
                Mesh.bootstrap(executor, directory=os.fspath(mesh_dir), job="gil", host_domain_count=2, timeout_seconds=1)
            during = count - before
        finally:
            stop.set()
            thread.join()
    # Holding the GIL for the whole second would leave the counter where it was (give or take a switch interval).
    assert during > 10_000, during


def test_14_four_processes_meet(mesh_dir: pathlib.Path, peer_script: str) -> None:
    peers = [
        subprocess.Popen(
            [sys.executable, peer_script, os.fspath(mesh_dir), "four", str(i), "4", "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    results = []
    for peer in peers:
        out, err = peer.communicate(timeout=120)
        assert peer.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r["host_domain_index"] for r in results) == [0, 1, 2, 3]
    shapes = {json.dumps({k: v for k, v in r.items() if k != "host_domain_index"}, sort_keys=True) for r in results}
    assert len(shapes) == 1, shapes
    assert results[0]["host_domain_count"] == 4
    assert not (mesh_dir / "four").exists()


def test_15_with_frees_the_mesh_and_the_executor_is_in_use_under_it() -> None:
    with Executor.for_ram(threads=1) as executor:
        with Mesh.bootstrap(executor) as mesh:
            with pytest.raises(uform.InUseError) as caught:
                executor.free()
            assert caught.value.code == "in_use"
            executor.drain()
        with pytest.raises(uform.FreedHandleError):
            mesh.describe()
        executor.drain()
    with pytest.raises(uform.FreedHandleError):
        executor.drain()


# ---- Errors and values ----


ERRORS = {
    "InvalidArgumentError": ("invalid_argument", ValueError),
    "UnsupportedError": ("unsupported", NotImplementedError),
    "UnavailableError": ("unavailable", RuntimeError),
    "TimeoutError": ("timeout", TimeoutError),
    "InUseError": ("in_use", RuntimeError),
    "ConflictError": ("conflict", RuntimeError),
    "OutOfMemoryError": ("out_of_memory", MemoryError),
    "IoError": ("io", OSError),
    "DeviceError": ("device", RuntimeError),
    "FreedHandleError": ("freed_handle", RuntimeError),
    "InternalError": ("internal", RuntimeError),
}


def test_16_every_error_kind_has_a_class_a_code_and_a_builtin() -> None:
    for name, (code, builtin) in ERRORS.items():
        cls = getattr(uform, name)
        assert issubclass(cls, uform.UFormError) and issubclass(cls, builtin), name
        assert cls.code == code
        error = cls("`x` went wrong")
        assert str(error) == "`x` went wrong" and error.code == code
    assert len({getattr(uform, n).code for n in ERRORS}) == len(ERRORS)


def test_16_messages_name_the_argument_and_the_value() -> None:
    cases = [
        (lambda: Executor.for_ram(threads=0), uform.InvalidArgumentError, ["threads", "0"]),
        (lambda: Executor.for_ram(deferred_limit=-5), uform.InvalidArgumentError, ["deferred_limit", "-5"]),
        (lambda: Executor.for_ram(cpu_class="intel-486"), uform.InvalidArgumentError, ["cpu_class", "intel-486"]),
        (lambda: Executor.on_pool(0xBEEF), uform.UnsupportedError, ["on_pool", "0xbeef"]),
        (lambda: Executor.for_vram(gpu_class="amd-nope"), uform.InvalidArgumentError, ["gpu_class", "amd-nope"]),
    ]
    for call, cls, words in cases:
        with pytest.raises(cls) as caught:
            call()
        message = str(caught.value).lower()
        for word in words:
            assert word in message, (word, message)
        assert isinstance(caught.value, uform.UFormError)


def test_17_records_compare_print_and_are_immutable() -> None:
    with Executor.for_ram(threads=1) as executor:
        with Mesh.bootstrap(executor) as mesh:
            a, b = mesh.describe(), mesh.describe()
    assert a == b and a is not b
    assert hash(a) == hash(b)
    text = repr(a)
    assert text.startswith("MeshDescription(") and "host_domain_count=1" in text and "MultimemTier.PEER_READ" in text
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.host_domain_count = 5  # type: ignore[misc]
    assert dataclasses.replace(a, host_domain_index=1) != a
    gpu = uform.GpuDevice(vendor=uform.GpuVendor.NVIDIA, vendor_ordinal=0, gpu_class="nvidia-hopper", compute_units=132, memory_bytes=1 << 37, name="H200")
    same = uform.GpuDevice(vendor=uform.GpuVendor.NVIDIA, vendor_ordinal=0, gpu_class="nvidia-hopper", compute_units=132, memory_bytes=1 << 37, name="H200")
    assert gpu == same and gpu != dataclasses.replace(same, vendor_ordinal=1)
    assert "GpuDevice(vendor=<GpuVendor.NVIDIA: 1>" in repr(gpu) and "name='H200'" in repr(gpu)
    assert "Executor" in repr(Executor.for_ram(threads=1))


def test_06_repeated_create_and_free_does_not_grow_memory() -> None:
    import resource

    def rss_kib() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * (resource.getpagesize() // 1024)

    for _ in range(20):
        Executor.for_ram(threads=1).free()
    before = rss_kib()
    for _ in range(300):
        with Executor.for_ram(threads=1) as executor:
            with Mesh.bootstrap(executor) as mesh:
                mesh.describe()
    grown = rss_kib() - before
    assert grown < 16 * 1024, f"resident memory grew by {grown} KiB over 300 create/free cycles"
