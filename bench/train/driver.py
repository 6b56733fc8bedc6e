#!/usr/bin/env python3
"""`cargo xtask bench train`, once the xtask has set things up: runs each trainer as a long-lived worker process,
step by step in turns on the same batches and the same threads, replays the training fixture through the Rust worker,
and prints the table and the summary line.

    driver.py --model-dir DIR --rust-bin PATH --fixture JSON --out-dir DIR [--uform-python PATH]
              [--steps N] [--warmup W] [--skip NAME=WHY]

Needs `tokenizers` (the bench venv has it) to check that every text has at least 128 tokens.
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


def encode_driver():
    """bench/encode/driver.py, for its FMA peak and clock readers."""
    spec = importlib.util.spec_from_file_location("encode_driver", os.path.join(HERE, "..", "encode", "driver.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ENCODE = encode_driver()
cpu_ghz, fma_peak = ENCODE.cpu_ghz, ENCODE.fma_peak

THREADS = 2
TOKENS = 128
PAIRS = (16, 32)
# Texts are made at least this long (special tokens included), so truncation at TOKENS leaves exactly TOKENS.
MIN_TOKENS = TOKENS + 8

# Words for the texts: each topic's nouns, shared verbs, adjectives and phrases; sentences drawn by a fixed LCG.
TOPICS = [
    ["river", "bridge", "valley", "flood", "delta", "canyon", "stream", "dam"],
    ["compiler", "loop", "register", "parser", "kernel", "cache", "thread", "function"],
    ["market", "baker", "cheese", "stall", "fountain", "square", "farmer", "apple"],
    ["runner", "marathon", "muscle", "interval", "race", "coach", "shoe", "track"],
    ["planet", "comet", "telescope", "orbit", "moon", "galaxy", "star", "rocket"],
    ["garden", "tomato", "hedge", "seed", "rose", "shovel", "greenhouse", "beetle"],
    ["orchestra", "violin", "conductor", "symphony", "choir", "trumpet", "concert", "score"],
    ["hospital", "nurse", "patient", "doctor", "clinic", "vaccine", "ward", "surgeon"],
]
ADJECTIVES = ["old", "quiet", "busy", "small", "famous", "distant", "careful", "bright", "heavy", "modern", "narrow"]
VERBS = ["watched", "followed", "changed", "described", "repaired", "measured", "crossed", "visited", "praised"]
PHRASES = [
    "early in the morning",
    "after a long winter",
    "for the first time in years",
    "while the town was asleep",
    "despite the heavy rain",
    "with surprising patience",
    "before anyone noticed",
    "during the summer festival",
]


class Lcg:
    """A fixed generator (Knuth's MMIX constants), so the texts never depend on Python's `random`."""

    def __init__(self, seed):
        self.state = (seed * 2862933555777941757 + 3037000493) % 2**64

    def pick(self, words):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return words[(self.state >> 33) % len(words)]


def make_text(tokenizer, topic, seed):
    """English-like sentences about `topic` until the text has at least MIN_TOKENS tokens."""
    rng, nouns, sentences = Lcg(seed), TOPICS[topic], []
    while True:
        a, v, b, p = rng.pick(ADJECTIVES), rng.pick(VERBS), rng.pick(nouns), rng.pick(PHRASES)
        sentences.append(f"The {a} {rng.pick(nouns)} {v} the {b} {p}, and the {rng.pick(nouns)} stayed {rng.pick(ADJECTIVES)}.")
        text = " ".join(sentences)
        if len(tokenizer.encode(text).ids) >= MIN_TOKENS:
            return text


def make_texts(model_dir, batches, path):
    """texts.json: for each batch size, `batches` steps of anchors and positives (pair i of step k about topic
    (k·pairs + i) mod 8; anchor and positive differ), every text at least MIN_TOKENS tokens before truncation."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    out = {"about": "texts for cargo xtask bench train, made by bench/train/driver.py", "batches": {}}
    counts = []
    for pairs in PAIRS:
        steps = []
        for k in range(batches):
            ids = [k * pairs + i for i in range(pairs)]
            anchors = [make_text(tokenizer, g % len(TOPICS), 2 * g) for g in ids]
            positives = [make_text(tokenizer, g % len(TOPICS), 2 * g + 1) for g in ids]
            counts += [len(tokenizer.encode(t).ids) for t in anchors + positives]
            steps.append({"anchors": anchors, "positives": positives})
        out["batches"][str(pairs)] = steps
    assert min(counts) >= MIN_TOKENS
    out["tokens_before_truncation"] = [min(counts), max(counts)]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    return min(counts), max(counts)


def step_flop(config, pairs, tokens=TOKENS):
    """FLOP of one training step: 3 forward passes (forward, and backward at twice its cost) over 2·pairs texts;
    a forward pass per text and layer is 2·tokens·(matmul parameters) + 4·tokens²·hidden for attention."""
    hidden, ffn, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    per_text = layers * (2 * tokens * (4 * hidden * hidden + 2 * hidden * ffn) + 4 * tokens * tokens * hidden)
    return 3 * 2 * pairs * per_text


class Worker:
    def __init__(self, name, command, env):
        self.name, self.error, self.steps = name, None, []
        self.process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        first = self.receive()
        if first is None or "unavailable" in first:
            self.error = (first or {}).get("unavailable", "the worker exited without a word")
            self.close()
            return
        self.info, self.loaded_rss = first["ready"], first["rss_bytes"]

    # The next JSON line the worker writes (None at its end), its other lines passed on to stderr: as the encode
    # driver's workers read theirs.
    receive = ENCODE.Worker.receive

    def step(self, k):
        self.process.stdin.write(json.dumps({"step": k}) + "\n")
        self.process.stdin.flush()
        answer = self.receive()
        if answer is None:
            raise RuntimeError(f"{self.name} exited at step {k}")
        self.steps.append(answer)

    def close(self):
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        self.process.wait(timeout=120)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--rust-bin", required=True)
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--uform-python")
    parser.add_argument("--skip", action="append", default=[], help="NAME=why: a trainer not built this run")
    parser.add_argument("--steps", type=int, default=5, help="measured steps per trainer and batch size")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up steps before them, not measured")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        sys.exit("--steps must be at least 1 and --warmup at least 0")

    texts_path = os.path.join(args.out_dir, "texts.json")
    total = args.warmup + args.steps
    shortest, longest = make_texts(args.model_dir, total, texts_path)
    with open(os.path.join(args.model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    env = dict(os.environ, UFORM_BENCH_TEXTS=texts_path, UFORM_BENCH_THREADS=str(THREADS))
    env.update(OMP_NUM_THREADS=str(THREADS), MKL_NUM_THREADS=str(THREADS), RAYON_NUM_THREADS=str(THREADS))
    env.update(TOKENIZERS_PARALLELISM="true", PYTHONUNBUFFERED="1")

    peak = fma_peak(args.rust_bin, env)
    worker_py = os.path.join(HERE, "worker.py")
    skipped = dict(s.split("=", 1) for s in args.skip)
    results, missing = {}, dict(skipped)
    for pairs in PAIRS:
        specs = [("uform rust", [args.rust_bin, args.model_dir, str(pairs)])]
        if args.uform_python:
            specs.append(("uform python", [args.uform_python, worker_py, "uform", args.model_dir, str(pairs)]))
        specs.append(("sentence-transformers", [sys.executable, worker_py, "torch", args.model_dir, str(pairs)]))
        # Started one at a time; then every trainer runs step k before any runs step k+1, the order rotating, so
        # that each step has the 2 cores to itself and drifts in the machine's speed touch every trainer alike.
        workers = []
        for name, command in specs:
            worker = Worker(name, command, env)
            if worker.error:
                missing[name] = worker.error
            else:
                print(f"{name} ({pairs} pairs): {worker.info}", flush=True)
                workers.append(worker)
        for k in range(total):
            for worker in workers[k % len(workers) :] + workers[: k % len(workers)]:
                worker.step(k)
                time.sleep(0.05)  # lets spinning threads of the previous trainer go to sleep
        for worker in workers:
            worker.close()
            results[(worker.name, pairs)] = worker
        print(f"batch of {pairs} pairs done", flush=True)

    fixture = subprocess.run(
        [args.rust_bin, "--fixture", args.fixture, args.model_dir], env=env, capture_output=True, text=True, check=True
    )
    replay = json.loads(fixture.stdout.strip().splitlines()[-1])
    report(results, missing, peak, config, args, replay, (shortest, longest))


def report(results, missing, peak, config, args, replay, token_range):
    peak_gflops = peak["peak_gflops"]
    ghz = cpu_ghz()
    per_cycle = ""
    if ghz:
        per_cycle = f" = {THREADS} cores x {ghz:.2f} GHz (cpu MHz, /proc/cpuinfo) x {peak_gflops / THREADS / ghz:.1f} FLOP/cycle"
    names = sorted({name for name, _ in results}, key=["uform rust", "uform python", "sentence-transformers"].index)
    print()
    print(
        f"threads: {THREADS} per trainer; median of {args.steps} steps after {args.warmup} warm-up steps, the trainers "
        f"taking turns step by step on the same batches; texts of {token_range[0]}-{token_range[1]} tokens truncated "
        f"to {TOKENS} on both sides; tokenisation included"
    )
    print(
        f"FMA peak: {peak_gflops:.1f} GFLOP/s measured ({peak['threads']} threads x 16 chains of {peak['isa']} fp32 "
        f"FMA, FLOP over each thread's CPU time, best of 5){per_cycle}; by wall time {peak['wall_gflops']:.1f} GFLOP/s"
    )
    print(
        f"FLOP per step: 3 forward passes over 2 x pairs texts of {TOKENS} tokens; forward per text = "
        f"{config['num_hidden_layers']} layers x (2 x {TOKENS} x matmul params + 4 x {TOKENS}^2 x {config['hidden_size']}) "
        + ", ".join(f"{p} pairs: {step_flop(config, p) / 1e9:.0f} GFLOP" for p in PAIRS)
    )
    print(
        f"{'trainer':<22} {'pairs':>5} {'step s':>8} {'(data s)':>8} {'pairs/s':>8} {'FMA peak':>8} "
        f"{'peak RSS MiB':>12} {'loaded MiB':>10} {'loss vs s-t':>11}"
    )
    medians = {}
    for pairs in PAIRS:
        reference = results.get(("sentence-transformers", pairs))
        for name in names:
            worker = results.get((name, pairs))
            if worker is None:
                continue
            measured = worker.steps[args.warmup :]
            step_s = statistics.median(s["seconds"] for s in measured)
            medians[(name, pairs)] = step_s
            data = [s["data_seconds"] for s in measured if "data_seconds" in s]
            data_s = f"({statistics.median(data):.3f})" if data else ""
            share = 100 * step_flop(config, pairs) / step_s / 1e9 / peak_gflops
            rss = max(s["peak_rss_bytes"] for s in worker.steps) / 2**20
            diff = "-"
            if reference and reference is not worker:
                rel = max(abs(a["loss"] - b["loss"]) / abs(b["loss"]) for a, b in zip(worker.steps, reference.steps))
                diff = f"{rel:.1e}"
            print(
                f"{name:<22} {pairs:>5} {step_s:>8.3f} {data_s:>8} {pairs / step_s:>8.2f} {share:>7.0f}% "
                f"{rss:>12.0f} {worker.loaded_rss / 2**20:>10.0f} {diff:>11}"
            )
    for name, why in missing.items():
        print(f"{name:<22} unavailable ({why})")
    print(
        "step s: median wall time of one step (UForm: around Trainer.step; sentence-transformers: from the command "
        "through the trainer fetching and tokenising the batch, in (data s), to on_step_end); FMA peak: FLOP per "
        "step over step time over the peak above; peak RSS: the process's, loaded: after loading, before the first "
        "step; loss vs s-t: largest relative difference of the per-step losses from sentence-transformers' on the "
        "same batches"
    )
    print(
        f"fixture: {replay['steps']} steps of tests/fixtures/train/reference.json through the Rust worker, largest "
        f"relative loss difference from sentence-transformers' {replay['loss_max_rel_diff']:.2e}"
    )
    uform, torch = medians.get(("uform rust", 32)), medians.get(("sentence-transformers", 32))
    ratio = f"{torch / uform:.2f}" if uform and torch else "n/a"
    print(f"train: torch_ratio={ratio} loss_max_rel_diff={replay['loss_max_rel_diff']:.2e}")


if __name__ == "__main__":
    main()
