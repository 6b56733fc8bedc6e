#!/usr/bin/env python3
"""`cargo xtask bench train --mesh`: the trainer across processes against torch's DistributedDataParallel, in one run.

    mesh.py --model-dir DIR --rust-bin PATH --out-dir DIR [--steps N] [--warmup W]

Both sides run 2 processes with 1 thread each on this machine, meeting at 127.0.0.1, and train the same model on the
same batches: the driver's texts (bench/train/driver.py, every text truncated to exactly 128 tokens), 32 pairs a
step, each rank stepping on its contiguous 16. The settings are the trainer's defaults on both sides:
MultipleNegativesRankingLoss with scale 20 over each rank's own pairs, AdamW (lr 5e-5, betas 0.9/0.999, eps 1e-8, no
weight decay), gradients averaged across the ranks and clipped to norm 1, the linear schedule over all the steps,
dropout off.

- torch: `python -m torch.distributed.run --nproc_per_node=2`, gloo, one torch thread per process, the model's
  transformer wrapped in DistributedDataParallel (with find_unused_parameters when it has BERT's pooler, whose
  output the loss never reaches, as the stock trainer needs it), one forward pass over a rank's anchors and positives
  together with mean pooling, backward (DDP all-reduces its buckets while backward runs), clipping, AdamW, the
  schedule; each step timed from a barrier to the end of the update, tokenisation included.
- UForm: two processes of the Rust worker (`train --mesh`, bench/src/bin/train.rs) on one mesh; each step timed
  around `Trainer.step` (tokenisation included; its agreement across the ranks is the barrier), with the seconds it
  spent in collectives: the all-reduce, a layer at a time on a thread of its own while backward runs, and how long
  the step then waited for it. Overlap is the all-reduce's share that did not make the step wait (its seconds
  include waiting for the slower rank to reach the same layer).

Prints a table (median step seconds over the measured steps, the slower rank's, and their range), the share of the
machine's FMA peak (measured in the same run), and `train-mesh: ddp_ratio=X loss_max_rel_diff=Y`: torch DDP's median
step time over UForm's, and the largest relative difference between the two sides' losses, any rank, any step.
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 2
PAIRS = 32
TOKENS = 128


def driver():
    spec = importlib.util.spec_from_file_location("train_driver", os.path.join(HERE, "driver.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_rank(model_dir, texts_path, steps, out_path):
    """One torchrun rank: DDP training on this rank's share of each batch; writes its timings and losses."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    model = SentenceTransformer(model_dir, device="cpu")
    model.max_seq_length = TOKENS
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    model.train()
    # DDP wraps the transformer itself (`model[0]`'s Hugging Face model); mean pooling follows by hand, as the
    # checkpoint's Pooling module does (its Normalize changes no cosine).
    # BERT's pooler gets no gradient from the loss: DDP must be told (find_unused_parameters), as the stock trainer is.
    transformer = model[0].auto_model if hasattr(model[0], "auto_model") else model[0].model
    unused = [n for n in ("pooler.dense.weight", "pooler.dense.bias") if n in dict(transformer.named_parameters())]
    ddp = torch.nn.parallel.DistributedDataParallel(transformer, find_unused_parameters=bool(unused))
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda done: max(0.0, (steps - done) / steps))
    with open(texts_path, encoding="utf-8") as f:
        batches = json.load(f)["batches"][str(PAIRS)][:steps]
    seconds, losses = [], []
    for batch in batches:
        share = PAIRS // world
        anchors = batch["anchors"][rank * share : (rank + 1) * share]
        positives = batch["positives"][rank * share : (rank + 1) * share]
        dist.barrier()
        start = time.perf_counter()
        features = model.tokenize(anchors + positives)
        inputs = {k: v for k, v in features.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        hidden = ddp(**inputs).last_hidden_state
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        embeddings = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        a, p = embeddings[:share], embeddings[share:]
        scores = 20.0 * F.normalize(a, dim=1) @ F.normalize(p, dim=1).T
        loss = F.cross_entropy(scores, torch.arange(share))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        seconds.append(time.perf_counter() - start)
        losses.append(float(loss.detach()))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"rank": rank, "seconds": seconds, "loss": losses, "torch": torch.__version__}, f)
    dist.destroy_process_group()


def run_torch(model_dir, texts_path, steps, out_dir, env):
    outs = [os.path.join(out_dir, f"torch-rank{r}.json") for r in range(WORLD)]
    for path in outs:
        if os.path.exists(path):
            os.remove(path)
    command = [
        sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={WORLD}", "--master_addr=127.0.0.1",
        "--master_port=29531", __file__, "torch-rank", model_dir, texts_path, str(steps), os.path.join(out_dir, "torch-rank{rank}.json"),
    ]
    subprocess.run(command, env=env, check=True)
    return [json.load(open(path, encoding="utf-8")) for path in outs]


def run_uform(rust_bin, model_dir, steps, out_dir, env):
    mesh_dir = os.path.join(out_dir, "mesh")
    os.makedirs(mesh_dir, exist_ok=True)
    ranks = [
        subprocess.Popen([rust_bin, "--mesh", str(r), str(WORLD), mesh_dir, str(steps), model_dir], env=env, stdout=subprocess.PIPE, text=True)
        for r in range(WORLD)
    ]
    results = []
    for p in ranks:
        stdout, _ = p.communicate(timeout=1800)
        if p.returncode != 0:
            sys.exit(f"a UForm rank failed with {p.returncode}")
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    return results


def slowest(results, warmup):
    """Per measured step, the slower rank's seconds."""
    return [max(r["seconds"][k] for r in results) for k in range(warmup, len(results[0]["seconds"]))]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "torch-rank":
        model_dir, texts_path, steps, out = sys.argv[2:6]
        return torch_rank(model_dir, texts_path, int(steps), out.replace("{rank}", os.environ["RANK"]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--rust-bin", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--steps", type=int, default=4, help="measured steps")
    parser.add_argument("--warmup", type=int, default=1, help="steps before them, not measured")
    args = parser.parse_args()
    d = driver()
    total = args.steps + args.warmup
    texts_path = os.path.join(args.out_dir, "texts.json")
    d.make_texts(args.model_dir, total, texts_path)
    with open(os.path.join(args.model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    env = dict(os.environ, UFORM_BENCH_TEXTS=texts_path, UFORM_BENCH_THREADS="1", OMP_NUM_THREADS="1")
    env.update(MKL_NUM_THREADS="1", RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
    peak = d.fma_peak(args.rust_bin, dict(env, UFORM_BENCH_THREADS="2"))
    # UForm, torch, UForm again: drifts in the machine's speed touch both sides.
    first = run_uform(args.rust_bin, args.model_dir, total, args.out_dir, env)
    torch_results = run_torch(args.model_dir, texts_path, total, args.out_dir, env)
    second = run_uform(args.rust_bin, args.model_dir, total, args.out_dir, env)
    torch_steps = slowest(torch_results, args.warmup)
    uform_steps = slowest(first, args.warmup) + slowest(second, args.warmup)
    def measured(key):
        return [c for r in first + second for c in r[key][args.warmup:]]

    collective, all_reduce, waited = (measured(k) for k in ("collective_seconds", "all_reduce_seconds", "waited_seconds"))
    worst = max(
        abs(u - t) / abs(t)
        for side in (first, second)
        for ur, tr in zip(side, torch_results)
        for u, t in zip(ur["loss"], tr["loss"])
    )
    flop = d.step_flop(config, PAIRS, TOKENS)
    peak_flops = peak.get("gflops", peak.get("peak_gflops", 0.0)) * 1e9 if isinstance(peak, dict) else 0.0
    print(f"\ntrain across 2 processes x 1 thread, {PAIRS} pairs a step (16 per rank), {TOKENS} tokens; {args.warmup} warm-up + {args.steps} measured steps")
    print(f"FMA peak of this machine, 2 threads, this run: {peak}")
    print("| trainer | median step s | range s | share of FMA peak |")
    print("|---|---|---|---|")
    for name, steps in (("torch DDP (gloo)", torch_steps), ("UForm mesh (gloo)", uform_steps)):
        median = statistics.median(steps)
        share = f"{flop / median / peak_flops:.1%}" if peak_flops else "?"
        print(f"| {name} | {median:.3f} | {min(steps):.3f}-{max(steps):.3f} | {share} |")
    median_collective = statistics.median(collective)
    overlap = 1 - sum(waited) / sum(all_reduce) if sum(all_reduce) > 0 else 0.0
    print(f"UForm seconds in collectives per step (agreement + the gradients' all-reduce, layer by layer during the "
          f"backward pass): median {median_collective:.3f} ({median_collective / statistics.median(uform_steps):.1%} "
          f"of the step); all-reduce median {statistics.median(all_reduce):.3f} s, of which the step waited for "
          f"{statistics.median(waited):.3f} s after its backward pass: overlap {overlap:.0%}")
    ratio = statistics.median(torch_steps) / statistics.median(uform_steps)
    print(f"train-mesh: ddp_ratio={ratio:.2f} loss_max_rel_diff={worst:.2e}")


if __name__ == "__main__":
    main()
