"""Shared fixtures for the scenario suite: a fresh mesh directory per test, and the peer script's path."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any, Dict

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture
def mesh_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    directory = tmp_path / "mesh"
    directory.mkdir()
    return directory


@pytest.fixture
def peer_script() -> str:
    return os.fspath(HERE / "mesh_peer.py")


def _required_env(name: str) -> pathlib.Path:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the suite through `cargo xtask test python`, which installs the test model")
    return pathlib.Path(value)


@pytest.fixture(scope="session")
def test_model_dir() -> pathlib.Path:
    """The all-MiniLM-L6-v2 folder `cargo xtask test python` names in UFORM_TEST_MODEL_DIR."""
    return _required_env("UFORM_TEST_MODEL_DIR")


@pytest.fixture(scope="session")
def tiny_model_dir() -> pathlib.Path:
    """A tiny random-weight BERT (width 32) around the test model's tokenizer, which `cargo xtask test python` writes
    and names in UFORM_TEST_TINY_MODEL_DIR: for loops that check memory rather than MiniLM's numbers."""
    return _required_env("UFORM_TEST_TINY_MODEL_DIR")


@pytest.fixture(scope="session")
def reference() -> Dict[str, Any]:
    """tests/fixtures/encode/reference.json: texts and their sentence-transformers embeddings."""
    with open(_required_env("UFORM_TEST_REFERENCE"), encoding="utf-8") as f:
        loaded: Dict[str, Any] = json.load(f)
    return loaded


@pytest.fixture(scope="session")
def train_reference() -> Dict[str, Any]:
    """tests/fixtures/train/reference.json: 20 steps of sentence-transformers' trainer on the test model."""
    with open(_required_env("UFORM_TEST_TRAIN_REFERENCE"), encoding="utf-8") as f:
        loaded: Dict[str, Any] = json.load(f)
    return loaded
