#!/usr/bin/env python3
"""The text families of issue 31 in `cargo xtask bench encode --families`: UForm against ONNX Runtime (and, for the
reranker, sentence-transformers' CrossEncoder) on random-weight checkpoints at the real models' shapes.

    python families.py --rust-bin BIN --model-dir MINILM_DIR --out DIR [--rounds N]

For each family, a checkpoint with the hidden size, layers, heads and intermediate size of the checkpoint named in
SPECS, random weights from `from_config` (timing does not depend on the weights), the test model's WordPiece
tokenizer (so that the workloads' texts are 128 tokens long, as in the main table) and sentence-transformers'
modules (mean pooling, normalisation, max_seq_length 128) is saved under DIR/<name>, then exported to ONNX as
export_onnx.py exports the test model (eager attention, dynamo, opset 18) and checked against torch. A reranker
(ms-marco-MiniLM-L6-v2's shape, one label, CrossEncoder's layout) is saved and exported the same way.

Every runtime runs on 2 threads, in interleaved rounds, on bench/encode/workloads.json: `long` (32 texts of 128
tokens) and `latency` (one text). UForm is the Rust worker (bench/src/bin/encode.rs, over its stdin protocol:
shared.py); ONNX Runtime runs here with `tokenizers` and numpy pooling, as worker.py's `ort` runtime does.
Prints a table, the embeddings' (or scores') agreement between UForm and ONNX Runtime, and one line
`encode-families: distilbert=X xlm-roberta=Y mpnet=Z modernbert=W rerank=R` of UForm's throughput over ONNX
Runtime's at 32 x 128 (rerank: 32 documents of 128 tokens against one query).
"""

import argparse
import json
import os
import shutil
import statistics
import sys

import numpy as np
import onnxruntime
import torch
from shared import Uform, made, ort_session, timed, peak as uform_peak

THREADS = 2
# name: (transformers config class, keyword arguments at the named checkpoint's shape, the checkpoint)
SPECS = {
    "distilbert": (
        "DistilBertConfig",
        dict(dim=768, n_layers=6, n_heads=12, hidden_dim=3072, max_position_embeddings=512),
        "msmarco-distilbert-base-v4",
    ),
    "xlm-roberta": (
        "XLMRobertaConfig",
        dict(hidden_size=384, num_hidden_layers=12, num_attention_heads=12, intermediate_size=1536,
             max_position_embeddings=514, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2),
        "multilingual-e5-small",
    ),
    "mpnet": (
        "MPNetConfig",
        dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
             max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2),
        "all-mpnet-base-v2",
    ),
    "modernbert": (
        "ModernBertConfig",
        dict(hidden_size=768, num_hidden_layers=22, num_attention_heads=12, intermediate_size=1152,
             max_position_embeddings=8192, local_attention=128, pad_token_id=0, cls_token_id=101, sep_token_id=102,
             bos_token_id=101, eos_token_id=102),
        "modernbert-embed-base",
    ),
}
RERANKER = (dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
                 max_position_embeddings=512, num_labels=1), "ms-marco-MiniLM-L6-v2")


def make(name, out, minilm):
    """Saves the family's checkpoint under `out` (once) and returns the folder."""
    import transformers
    from sentence_transformers import SentenceTransformer, models

    folder = os.path.join(out, name)
    if made(folder):
        return folder
    torch.manual_seed(31)
    kind, shape, _ = SPECS[name]
    config = getattr(transformers, kind)(vocab_size=30522, **shape)
    transformers.AutoModel.from_config(config).eval().save_pretrained(folder, safe_serialization=True)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if os.path.exists(os.path.join(minilm, f)):
            shutil.copy(os.path.join(minilm, f), folder)
    transformer = models.Transformer(folder, max_seq_length=128)
    pooling = models.Pooling(transformer.get_word_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling, models.Normalize()], device="cpu").save(folder)
    export(folder, transformers.AutoModel.from_pretrained(folder, attn_implementation="eager").eval(), "last_hidden_state")
    return folder


def make_reranker(out, minilm):
    import transformers
    from sentence_transformers import CrossEncoder

    folder = os.path.join(out, "reranker")
    if made(folder):
        return folder
    torch.manual_seed(34)
    model = transformers.BertForSequenceClassification(transformers.BertConfig(vocab_size=30522, **RERANKER[0]))
    model.eval().save_pretrained(folder, safe_serialization=True)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if os.path.exists(os.path.join(minilm, f)):
            shutil.copy(os.path.join(minilm, f), folder)
    CrossEncoder(folder, num_labels=1, max_length=128, device="cpu").save(folder)
    eager = transformers.AutoModelForSequenceClassification.from_pretrained(folder, attn_implementation="eager")
    export(folder, eager.eval(), "logits")
    return folder


class Wrapped(torch.nn.Module):
    def __init__(self, model, output, types):
        super().__init__()
        self.model, self.output, self.types = model, output, types

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        extra = {"token_type_ids": token_type_ids} if self.types else {}
        return getattr(self.model(input_ids=input_ids, attention_mask=attention_mask, **extra), self.output)


def takes_types(model):
    import inspect

    return "token_type_ids" in inspect.signature(model.forward).parameters and model.config.model_type != "distilbert"


def export(folder, model, output):
    types = takes_types(model)
    wrapped = Wrapped(model, output, types).eval()
    ids = torch.tensor([[101, 7592, 2088, 2003, 1037, 3231, 102, 0], [101, 2023, 2003, 1037, 2936, 6251, 2182, 102]])
    mask = (ids != 0).long()
    inputs = (ids, mask, torch.zeros_like(ids)) if types else (ids, mask)
    names = ["input_ids", "attention_mask", "token_type_ids"][: len(inputs)]
    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapped, inputs, path, input_names=names, output_names=[output],
                          dynamic_shapes=({0: batch, 1: sequence},) * len(inputs), opset_version=18, dynamo=True,
                          optimize=True)
        ids = torch.randint(1000, 30000, (3, 21))
        ids[:, 0], ids[:, -1], ids[2, 9:] = 101, 102, 0
        mask = (ids != 0).long()
        inputs = (ids, mask, torch.zeros_like(ids)) if types else (ids, mask)
        expected = wrapped(*inputs).numpy()
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {n: t.numpy() for n, t in zip(names, inputs)})[0]
    valid = mask.numpy().astype(bool) if output == "last_hidden_state" else slice(None)
    error = float(np.abs(got - expected)[valid].max())
    assert error < 1e-3, f"{folder}: the ONNX export differs from torch by {error}"
    print(f"exported {path}, max abs difference from torch {error:.1e}", file=sys.stderr)


class Ort:
    """ONNX Runtime with `tokenizers` and numpy pooling, as worker.py's `ort` runtime."""

    def __init__(self, folder, pairs):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=128)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.session = ort_session(folder, THREADS)
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.pairs = pairs

    def feed(self, batch):
        arrays = {
            "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in batch], dtype=np.int64),
        }
        return {k: arrays[k] for k in self.inputs}, arrays["attention_mask"]

    def encode(self, texts):
        feed, mask = self.feed(self.tokenizer.encode_batch(texts))
        hidden = self.session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def rerank(self, query, documents):
        feed, _ = self.feed(self.tokenizer.encode_batch([(query, d) for d in documents]))
        return 1.0 / (1.0 + np.exp(-self.session.run(None, feed)[0][:, 0]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rust-bin", required=True)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="these families (and `rerank`) alone")
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    here = os.path.dirname(os.path.abspath(__file__))
    workloads_path = os.path.join(here, "workloads.json")
    with open(workloads_path, encoding="utf-8") as f:
        workloads = json.load(f)
    long, latency = workloads["long"], workloads["latency"]
    os.makedirs(args.out, exist_ok=True)
    peak = uform_peak(args.rust_bin, THREADS)
    rows, ratios = [], {}
    for name in [n for n in list(SPECS) + ["rerank"] if not args.only or n in args.only]:
        try:
            folder = make_reranker(args.out, args.model_dir) if name == "rerank" else make(name, args.out, args.model_dir)
        except Exception as e:  # noqa: BLE001 - a family whose export fails is reported, not fatal
            rows.append((name, None, f"{type(e).__name__}: {e}".splitlines()[0][:200]))
            continue
        ort = Ort(folder, pairs=name == "rerank")
        uform = Uform([args.rust_bin, folder], THREADS, {"UFORM_BENCH_WORKLOADS": workloads_path})
        try:
            if name == "rerank":
                want = ort.rerank(latency[0], long)
                got = np.array(uform.ask({"rerank": "long"})["scores"])
                agree = f"max |score diff| {float(np.abs(got - want).max()):.1e}"
                from sentence_transformers import CrossEncoder

                ce = CrossEncoder(folder, device="cpu")
                pairs = [(latency[0], d) for d in long]

                def st_rerank():
                    with torch.inference_mode():
                        ce.predict(pairs, batch_size=32)

                runs = {
                    "uform": lambda reps: uform.ask({"rerank": "long", "reps": reps})["seconds"],
                    "ort": lambda reps: timed(lambda: ort.rerank(latency[0], long), reps),
                    "cross-encoder": lambda reps: timed(st_rerank, reps),
                }
            else:
                want = ort.encode(long)
                got = np.array(uform.ask({"embed": "long"})["embeddings"])
                cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
                agree = f"min cos {cos.min():.6f}"
                runs = {
                    "uform": lambda reps: uform.ask({"run": "long", "reps": reps})["seconds"],
                    "ort": lambda reps: timed(lambda: ort.encode(long), reps),
                    "uform batch 1": lambda reps: uform.ask({"run": "latency", "reps": reps})["seconds"],
                    "ort batch 1": lambda reps: timed(lambda: ort.encode(latency), reps),
                }
            for run in runs.values():  # warm-up
                run(1)
            medians = {k: [] for k in runs}
            for _ in range(args.rounds):
                for key, run in runs.items():
                    reps = 20 if "batch 1" in key else 3
                    medians[key].append(statistics.median(run(reps)))
            result = {k: statistics.median(v) for k, v in medians.items()}
            ratios[name] = result["ort"] / result["uform"]
            rows.append((name, result, agree))
        finally:
            uform.close()
    print(f"threads: {THREADS} per runtime; {args.rounds} interleaved rounds after one warm-up; tokenisation included")
    print(f"FMA peak: {peak['peak_gflops']:.1f} GFLOP/s measured (as bench encode's)")
    print(f"{'family (shape of)':42} {'uform 32x128 texts/s':>21} {'ort 32x128 texts/s':>19} {'ratio':>6}"
          f" {'uform b1 ms':>12} {'ort b1 ms':>10}  agreement")
    for name, result, agree in rows:
        shape = RERANKER[1] if name == "rerank" else SPECS[name][2]
        label = f"{name} ({shape})"
        if result is None:
            print(f"{label:42} unavailable: {agree}")
            continue
        line = f"{label:42} {32 / result['uform']:21.1f} {32 / result['ort']:19.1f} {result['ort'] / result['uform']:6.2f}"
        if "uform batch 1" in result:
            line += f" {1e3 * result['uform batch 1']:12.2f} {1e3 * result['ort batch 1']:10.2f}"
        else:
            line += f" {'':>12} {'':>10}"
        line += f"  {agree}"
        if "cross-encoder" in result:
            line += f"; CrossEncoder {32 / result['cross-encoder']:.1f} texts/s (uform {result['cross-encoder'] / result['uform']:.2f}x)"
        print(line)
    print("encode-families: " + " ".join(f"{k}={v:.2f}" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
