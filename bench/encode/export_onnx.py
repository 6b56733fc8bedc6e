#!/usr/bin/env python3
"""Exports the BERT encoder of a sentence-transformers model to ONNX twice, for `cargo xtask bench encode`.

    python export_onnx.py MODEL_DIR OUT_DIR   ->  OUT_DIR/standard.onnx, OUT_DIR/eager.onnx, OUT_DIR/int8.onnx

- `standard`: transformers' default attention (`sdpa`, PyTorch's scaled_dot_product_attention), as an export with
  default settings gives;
- `eager`: `attn_implementation="eager"` (explicit matmul, mask add, softmax, matmul).
Inputs input_ids, attention_mask, token_type_ids (int64, dynamic batch and sequence); output last_hidden_state.
Pooling and normalisation stay outside the graph (the runner does them in numpy, as it does tokenisation).
Both go through torch.onnx.export's TorchScript exporter (dynamo=False), opset 17; each file is checked against
torch on one batch before it is kept.
- `int8`: ONNX Runtime's dynamic int8 quantisation of `eager` (`quantize_dynamic`, signed int8 weights per
  channel, activations quantised per call), the kind of file a fastembed user gets; checked against torch at cosine
  >= 0.97 (it reaches about 0.989: the peer trades accuracy for speed).
"""

import os
import sys

import numpy as np
import onnxruntime
import torch
from transformers import AutoModel


class Encoder(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state


def export(model_dir, path, attention):
    bert = AutoModel.from_pretrained(model_dir, attn_implementation=attention).eval()
    model = Encoder(bert)
    ids = torch.tensor([[101, 7592, 2088, 2003, 1037, 3231, 102, 0], [101, 2023, 2003, 1037, 2936, 6251, 2182, 102]])
    mask = (ids != 0).long()
    types = torch.zeros_like(ids)
    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
    with torch.no_grad():
        torch.onnx.export(
            model,
            (ids, mask, types),
            path,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_shapes=({0: batch, 1: sequence},) * 3,
            opset_version=18,
            dynamo=True,
            optimize=True,
        )
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    # Another batch size and sequence length than the traced ones: the axes must really be dynamic.
    ids = torch.randint(1000, 30000, (3, 21))
    ids[:, 0], ids[:, -1], ids[2, 9:] = 101, 102, 0
    mask = (ids != 0).long()
    types = torch.zeros_like(ids)
    with torch.no_grad():
        expected = model(ids, mask, types).numpy()
    feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": types.numpy()}
    got = session.run(None, feed)[0]
    valid = mask.numpy().astype(bool)
    error = float(np.abs(got - expected)[valid].max())
    assert error < 1e-4, f"{attention} export differs from torch by {error}"
    print(f"exported {path} ({attention} attention), max abs difference from torch {error:.2e}")


def quantize(model_dir, out):
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoTokenizer

    path, checking = os.path.join(out, "int8.onnx"), os.path.join(out, "int8.unchecked.onnx")
    # Per-channel weights, as Optimum's AVX512-VNNI dynamic configuration (the quantised files fastembed serves);
    # per-tensor weights lose more (cosine 0.956 against 0.989 on the sentences below).
    quantize_dynamic(os.path.join(out, "eager.onnx"), checking, weight_type=QuantType.QInt8, per_channel=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    bert = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    texts = ["A man is eating food.", "The new movie is awesome.", "Where is the nearest train station?"]
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    mask = batch["attention_mask"].unsqueeze(-1).numpy()
    with torch.no_grad():
        hidden = bert(**batch).last_hidden_state.numpy()
    session = onnxruntime.InferenceSession(checking, providers=["CPUExecutionProvider"])
    got = session.run(None, {k: v.numpy() for k, v in batch.items()})[0]
    pool = lambda h: (h * mask).sum(1) / mask.sum(1)  # noqa: E731
    expected, got = pool(hidden), pool(got)
    cos = (got * expected).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(expected, axis=1)
    assert cos.min() >= 0.97, f"int8 export at cosine {cos.min()} with torch"
    os.replace(checking, path)  # kept only once checked
    print(f"quantised {path} (dynamic int8, per channel), worst cosine of mean-pooled rows with torch {cos.min():.5f}")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: export_onnx.py MODEL_DIR OUT_DIR")
    model_dir, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    export(model_dir, os.path.join(out, "standard.onnx"), "sdpa")
    export(model_dir, os.path.join(out, "eager.onnx"), "eager")
    quantize(model_dir, out)


if __name__ == "__main__":
    main()
