"""Shared fixtures for the scenario suite: a fresh mesh directory per test, and the peer script's path."""

from __future__ import annotations

import os
import pathlib

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
