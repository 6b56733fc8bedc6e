"""Trainer scenarios 26–29 of SCENARIOS.md against the test model (all-MiniLM-L6-v2) and the committed training
fixture (tests/fixtures/train/reference.json). Needs UFORM_TEST_MODEL_DIR and UFORM_TEST_TRAIN_REFERENCE, which
`cargo xtask test python` sets."""

from __future__ import annotations

import math
import os
import pathlib
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
import pytest

import uform
from uform import Executor, Model, Trainer


@pytest.fixture
def executor() -> Iterator[Executor]:
    with Executor.for_ram(threads=2) as ex:
        yield ex


@pytest.fixture
def model(test_model_dir: pathlib.Path, executor: Executor) -> Iterator[Model]:
    loaded = Model.load_ram(test_model_dir, executor=executor)
    yield loaded
    loaded.free()  # every test leaves its model free of trainers


def fixture_config(reference: Dict[str, Any]) -> Dict[str, Any]:
    """The fixture's trainer settings as `Trainer.contrastive` keywords."""
    c = reference["config"]
    return {
        "learning_rate": float(c["learning_rate"]),
        "weight_decay": float(c["weight_decay"]),
        "warmup_steps": int(c["warmup_steps"]),
        "total_steps": int(c.get("total_steps", c.get("max_steps"))),
        "max_grad_norm": float(c["max_grad_norm"]),
        "scale": float(c["scale"]),
        "dropout": float(c["dropout"]),
        "seed": int(c["seed"]),
    }


def batch(reference: Dict[str, Any], k: int) -> Tuple[List[str], List[str]]:
    """Step k's anchors and positives: the pairs the fixture's `steps[k]` lists, in its order."""
    pairs = [reference["pairs"][i] for i in reference["steps"][k]]
    return [a for a, _ in pairs], [p for _, p in pairs]


def cosines(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> List[float]:
    g, w = got.astype(np.float64), want.astype(np.float64)
    return [float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in zip(g, w)]


def max_diff(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


# ---- 26: the committed 20-step fixture ----


def test_26_reproduces_the_committed_fixture(model: Model, train_reference: Dict[str, Any]) -> None:
    r = train_reference
    held_out = r["held_out"]
    before = np.array(r["held_out_embeddings_before"], dtype=np.float64)
    after = np.array(r["held_out_embeddings_after"], dtype=np.float64)
    assert min(cosines(model.encode_text(held_out), before)) >= 0.9999, "the untrained model is not the fixture's"
    steps = len(r["steps"])
    assert steps == 20 and len(r["loss"]) == len(r["lr"]) == steps
    with Trainer.contrastive(model, **fixture_config(r)) as trainer:
        for k in range(steps):
            anchors, positives = batch(r, k)
            s = trainer.step(anchors, positives)
            assert isinstance(s, uform.TrainStep)
            assert s.step == k + 1
            assert abs(s.loss - r["loss"][k]) <= 1e-4 * abs(r["loss"][k]), (k + 1, s.loss, r["loss"][k])
            assert abs(s.learning_rate - r["lr"][k]) <= 1e-9 * abs(r["lr"][k]), (k + 1, s.learning_rate, r["lr"][k])
            assert abs(s.gradient_norm - r["grad_norm"][k]) <= 1e-3 * r["grad_norm"][k], (k + 1, s.gradient_norm)
            assert math.isfinite(s.seconds) and s.seconds >= 0.0
        trained = model.encode_text(held_out)
    for i, cosine in enumerate(cosines(trained, after)):
        assert cosine >= 0.9999, f"held-out text {i}: cosine {cosine:.6f} to the fixture's trained embedding"
    for i, cosine in enumerate(cosines(trained, before)):
        assert cosine < 0.9995, f"held-out text {i}: cosine {cosine:.6f} to the untrained embedding (did not move)"
    # The model keeps the trained weights after the trainer is freed.
    assert max_diff(model.encode_text(held_out), trained) <= 1e-6


# ---- 27: encode mid-training, save, load back ----


def test_27_encode_after_a_step_save_and_load_back(
    model: Model, executor: Executor, train_reference: Dict[str, Any], tmp_path: pathlib.Path
) -> None:
    r = train_reference
    texts = r["held_out"][:4]
    untrained = model.encode_text(texts)
    # No warm-up, so the first step's learning rate is not zero and the weights move.
    with Trainer.contrastive(model, learning_rate=1e-4, dropout=0.0, seed=7) as trainer:
        s = trainer.step(*batch(r, 0))
        assert s.step == 1 and s.learning_rate == pytest.approx(1e-4, rel=1e-9)
        stepped = model.encode_text(texts)
        assert max_diff(stepped, untrained) > 1e-4, "encode_text after a step still embeds with the old weights"
        s = trainer.step(*batch(r, 1))
        assert s.step == 2
        trained = model.encode_text(texts)
        assert max_diff(trained, stepped) > 1e-6
        saved = tmp_path / "trained"
        trainer.save(saved)  # a path-like
        assert (saved / "model.safetensors").is_file()
        trainer.save(os.fspath(tmp_path / "again"))  # a str
    assert sorted(os.listdir(tmp_path)) == ["again", "trained"], "a temporary sibling was left behind"
    for folder in (saved, tmp_path / "again"):
        with Model.load_ram(folder, executor=executor) as loaded:
            assert loaded.describe().architecture == "bert"
            assert max_diff(loaded.encode_text(texts), trained) <= 1e-6
    assert max_diff(model.encode_text(texts), trained) <= 1e-6  # the trainer's free kept the weights


# ---- 28: bad input; the model stays usable and nothing is left behind ----

BAD_CONFIGS: List[Tuple[str, Dict[str, Any]]] = [
    ("learning_rate", {"learning_rate": float("nan")}),
    ("learning_rate", {"learning_rate": float("inf")}),
    ("learning_rate", {"learning_rate": -1e-4}),
    ("weight_decay", {"weight_decay": float("nan")}),
    ("weight_decay", {"weight_decay": float("-inf")}),
    ("weight_decay", {"weight_decay": -0.01}),
    ("max_grad_norm", {"max_grad_norm": float("nan")}),
    ("max_grad_norm", {"max_grad_norm": float("inf")}),
    ("max_grad_norm", {"max_grad_norm": -1.0}),
    ("scale", {"scale": float("nan")}),
    ("scale", {"scale": float("inf")}),
    ("scale", {"scale": 0.0}),
    ("scale", {"scale": -20.0}),
    ("dropout", {"dropout": float("nan")}),
    ("dropout", {"dropout": -0.1}),
    ("dropout", {"dropout": 1.0}),
    ("dropout", {"dropout": 1.5}),
    ("max_tokens", {"max_tokens": 0}),
    ("max_tokens", {"max_tokens": 513}),
]


@pytest.mark.parametrize("field,config", BAD_CONFIGS, ids=[f"{f}={v}" for f, c in BAD_CONFIGS for v in c.values()])
def test_28_a_bad_config_is_an_invalid_argument_naming_the_field(model: Model, field: str, config: Dict[str, Any]) -> None:
    with pytest.raises(uform.InvalidArgumentError, match=f"`{field}`"):
        Trainer.contrastive(model, **config)
    assert model.encode_text(["still usable"]).shape == (1, 384)


def test_28_edge_configs_are_accepted(model: Model) -> None:
    for config in ({"learning_rate": 0.0, "weight_decay": 0.0, "max_grad_norm": 0.0, "dropout": 0.0},
                   {"dropout": 0.999, "max_tokens": 512, "scale": 1e-3, "seed": 2**64 - 1}):
        Trainer.contrastive(model, **config).free()


def test_28_bad_batches_change_nothing_and_do_not_count(model: Model, train_reference: Dict[str, Any]) -> None:
    texts = train_reference["held_out"][:3]
    untrained = model.encode_text(texts)
    anchors, positives = batch(train_reference, 0)
    with Trainer.contrastive(model, learning_rate=1e-4, dropout=0.0) as trainer:
        cases: List[Tuple[str, List[str], List[str]]] = [
            ("`positives`", anchors, positives[:-1]),
            ("`positives`", anchors[:1], []),
            ("`anchors`", [], []),
            ("`anchors[1]`", ["fine", "nul\x00inside"], ["a", "b"]),
            ("`positives[0]`", ["fine", "also fine"], ["\x00", "b"]),
            ("`anchors[0]`", ["\ud800 lone surrogate"], ["b"]),
        ]
        for word, a, p in cases:
            with pytest.raises(uform.InvalidArgumentError) as caught:
                trainer.step(a, p)
            assert word in str(caught.value), (word, str(caught.value))
        with pytest.raises(TypeError):
            trainer.step(["fine", 3], ["a", "b"])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            trainer.step("anchor", "positive")
        assert max_diff(model.encode_text(texts), untrained) == 0.0, "a failed step changed the weights"
        assert trainer.step(anchors, positives).step == 1, "a failed step counted as a step"


def test_28_save_refuses_an_existing_or_unwritable_path_and_leaves_nothing(
    model: Model, tmp_path: pathlib.Path
) -> None:
    existing_dir = tmp_path / "existing"
    existing_dir.mkdir()
    (existing_dir / "keep.txt").write_text("kept")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    before = sorted(os.listdir(tmp_path))
    with Trainer.contrastive(model) as trainer:
        for path in (existing_dir, a_file):
            with pytest.raises(uform.InvalidArgumentError) as caught:
                trainer.save(path)
            assert "`directory`" in str(caught.value) and "already exists" in str(caught.value), caught.value
        for path in (tmp_path / "missing" / "trained", a_file / "trained"):
            with pytest.raises(uform.IoError) as io:
                trainer.save(path)
            assert str(path) in str(io.value), io.value
        if os.geteuid() != 0:  # root writes anywhere
            locked = tmp_path / "locked"
            locked.mkdir(mode=0o555)
            with pytest.raises(uform.IoError):
                trainer.save(locked / "trained")
            locked.chmod(0o755)
            before.append("locked")
        for bad in ("", os.fspath(tmp_path / "nul\x00inside")):
            with pytest.raises((uform.InvalidArgumentError, uform.IoError)):
                trainer.save(bad)
        with pytest.raises(TypeError):
            trainer.save(42)  # type: ignore[arg-type]
    assert sorted(os.listdir(tmp_path)) == sorted(before), "a failed save left something behind"
    assert os.listdir(existing_dir) == ["keep.txt"]
    assert a_file.read_text() == "not a directory"
    assert model.encode_text(["still usable"]).shape == (1, 384)


def test_28_a_freed_trainer_refuses_every_call(model: Model, tmp_path: pathlib.Path) -> None:
    trainer = Trainer.contrastive(model)
    trainer.free()
    trainer.free()  # a second free does nothing
    with pytest.raises(uform.FreedHandleError, match="step"):
        trainer.step(["a"], ["b"])
    with pytest.raises(uform.FreedHandleError, match="save"):
        trainer.save(tmp_path / "never")
    with pytest.raises(uform.FreedHandleError):
        trainer.__enter__()
    assert os.listdir(tmp_path) == []
    assert model.encode_text(["still usable"]).shape == (1, 384)


def test_28_bad_model_arguments(executor: Executor, test_model_dir: pathlib.Path) -> None:
    with pytest.raises(TypeError):
        Trainer.contrastive("a model")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Trainer.contrastive(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Trainer.contrastive(executor)  # type: ignore[arg-type]
    freed = Model.load_ram(test_model_dir, executor=executor)
    freed.free()
    with pytest.raises(uform.FreedHandleError, match="Trainer.contrastive"):
        Trainer.contrastive(freed)


def test_28_a_vram_model_is_unsupported(executor: Executor, test_model_dir: pathlib.Path) -> None:
    if not uform.gpu_devices():
        pytest.skip("no GPU: a VRAM model cannot be made here (scripts/gpu-check.sh)")
    with Executor.for_vram(devices=[0]) as gpu:
        with Model.load_vram(test_model_dir, executor=gpu, devices=[0]) as vram:
            with pytest.raises(uform.UnsupportedError, match="RAM models"):
                Trainer.contrastive(vram)


# ---- 29: borrowing ----


def test_29_a_live_trainer_keeps_its_model_in_use(model: Model) -> None:
    trainer = Trainer.contrastive(model)
    with pytest.raises(uform.InUseError, match="1 trainer borrows it; free it first"):
        model.free()
    second = Trainer.contrastive(model)
    with pytest.raises(uform.InUseError, match="2 trainers borrow it"):
        model.free()
    second.free()
    assert model.encode_text(["still usable"]).shape == (1, 384)  # refused, not broken
    trainer.free()
    trainer.free()
    model.free()  # nothing borrows it now
    with pytest.raises(uform.FreedHandleError):
        Trainer.contrastive(model)


def test_29_the_with_block_frees_the_trainer(model: Model) -> None:
    with Trainer.contrastive(model) as trainer:
        assert isinstance(trainer, Trainer)
        with pytest.raises(uform.InUseError):
            model.free()
    with pytest.raises(uform.FreedHandleError):
        trainer.step(["a"], ["b"])
    model.free()  # the with block returned the borrow
