#!/usr/bin/env python3
"""`cargo xtask bench encode`, once the xtask has set things up: runs every runtime as a long-lived worker process,
interleaved round by round on the same texts and the same threads, and prints the table and the summary line.

    driver.py --model-dir DIR --onnx-dir DIR --rust-bin PATH [--node-dir DIR] [--uform-python PATH] [--rounds N]
              [--baseline-bin PATH]

With --baseline-bin, another build's Rust worker runs in the same rounds as the row `uform rust baseline`, and the
`encode-baseline: latency_ratio=X long_ratio=Y short_ratio=Z` line divides this build's by its (time for batch 1,
texts/s for the batches).

Issue 33's rows run in the same rounds: UForm through Rust with the model loaded at precision bf16, and ONNX Runtime
on the dynamic int8 quantisation of the eager export. The `encode-bf16: f32_ratio=X ort_int8_ratio=Y worst_cos=Z`
line divides bf16's 32 x 128 throughput by UForm fp32's and by ONNX Runtime int8's; worst_cos is the smallest cosine
between bf16's and fp32's embeddings of every workload; the retrieval line compares the top-10 neighbours of 20
queries over 200 texts (windows of the workloads' texts) under fp32 and bf16.

Standard library only (it runs in the bench venv, but needs nothing from it but `tokenizers` for a token check).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
THREADS = 2
BATCH_FLOP_NOTE = "FLOP per text: 6 layers x (2 x L x 1,769,472 for the projections + 4 x L^2 x 384 for attention)"
# Reps per turn of each workload; a round gives every runtime one turn per workload, in a rotating order.
REPS = {"latency": 25, "long": 1, "short": 4}


def text_flop(tokens):
    """Multiply-adds x 2 of one all-MiniLM-L6-v2 pass over `tokens` tokens (128 tokens: 2.87 GFLOP)."""
    hidden, ffn, layers = 384, 1536, 6
    projections = 2 * tokens * (4 * hidden * hidden + 2 * hidden * ffn)
    attention = 2 * 2 * tokens * tokens * hidden
    return layers * (projections + attention)


class Worker:
    def __init__(self, name, command, cwd, env):
        self.name, self.error, self.samples = name, None, {w: [] for w in REPS}
        started = time.time()
        self.process = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        first = self.receive()
        if first is None or "unavailable" in first:
            self.error = (first or {}).get("unavailable", "the worker exited without a word")
            self.close()
            return
        self.info = first["ready"]
        self.startup = first["first_embedding_at"] - started
        self.shape = first["shape"]

    def receive(self):
        while True:
            line = self.process.stdout.readline()
            if not line:
                return None
            if line.startswith("{"):
                return json.loads(line)
            sys.stderr.write(f"[{self.name}] {line}")

    def ask(self, command):
        self.process.stdin.write(json.dumps(command) + "\n")
        answer = self.receive()
        if answer is None:
            raise RuntimeError(f"{self.name} exited")
        return answer

    def close(self):
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = sum(x * x for x in a) ** 0.5, sum(y * y for y in b) ** 0.5
    return dot / max(na * nb, 1e-30)


def agreement(rows, reference):
    worst_cos = min(cosine(a, b) for a, b in zip(rows, reference))
    worst_abs = max(abs(x - y) for a, b in zip(rows, reference) for x, y in zip(a, b))
    return worst_cos, worst_abs


def fma_peak(rust_bin, env, flag="--peak"):
    out = subprocess.run([rust_bin, flag], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def retrieval_texts(workloads):
    """20 queries (the short sentences) and 200 texts (windows of 8 to 40 words of the long texts)."""
    queries = workloads["short"][:20]
    words = " ".join(workloads["long"]).split()
    corpus = []
    for i in range(200):
        width = 8 + (i * 7) % 33
        start = (i * 97) % (len(words) - width)
        corpus.append(" ".join(words[start : start + width]))
    return queries, corpus


def top10(queries, corpus):
    return [sorted(range(len(corpus)), key=lambda j: -cosine(q, corpus[j]))[:10] for q in queries]


def rank_agreement(a, b):
    """Mean share of each query's top 10 that both give, and the queries whose top 10 is the same in the same order."""
    shared = statistics.mean(len(set(x) & set(y)) / 10 for x, y in zip(a, b))
    return shared, sum(x == y for x, y in zip(a, b))


def cpu_ghz():
    try:
        with open("/proc/cpuinfo") as f:
            mhz = [float(line.split(":")[1]) for line in f if line.startswith("cpu MHz")]
        return max(mhz) / 1000 if mhz else None
    except OSError:
        return None


def check_tokens(model_dir, workloads):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return "token counts not checked (no tokenizers module)"
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    for name in REPS:
        counts = [len(tokenizer.encode(t).ids) for t in workloads[name]]
        assert counts == workloads["tokens"][name], f"{name}: token counts {counts} differ from workloads.json"
    return "token counts checked against tokenizer.json"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--onnx-dir", required=True)
    parser.add_argument("--rust-bin", required=True)
    parser.add_argument("--node-dir")
    parser.add_argument("--uform-python")
    parser.add_argument("--skip", action="append", default=[], help="NAME=why: a runtime not built this run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--baseline-bin", help="another build's Rust worker (bench/src/bin/encode.rs), run in the same rounds"
    )
    args = parser.parse_args()

    with open(os.path.join(HERE, "workloads.json"), encoding="utf-8") as f:
        workloads = json.load(f)
    token_note = check_tokens(args.model_dir, workloads)
    # The workers read the workloads with the retrieval set added, from the ONNX folder (the bench's own space).
    workloads["retrieval_queries"], workloads["retrieval_corpus"] = retrieval_texts(workloads)
    workloads_path = os.path.join(args.onnx_dir, "workloads-with-retrieval.json")
    with open(workloads_path, "w", encoding="utf-8") as f:
        json.dump(workloads, f)
    env = dict(os.environ, UFORM_BENCH_WORKLOADS=workloads_path, UFORM_BENCH_THREADS=str(THREADS))
    env.update(OMP_NUM_THREADS=str(THREADS), MKL_NUM_THREADS=str(THREADS), RAYON_NUM_THREADS=str(THREADS))
    env.update(TOKENIZERS_PARALLELISM="true", PYTHONUNBUFFERED="1")

    peak = fma_peak(args.rust_bin, env)
    bf16_peak = fma_peak(args.rust_bin, env, "--bf16-peak")
    worker_py = os.path.join(HERE, "worker.py")
    specs = [("uform rust", [args.rust_bin, args.model_dir], None)]
    specs.append(("uform rust bf16", [args.rust_bin, args.model_dir, "bf16"], None))
    if args.baseline_bin:
        specs.append(("uform rust baseline", [args.baseline_bin, args.model_dir], None))
    if args.node_dir:
        # Copied there by the xtask: `import('uform')` resolves from the script's folder.
        specs.append(("uform node", ["node", "worker.mjs", args.model_dir], args.node_dir))
    if args.uform_python:
        specs.append(("uform python", [args.uform_python, worker_py, "uform", args.model_dir], None))
    specs += [
        ("sentence-transformers", [sys.executable, worker_py, "torch", args.model_dir], None),
        ("ort standard", [sys.executable, worker_py, "ort", args.model_dir, f"{args.onnx_dir}/standard.onnx"], None),
        ("ort eager", [sys.executable, worker_py, "ort", args.model_dir, f"{args.onnx_dir}/eager.onnx"], None),
        ("ort int8", [sys.executable, worker_py, "ort", args.model_dir, f"{args.onnx_dir}/int8.onnx"], None),
    ]
    skipped = dict(s.split("=", 1) for s in args.skip)

    # Started one at a time, so that each start-up has the machine to itself.
    workers, missing = [], []
    for name, command, cwd in specs:
        worker = Worker(name, command, cwd, env)
        if worker.error:
            print(f"{name}: unavailable ({worker.error})", flush=True)
            missing.append(name)
        else:
            print(f"{name}: {worker.info}; process start to first embedding {worker.startup:.2f} s", flush=True)
            workers.append(worker)
    for name, why in skipped.items():
        print(f"{name}: unavailable ({why})")
        missing.append(name)

    # Agreement with sentence-transformers on every workload (a runtime that computes something else is no peer).
    torch_worker = next((w for w in workers if w.name == "sentence-transformers"), None)
    agree = {}
    if torch_worker:
        reference = {w: torch_worker.ask({"embed": w})["embeddings"] for w in REPS}
        for worker in workers:
            results = [agreement(worker.ask({"embed": w})["embeddings"], reference[w]) for w in REPS]
            agree[worker.name] = (min(r[0] for r in results), max(r[1] for r in results))

    # bf16 against fp32: every workload's embeddings, and the top-10 neighbours of the retrieval set.
    by_name = {w.name: w for w in workers}
    bf16 = {}
    if "uform rust" in by_name and "uform rust bf16" in by_name:
        f32_rows = {w: by_name["uform rust"].ask({"embed": w})["embeddings"] for w in REPS}
        bf16_rows = {w: by_name["uform rust bf16"].ask({"embed": w})["embeddings"] for w in REPS}
        bf16["worst_cos"] = min(agreement(bf16_rows[w], f32_rows[w])[0] for w in REPS)
        tops = []
        for name in ["uform rust", "uform rust bf16"]:
            queries = by_name[name].ask({"embed": "retrieval_queries"})["embeddings"]
            corpus = by_name[name].ask({"embed": "retrieval_corpus"})["embeddings"]
            tops.append(top10(queries, corpus))
        bf16["retrieval"] = rank_agreement(*tops)

    # Warm-up round (discarded), then the measured rounds, interleaved.
    for round_index in range(args.rounds + 1):
        order = workers[round_index % len(workers) :] + workers[: round_index % len(workers)] if workers else []
        for workload, reps in REPS.items():
            for worker in order:
                seconds = worker.ask({"run": workload, "reps": reps})["seconds"]
                if round_index > 0:
                    worker.samples[workload].append(seconds)
                time.sleep(0.05)  # lets spinning threads of the previous runtime go to sleep
    for worker in workers:
        worker.close()

    results = report(workers, missing, workloads, peak, agree, args.rounds, token_note)
    report_bf16(results, workloads, bf16_peak, bf16)
    if args.baseline_bin:
        report_baseline(results)


def report_baseline(results):
    """This build against the baseline build, same rounds: batch-1 time over the baseline's (below 1 is faster),
    and throughput over the baseline's (above 1 is faster)."""
    mine, base = results.get("uform rust"), results.get("uform rust baseline")
    if not (mine and base):
        print("encode-baseline: n/a (a worker did not start)")
        return
    print()
    print(
        f"encode-baseline: latency_ratio={mine[0] / base[0]:.3f} long_ratio={mine[1] / base[1]:.3f} "
        f"short_ratio={mine[2] / base[2]:.3f} (batch-1 time, then throughputs, this build over the baseline's)"
    )


def report_bf16(results, workloads, bf16_peak, bf16):
    fmt = lambda x, digits=2: f"{x:.{digits}f}" if x is not None else "n/a"  # noqa: E731
    mine, f32, int8 = (results.get(n) for n in ["uform rust bf16", "uform rust", "ort int8"])
    f32_ratio = mine[1] / f32[1] if mine and f32 else None
    int8_ratio = mine[1] / int8[1] if mine and int8 else None
    print()
    if mine and bf16_peak.get("peak_gflops"):
        flop = sum(text_flop(n) for n in workloads["tokens"]["long"])
        print(
            f"bf16 peak: {bf16_peak['peak_gflops']:.0f} GFLOP/s measured ({bf16_peak['threads']} threads of "
            f"{bf16_peak['isa']} products, FLOP over each thread's CPU time, best of 5); uform rust bf16 at 32 x 128 "
            f"reaches {flop * mine[1] / 32 / 1e9:.0f} GFLOP/s = {100 * flop * mine[1] / 32 / 1e9 / bf16_peak['peak_gflops']:.1f}% "
            f"of it; batch 1 {mine[0] * 1e3:.2f} ms against fp32's {f32[0] * 1e3:.2f} ms"
        )
    if "retrieval" in bf16:
        shared, same = bf16["retrieval"]
        print(
            f"retrieval, fp32 vs bf16: top-10 neighbours of 20 queries over 200 texts, {100 * shared:.1f}% shared on "
            f"average, {same} of 20 identical in order"
        )
    print(
        f"encode-bf16: f32_ratio={fmt(f32_ratio)} ort_int8_ratio={fmt(int8_ratio)} "
        f"worst_cos={fmt(bf16.get('worst_cos'), 5)}"
    )


def report(workers, missing, workloads, peak, agree, rounds, token_note):
    peak_gflops = peak["peak_gflops"]
    flop = {w: sum(text_flop(n) for n in workloads["tokens"][w]) for w in REPS}
    ghz = cpu_ghz()
    per_cycle = ""
    if ghz:
        per_cycle = f" = {THREADS} cores x {ghz:.2f} GHz (cpu MHz, /proc/cpuinfo) x {peak_gflops / THREADS / ghz:.1f} FLOP/cycle"
    print()
    print(f"threads: {THREADS} per runtime; {rounds} interleaved rounds after one warm-up; tokenisation included; {token_note}")
    print(
        f"FMA peak: {peak_gflops:.1f} GFLOP/s measured ({peak['threads']} threads x 16 chains of {peak['isa']} fp32 "
        f"FMA, FLOP over each thread's CPU time, best of 5){per_cycle}; by wall time {peak.get('wall_gflops', float('nan')):.1f} GFLOP/s "
        "(below the peak when other processes share the cores)"
    )
    print(f"{BATCH_FLOP_NOTE}; 32 x 128 tokens = {flop['long'] / 1e9:.2f} GFLOP ({flop['long'] / 32e9:.3f} per text)")
    tokens = {w: statistics.mean(workloads["tokens"][w]) for w in REPS}
    header = (
        f"{'runtime':<22} {'batch 1, %d tok ms' % tokens['latency']:>18} {'32 x 128 tok texts/s':>21} "
        f"{'32 x ~%d tok texts/s' % round(tokens['short']):>20} {'start→1st emb s':>15} {'min cos / max|Δ| vs s-t':>24}"
    )
    print(header)
    results = {}
    for worker in workers:
        latency = statistics.median(s for rep in worker.samples["latency"] for s in rep)
        long_s = statistics.median(min(rep) for rep in worker.samples["long"])
        short_s = statistics.median(statistics.median(rep) for rep in worker.samples["short"])
        results[worker.name] = (latency, 32 / long_s, 32 / short_s)
        share = lambda w, s: 100 * flop[w] / s / 1e9 / peak_gflops  # noqa: E731
        cos, diff = agree.get(worker.name, (float("nan"), float("nan")))
        print(
            f"{worker.name:<22} {latency * 1e3:>9.2f} ({share('latency', latency):>3.0f}%) "
            f"{32 / long_s:>12.1f} ({share('long', long_s):>3.0f}%) "
            f"{32 / short_s:>11.0f} ({share('short', short_s):>3.0f}%) {worker.startup:>15.2f} {cos:>13.6f} / {diff:.1e}"
        )
    for name in missing:
        print(f"{name:<22} unavailable")
    print("(%) = share of the FMA peak above; medians: batch 1 over all calls, the batches over rounds")

    ort = [n for n in results if n.startswith("ort ") and n != "ort int8"]  # fp32 peers; int8 is bf16's
    best_long = max(ort, key=lambda n: results[n][1]) if ort else None
    best_latency = min(ort, key=lambda n: results[n][0]) if ort else None
    uform = results.get("uform rust")
    uform_python = results.get("uform python")
    torch = results.get("sentence-transformers")
    fmt = lambda x: f"{x:.2f}" if x is not None else "n/a"  # noqa: E731
    ort_ratio = uform[1] / results[best_long][1] if uform and best_long else None
    torch_ratio = uform[1] / torch[1] if uform and torch else None
    # Like with like: UForm through Python against ONNX Runtime through Python. ONNX Runtime has no Rust or C worker
    # here, so UForm through Rust has no latency peer of its own language (rust_latency_ratio=n/a).
    latency_ratio = uform_python[0] / results[best_latency][0] if uform_python and best_latency else None
    print(f"ONNX Runtime peer: {best_long} for throughput, {best_latency} for latency (the faster export of this run)")
    print(
        "threads: uform pins its executor's worker threads to cores through hwloc (the calling thread is never "
        "pinned); sentence-transformers (torch's OpenMP pool, no OMP_PROC_BIND) and ONNX Runtime (no "
        "intra_op_thread_affinities) run unpinned"
    )
    print(
        f"encode: ort_ratio={fmt(ort_ratio)} torch_ratio={fmt(torch_ratio)} latency_ratio={fmt(latency_ratio)} "
        "rust_latency_ratio=n/a"
    )
    return results


if __name__ == "__main__":
    main()
