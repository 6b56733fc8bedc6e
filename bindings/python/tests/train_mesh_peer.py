"""One process of a trainer across processes (scenarios 30-32), spawned by test_train_mesh.py.

Usage: python train_mesh_peer.py ROLE FIXTURE DIRECTORY JOB RANK WORLD STEPS

ROLE `fixture` trains the first STEPS steps of FIXTURE (a ddp*.json) on this rank's share and prints, as one JSON line, each
step's loss, learning rate and gradient norm and the held-out embeddings after training. ROLE `faults` steps with a
mismatched batch, with a batch rank 1 refuses, frees the mesh under the trainer, takes one good step, and then rank 1
dies (SIGKILL) while rank 0 steps again; rank 0 prints each error's code and message.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import uform


def main() -> None:
    role, fixture_path, directory, job, rank_text, world, steps = sys.argv[1:8]
    rank = int(rank_text)
    with open(fixture_path, encoding="utf-8") as file:
        f: Dict[str, Any] = json.load(file)
    c = f["config"]

    def batch(k: int) -> Tuple[List[str], List[str]]:
        pairs = [f["pairs"][i] for i in f["ranks"][rank]["local_steps"][k]]
        return [a for a, _ in pairs], [p for _, p in pairs]

    out: Dict[str, Any] = {"rank": rank, "loss": [], "lr": [], "grad_norm": [], "errors": []}

    def fails(call: Callable[[], Any]) -> None:
        try:
            call()
            out["errors"].append({"code": "none"})
        except uform.UFormError as e:
            out["errors"].append({"code": e.code, "message": str(e)})

    with uform.Executor.for_ram(threads=1) as executor, uform.Mesh.bootstrap(
        executor,
        directory=directory,
        job=job,
        host_domain_index=rank,
        host_domain_count=int(world),
        timeout_seconds=30,
    ) as mesh, uform.Model.load_ram(os.environ["UFORM_TEST_MODEL_DIR"], executor=executor) as model:
        with uform.Trainer.contrastive(
            model,
            learning_rate=float(c["learning_rate"]),
            weight_decay=float(c["weight_decay"]),
            warmup_steps=int(c["warmup_steps"]),
            total_steps=int(c["max_steps"]),
            max_grad_norm=float(c["max_grad_norm"]),
            scale=float(c["scale"]),
            dropout=0.0,
            seed=int(c["seed"]),
            mesh=mesh,
        ) as trainer:
            if role == "fixture":
                for k in range(int(steps)):
                    step = trainer.step(*batch(k))
                    out["loss"].append(step.loss)
                    out["lr"].append(step.learning_rate)
                    out["grad_norm"].append(step.gradient_norm)
                out["held_out"] = model.encode_text(f["held_out"]).tolist()
            else:
                anchors, positives = batch(0)
                n = len(anchors) - 1 if rank == 1 else len(anchors)
                fails(lambda: trainer.step(anchors[:n], positives[:n]))
                bad = list(positives)
                if rank == 1:
                    bad[0] += "\0"
                fails(lambda: trainer.step(anchors, bad))
                fails(mesh.free)
                trainer.step(anchors, positives)
                if rank == 1:
                    os.kill(os.getpid(), signal.SIGKILL)
                started = time.monotonic()
                fails(lambda: trainer.step(anchors, positives))
                out["failed_after_seconds"] = time.monotonic() - started
                out["embedded_rows"] = len(model.encode_text(anchors))
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
