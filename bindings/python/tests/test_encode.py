"""encodeText scenarios 22–24 of SCENARIOS.md against the test model (all-MiniLM-L6-v2) and the committed
reference embeddings, plus 10,000 encode calls with flat resident memory. Needs UFORM_TEST_MODEL_DIR and
UFORM_TEST_REFERENCE, which `cargo xtask test python` sets."""

from __future__ import annotations

import pathlib
from typing import Any, Dict, Iterator

import numpy as np
import pytest

import uform
from uform import Executor, Model

from test_reliability import rss_kib


@pytest.fixture(scope="module")
def model(test_model_dir: pathlib.Path) -> Iterator[Model]:
    executor = Executor.for_ram(threads=2)
    loaded = Model.load_ram(test_model_dir, executor=executor)
    yield loaded
    loaded.free()
    executor.free()


def close_to(got: np.ndarray[Any, Any], want: np.ndarray[Any, Any]) -> None:
    for row, (g, w) in enumerate(zip(got.astype(np.float64), want)):
        cosine = float(g @ w / np.linalg.norm(g) / np.linalg.norm(w))
        worst = float(np.max(np.abs(g - w)))
        assert cosine >= 0.9999 and worst <= 1e-4, f"row {row}: cosine {cosine:.6f}, max diff {worst:.2e}"


def test_22_reproduces_the_reference_embeddings(model: Model, reference: Dict[str, Any]) -> None:
    got = model.encode_text(reference["texts"])
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float32 and got.shape == (len(reference["texts"]), 384)
    close_to(got, np.array(reference["embeddings"], dtype=np.float64))


def test_22_rows_follow_input_order(model: Model, reference: Dict[str, Any]) -> None:
    texts = reference["texts"][:4]
    forward, backward = model.encode_text(texts), model.encode_text(texts[::-1])
    np.testing.assert_allclose(forward, backward[::-1], atol=1e-5)
    assert not np.allclose(forward[0], forward[1])


def test_22_normalize_false_matches_the_unnormalized_reference(model: Model, reference: Dict[str, Any]) -> None:
    got = model.encode_text(reference["texts"][:3], normalize=False)
    close_to(got, np.array(reference["embeddings_unnormalized"][:3], dtype=np.float64))


def test_23_edge_inputs(model: Model, reference: Dict[str, Any]) -> None:
    empty = model.encode_text([])
    assert empty.dtype == np.float32 and empty.shape[0] == 0
    long = reference["long_text_index"]
    blank = reference["texts"].index("")
    texts = [reference["texts"][long], "", "Größere Straßenbahnen — 東京 🍕"]
    got = model.encode_text(texts)
    assert got.shape == (3, 384)
    close_to(got[:2], np.array([reference["embeddings"][long], reference["embeddings"][blank]], dtype=np.float64))
    assert abs(float(np.linalg.norm(got[2])) - 1.0) < 1e-4
    assert model.encode_text(texts[:1], max_tokens=4).shape == (1, 384)
    assert model.encode_text(("a", "b")).shape == (2, 384)


def test_23_nul_lone_surrogate_and_non_strings(model: Model) -> None:
    with pytest.raises(uform.InvalidArgumentError, match=r"texts\[1\]"):
        model.encode_text(["fine", "nul\x00byte"])
    with pytest.raises(uform.InvalidArgumentError, match=r"texts\[0\]"):
        model.encode_text(["\ud800 lone surrogate"])
    with pytest.raises(TypeError):
        model.encode_text(["fine", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        model.encode_text([b"bytes"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        model.encode_text("a string is not a list of texts")


def test_24_the_array_outlives_the_model_and_executor(test_model_dir: pathlib.Path, reference: Dict[str, Any]) -> None:
    executor = Executor.for_ram(threads=1)
    model = Model.load_ram(test_model_dir, executor=executor)
    got = model.encode_text(reference["texts"][:2])
    model.free()
    executor.free()
    close_to(got, np.array(reference["embeddings"][:2], dtype=np.float64))
    assert got.flags["C_CONTIGUOUS"]
    got[0, 0] = 1.5  # the caller owns it
    assert got[0, 0] == np.float32(1.5)


def test_25_ten_thousand_encodes_keep_memory_flat(model: Model) -> None:
    for _ in range(200):  # warm up allocators and the prepared encoder
        model.encode_text(["hi"])
    before = rss_kib()
    for _ in range(10_000):
        model.encode_text(["hi"])
    growth = rss_kib() - before
    assert growth < 20 * 1024, f"resident memory grew {growth} KiB over 10,000 encode calls"
