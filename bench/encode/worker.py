#!/usr/bin/env python3
"""One runtime of `cargo xtask bench encode`, driven over stdin/stdout by bench/encode/driver.py.

    worker.py torch MODEL_DIR          sentence-transformers on torch, torch.set_num_threads(THREADS)
    worker.py ort MODEL_DIR ONNX_FILE  ONNX Runtime (intra_op THREADS) + `tokenizers` + mean pooling in numpy
    worker.py uform MODEL_DIR          the uform wheel: Model.load_ram(dir, executor=...), model.encode_text(texts)

The protocol (bench/encode/README.md): after loading, the worker embeds the latency sentence once and prints one JSON
line, {"ready": ..., "first_embedding_at": <time.time()>}, or {"unavailable": "<why>"} and exits. Then, for each
line {"run": WORKLOAD, "reps": N} it encodes that workload's texts N times (tokenisation included) and answers
{"seconds": [...]}; {"embed": WORKLOAD} answers {"embeddings": [[...], ...]}; end of input ends it.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/, for uform_wheel
from uform_wheel import THREADS, load_model  # noqa: E402


def reply(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def torch_runtime(model_dir):
    import torch

    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(1)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    model.eval()

    def encode(texts):
        with torch.inference_mode():
            return model.encode(texts, batch_size=32, convert_to_numpy=True)

    info = f"sentence-transformers {__import__('sentence_transformers').__version__}, torch {torch.__version__}"
    return encode, info


def ort_runtime(model_dir, onnx_file):
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    with open(os.path.join(model_dir, "sentence_bert_config.json")) as f:
        max_length = json.load(f)["max_seq_length"]
    tokenizer = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    # As sentence-transformers does: its max_seq_length, padding to the longest text of the batch.
    tokenizer.enable_truncation(max_length=max_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = onnxruntime.InferenceSession(onnx_file, options, providers=["CPUExecutionProvider"])

    def encode(texts):
        batch = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in batch], dtype=np.int64)
        mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
        types = np.array([e.type_ids for e in batch], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    return encode, f"onnxruntime {onnxruntime.__version__}, {os.path.basename(onnx_file)}"


def uform_runtime(model_dir):
    uform, model = load_model(model_dir, needs="Model")

    def encode(texts):
        return model.encode_text(texts)

    return encode, f"uform {getattr(uform, '__version__', '?')} (Python)"


def main():
    runtime, model_dir = sys.argv[1], sys.argv[2]
    with open(os.environ["UFORM_BENCH_WORKLOADS"], encoding="utf-8") as f:
        workloads = json.load(f)
    try:
        if runtime == "torch":
            encode, info = torch_runtime(model_dir)
        elif runtime == "ort":
            encode, info = ort_runtime(model_dir, sys.argv[3])
        elif runtime == "uform":
            encode, info = uform_runtime(model_dir)
        else:
            sys.exit(f"unknown runtime {runtime}")
        first = encode(workloads["latency"])
        first_at = time.time()
        rows, columns = len(first), len(first[0])
    except Exception as e:  # noqa: BLE001 - any failure makes the runtime unavailable, and says why
        reply({"unavailable": f"{type(e).__name__}: {e}".splitlines()[0][:300]})
        return
    reply({"ready": info, "first_embedding_at": first_at, "shape": [rows, columns]})
    for line in sys.stdin:
        command = json.loads(line)
        if "run" in command:
            texts = workloads[command["run"]]
            seconds = []
            for _ in range(command["reps"]):
                start = time.perf_counter()
                encode(texts)
                seconds.append(time.perf_counter() - start)
            reply({"seconds": seconds})
        elif "embed" in command:
            reply({"embeddings": [[float(x) for x in row] for row in encode(workloads[command["embed"]])]})


if __name__ == "__main__":
    main()
