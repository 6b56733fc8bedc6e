"""What images.py and families.py share: the folder a checkpoint is made in, the Rust worker (bench/src/bin/encode.rs)
over its stdin protocol, its FMA peak, the ONNX Runtime session they time it against, and the timing of a Python
callable."""

import json
import os
import shutil
import subprocess
import time


def made(folder):
    """Whether `folder` holds a checkpoint made before (its model.onnx); when not, it is emptied and made anew."""
    if os.path.exists(os.path.join(folder, "model.onnx")):
        return True
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return False


class Uform:
    """The Rust worker over its stdin protocol: one JSON command a line, one JSON answer a line.

    `argv` is the worker's command line, ending with the model folder (families.py: `[rust_bin, folder]`, images.py:
    `[rust_bin, "--images", folder]`); `env` adds to the environment, where `UFORM_BENCH_THREADS` is `threads`."""

    def __init__(self, argv, threads, env=None):
        env = dict(os.environ, UFORM_BENCH_THREADS=str(threads), **(env or {}))
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        ready = json.loads(self.process.stdout.readline())
        if "ready" not in ready:
            raise RuntimeError(f"uform unavailable on {argv[-1]}: {ready}")

    def ask(self, command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def peak(rust_bin, threads):
    """The worker's `--peak` answer: the measured FMA peak (`peak_gflops`) on `threads` threads."""
    return json.loads(subprocess.run([rust_bin, "--peak"], capture_output=True, text=True, check=True,
                                     env=dict(os.environ, UFORM_BENCH_THREADS=str(threads))).stdout.splitlines()[-1])


def ort_session(folder, threads):
    """An ONNX Runtime CPU session on `folder`/model.onnx: `threads` intra-op threads, sequential, all optimisations."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return onnxruntime.InferenceSession(os.path.join(folder, "model.onnx"), options, providers=["CPUExecutionProvider"])


def timed(run, reps):
    """The seconds of each of `reps` calls of `run`."""
    seconds = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return seconds
