"""Trainer-across-the-mesh scenarios 30-32 of SCENARIOS.md: real Python processes (train_mesh_peer.py) on one mesh at
127.0.0.1 against the committed torch DDP fixtures (tests/fixtures/train/ddp2.json, ddp4.json, beside
UFORM_TEST_TRAIN_REFERENCE, which `cargo xtask test python` sets)."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent


def fixture_path(world: int) -> pathlib.Path:
    reference = os.environ.get("UFORM_TEST_TRAIN_REFERENCE")
    if not reference or not os.environ.get("UFORM_TEST_MODEL_DIR"):
        pytest.fail("run the suite through `cargo xtask test python`, which sets UFORM_TEST_TRAIN_REFERENCE")
    return pathlib.Path(reference).parent / f"ddp{world}.json"


def run(role: str, world: int, directory: pathlib.Path, steps: int = 0) -> List[Tuple[int, Optional[Dict[str, Any]]]]:
    """Runs `world` peers in `role`; returns each one's exit code and parsed output, in rank order."""
    fixture = os.fspath(fixture_path(4 if world == 4 else 2))
    peers = [
        subprocess.Popen(
            [sys.executable, os.fspath(HERE / "train_mesh_peer.py"), role, fixture, os.fspath(directory), "train", str(r), str(world), str(steps)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in range(world)
    ]
    results = []
    for p in peers:
        stdout, _ = p.communicate(timeout=300)
        results.append((p.returncode, json.loads(stdout) if stdout.strip() else None))
    return results


# Four ranks for their first 4 steps (the core's own suite runs all 20): what the binding adds is the same.
@pytest.mark.parametrize("world,steps", [(2, 20), (4, 4)])
def test_30_processes_on_one_mesh_reproduce_torch_ddp(world: int, steps: int, mesh_dir: pathlib.Path) -> None:
    with open(fixture_path(world), encoding="utf-8") as file:
        f: Dict[str, Any] = json.load(file)
    peers = run("fixture", world, mesh_dir, steps)
    first = peers[0][1]
    assert first is not None
    for rank, (code, out) in enumerate(peers):
        assert code == 0 and out is not None, f"rank {rank} failed"
        for k, want in enumerate(f["ranks"][rank]["loss"][:steps]):
            assert abs(out["loss"][k] - want) <= 1e-4 * abs(want), f"rank {rank}, step {k + 1}: {out['loss'][k]} vs {want}"
            assert abs(out["lr"][k] - f["lr"][k]) <= 1e-12
            assert abs(out["grad_norm"][k] - f["grad_norm"][k]) <= 1e-3 * f["grad_norm"][k]
        assert out["held_out"] == first["held_out"], f"rank {rank} ends with other weights than rank 0"
    if steps == len(f["steps"]):
        got = np.asarray(first["held_out"], dtype=np.float64)
        want = np.asarray(f["held_out_embeddings_after"], dtype=np.float64)
        cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
        assert cos.min() >= 0.9999, cos
    assert list(mesh_dir.iterdir()) == [], "the mesh directory is left empty"


def test_31_32_a_mismatched_batch_a_borrowed_mesh_and_a_killed_peer_fail_clearly(mesh_dir: pathlib.Path) -> None:
    (zero_code, zero), (one_code, one) = run("faults", 2, mesh_dir)
    assert one_code == -signal.SIGKILL and one is None, "rank 1 was to die"
    assert zero_code == 0 and zero is not None, "rank 0 failed"
    mismatch, refused, in_use, lost = zero["errors"]
    assert mismatch["code"] == "invalid_argument" and "rank 1 has 7 pairs" in mismatch["message"], mismatch
    assert refused["code"] == "invalid_argument" and "refused by rank 1" in refused["message"], refused
    assert in_use["code"] == "in_use", in_use
    assert lost["code"] in ("conflict", "timeout") and "rank 1 of the mesh is gone" in lost["message"], lost
    assert zero["failed_after_seconds"] < 35
    assert zero["embedded_rows"] == 8, "the model still embeds"
    # Rank 1 never left, but its process is gone from this machine: the last survivor removes the job directory as
    # if it had left (the mesh's rules), and nothing of the collective's store stays.
    assert list(mesh_dir.iterdir()) == [], "the mesh directory is left empty"
