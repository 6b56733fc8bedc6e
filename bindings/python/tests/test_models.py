"""Model scenarios 18–21 of SCENARIOS.md: loading safetensors into RAM, describe(), bad files, borrowing."""

from __future__ import annotations

import json
import pathlib
import struct
from typing import Iterator, List, Tuple

import pytest

import uform
from uform import Executor, Model, Residency

# name, dtype, shape, bytes: several dtypes and shapes, a zero-sized tensor and a scalar among them.
TENSORS: List[Tuple[str, str, Tuple[int, ...], int]] = [
    ("encoder.weight", "F32", (2, 3), 24),
    ("embeddings", "BF16", (4,), 8),
    ("position_ids", "I64", (1, 3), 24),
    ("empty", "U8", (0,), 0),
    ("norm.bias", "F16", (2, 2), 8),
    ("mask", "BOOL", (3,), 3),
    ("scale", "F64", (), 8),
]


def raw(header: str, data: bytes) -> bytes:
    encoded = header.encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def safetensors(tensors: List[Tuple[str, str, Tuple[int, ...], int]]) -> bytes:
    entries, offset = {}, 0
    for name, dtype, shape, size in tensors:
        entries[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    header = json.dumps({"__metadata__": {"format": "pt"}, **entries})
    header += " " * (-len(header) % 8)
    return raw(header, bytes((i * 31 + 7) % 256 for i in range(offset)))


@pytest.fixture
def executor() -> Iterator[Executor]:
    with Executor.for_ram(threads=2) as ex:
        yield ex


def check_description(model: Model, path: str, architecture: object) -> None:
    d = model.describe()
    assert (d.path, d.format, d.architecture, d.residency) == (path, "safetensors", architecture, Residency.RAM)
    assert d.devices == ()
    assert [(t.name, t.dtype, t.shape, t.bytes) for t in d.tensors] == TENSORS
    assert d.bytes == sum(t[3] for t in TENSORS) == 75


def test_18_vram_without_a_gpu_is_unavailable(tmp_path: pathlib.Path, executor: Executor) -> None:
    if uform.gpu_devices():
        pytest.skip("a GPU is present: scripts/gpu-check.sh covers loadVram")
    with pytest.raises(uform.UnavailableError, match="for_vram"):
        Executor.for_vram(devices=[0, 1])
    file = tmp_path / "model.safetensors"
    file.write_bytes(safetensors(TENSORS))
    with pytest.raises(uform.UnavailableError) as caught:
        Model.load_vram(file, executor=executor, devices=[0, 1])
    assert str(caught.value).startswith("no GPU driver"), caught.value
    assert "`Model.load_ram`" in str(caught.value)


def test_19_a_file_its_directory_and_a_sharded_pair_describe_exactly(
    tmp_path: pathlib.Path, executor: Executor
) -> None:
    file = tmp_path / "model.safetensors"
    file.write_bytes(safetensors(TENSORS))
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    for path in (str(file), str(tmp_path)):
        with Model.load_ram(path, executor=executor) as model:
            check_description(model, path, "bert")
    with Model.load_ram(file, executor=executor) as model:  # os.PathLike is accepted
        assert model.describe().path == str(file)
    (tmp_path / "config.json").unlink()
    with Model.load_ram(str(file), executor=executor) as model:
        check_description(model, str(file), None)

    sharded = tmp_path / "sharded"
    sharded.mkdir()
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    (sharded / names[0]).write_bytes(safetensors(TENSORS[:3]))
    (sharded / names[1]).write_bytes(safetensors(TENSORS[3:]))
    weight_map = {t[0]: names[0 if i < 3 else 1] for i, t in enumerate(TENSORS)}
    index = sharded / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 75}, "weight_map": weight_map}))
    for path in (str(index), str(sharded)):
        with Model.load_ram(path, executor=executor) as model:
            check_description(model, path, None)


OK_TENSOR = '"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
BAD_FILES = [
    ("truncated.safetensors", b"\x01\x02\x03", "fewer than the 8-byte header length"),
    ("past.safetensors", struct.pack("<Q", 4096) + b"{}", "runs past the end of the file"),
    ("malformed.safetensors", raw('{"a": {', b""), "not a JSON object of tensors"),
    (
        "dtype.safetensors",
        raw('{"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}', bytes(4)),
        "dtype `F33` is not a safetensors dtype",
    ),
    ("shape.safetensors", raw('{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', bytes(8)), "tensor `w`"),
    (
        "overlap.safetensors",
        raw("{" + OK_TENSOR + ',"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', bytes(8)),
        "overlaps tensor `a`",
    ),
]


@pytest.mark.parametrize("name,contents,fragment", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_20_bad_files_name_the_file(
    tmp_path: pathlib.Path, executor: Executor, name: str, contents: bytes, fragment: str
) -> None:
    path = tmp_path / name
    path.write_bytes(contents)
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Model.load_ram(path, executor=executor)
    assert str(path) in str(caught.value) and fragment in str(caught.value), caught.value


def test_20_missing_shard_empty_and_nonexistent_directories(tmp_path: pathlib.Path, executor: Executor) -> None:
    (tmp_path / "s1.safetensors").write_bytes(safetensors([("a", "U8", (2,), 2)]))
    index = tmp_path / "missing.index.json"
    index.write_text('{"weight_map": {"a": "s1.safetensors", "b": "s9.safetensors"}}')
    with pytest.raises(uform.InvalidArgumentError, match="s9.safetensors.*does not exist"):
        Model.load_ram(index, executor=executor)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(uform.InvalidArgumentError) as caught:
        Model.load_ram(empty, executor=executor)
    assert str(empty) in str(caught.value) and "without weights" in str(caught.value)
    missing = tmp_path / "not-there"
    with pytest.raises(uform.IoError) as io:
        Model.load_ram(missing, executor=executor)
    assert str(missing) in str(io.value)
    executor.free()  # no failed load kept a borrow


def test_21_borrowing_and_freed_models(tmp_path: pathlib.Path) -> None:
    file = tmp_path / "m.safetensors"
    file.write_bytes(safetensors(TENSORS))
    executor = Executor.for_ram(threads=1)
    model = Model.load_ram(file, executor=executor)
    with pytest.raises(uform.InUseError, match="still borrows"):
        executor.free()
    model.free()
    model.free()  # a second free does nothing
    with pytest.raises(uform.FreedHandleError, match="describe"):
        model.describe()
    with pytest.raises(uform.FreedHandleError):
        model.encode_text(["hello"])
    executor.free()  # the model's free returned the borrow
    with pytest.raises(uform.FreedHandleError, match="Model.load_ram"):
        Model.load_ram(file, executor=executor)


def test_21_the_with_block_frees_the_model(tmp_path: pathlib.Path) -> None:
    file = tmp_path / "m.safetensors"
    file.write_bytes(safetensors(TENSORS))
    with Executor.for_ram(threads=1) as executor:
        with Model.load_ram(file, executor=executor) as model:
            assert model.describe().tensors[0].name == "encoder.weight"
        with pytest.raises(uform.FreedHandleError):
            model.describe()
        executor.free()  # not in use any more


def test_21_bad_arguments(tmp_path: pathlib.Path, executor: Executor) -> None:
    with pytest.raises(TypeError):
        Model.load_ram(tmp_path, executor="not an executor")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Model.load_ram(123, executor=executor)  # type: ignore[arg-type]


def hub_cache(cache: pathlib.Path, folder: pathlib.Path, name: str, commit: str) -> None:
    """Lays `folder` out in `cache` as huggingface_hub does: blobs/, refs/main and refs/v1, and snapshots/<commit>/
    whose files are relative links into blobs/."""
    repository = cache / ("models--" + name.replace("/", "--"))
    (repository / "blobs").mkdir(parents=True)
    (repository / "refs").mkdir()
    for ref in ("main", "v1"):
        (repository / "refs" / ref).write_text(commit)
    snapshot = repository / "snapshots" / commit
    for number, file in enumerate(sorted(p for p in folder.rglob("*") if p.is_file())):
        relative = file.relative_to(folder)
        blob = repository / "blobs" / f"blob{number:04d}"
        blob.write_bytes(file.read_bytes())
        link = snapshot / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(pathlib.Path(*[".."] * (len(relative.parts) + 1), "blobs", blob.name))


def test_a_hub_name_loads_from_the_huggingface_cache(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, tiny_model_dir: pathlib.Path, executor: Executor
) -> None:
    name, commit = "org/tiny-bert", "0123456789abcdef0123456789abcdef01234567"
    hub_cache(tmp_path / "hub", tiny_model_dir, name, commit)
    texts = ["A man is eating food.", "A man rides a horse."]
    with Model.load_ram(str(tiny_model_dir), executor=executor) as model:
        want = model.encode_text(texts)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    for revision in (None, "v1", commit):
        with Model.load_ram(name, executor=executor, revision=revision) as model:
            assert model.describe().path == name
            assert model.encode_text(texts).tolist() == want.tolist()
    with pytest.raises(uform.UnavailableError, match="huggingface-cli download org/other") as info:
        Model.load_ram("org/other", executor=executor)
    assert str(tmp_path / "hub") in str(info.value)
    with pytest.raises(uform.InvalidArgumentError, match="revision"):
        Model.load_ram(str(tiny_model_dir), executor=executor, revision="main")
    with pytest.raises(uform.InvalidArgumentError):
        Model.load_ram(name, executor=executor, revision="../../etc")


def native_threads() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def test_a_load_without_an_executor_shares_the_default_executor(tiny_model_dir: pathlib.Path) -> None:
    before = native_threads()
    first = Model.load_ram(str(tiny_model_dir))
    with_default = native_threads()
    second = Model.load_ram(str(tiny_model_dir))
    assert native_threads() == with_default, "the second model reuses the first one's executor"
    assert first.encode_text(["hello"]).tolist() == second.encode_text(["hello"]).tolist()
    first.free()
    second.free()
    assert native_threads() == before, "the default executor is freed with the last model that holds it"
    with Model.load_ram(str(tiny_model_dir)) as third:
        assert third.encode_text(["hello"]).shape == (1, hidden_size(tiny_model_dir))


def hidden_size(folder: pathlib.Path) -> int:
    return int(json.loads((folder / "config.json").read_text())["hidden_size"])
