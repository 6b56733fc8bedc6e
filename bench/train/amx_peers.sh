#!/usr/bin/env bash
# bench/train/amx_peers.sh: the AMX probe (amx_bf16x3.c) beside its two peers, in one run, one thread each:
# the fp32 FMA peak (the bench worker's `--peak`) and torch's fp32 `mm` (MKL) on the same shapes. Run from the
# repository root after `cargo xtask bench train` has built target/release/train and target/bench-venv.
set -euo pipefail
shapes=("4096 384 1536" "4096 1536 384" "384 4096 1536")
gcc -O2 -march=sapphirerapids bench/train/amx_bf16x3.c -o target/amx_bf16x3 -lm
echo "fp32 FMA peak, 1 thread: $(UFORM_BENCH_THREADS=1 target/release/train --peak)"
for shape in "${shapes[@]}"; do target/amx_bf16x3 $shape; done
target/bench-venv/bin/python - "${shapes[@]}" <<'PY'
import sys, time
import torch
torch.set_num_threads(1)
for shape in sys.argv[1:]:
    m, k, n = map(int, shape.split())
    a, b = torch.randn(m, k), torch.randn(k, n)
    for _ in range(3):
        torch.mm(a, b)
    times = []
    for _ in range(10):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    best = min(times)
    print(f"torch fp32 mm M={m} K={k} N={n}: {best * 1e3:.1f} ms {2 * m * k * n / best / 1e9:.1f} GFLOP/s")
PY
