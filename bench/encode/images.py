#!/usr/bin/env python3
"""The image row of issue 32 in `cargo xtask bench encode --images`: `encodeImage` against transformers (torch) and
ONNX Runtime on CLIP vision towers at ViT-B/32 and ViT-B/16 shapes, decoding and preprocessing included.

    python images.py --rust-bin BIN --out DIR [--rounds N]

For each shape, a `CLIPVisionModelWithProjection` with openai/clip-vit-base-patch32's (or -patch16's) vision
config and random weights from `from_config` (timing does not depend on the weights) is saved under DIR/<name> with
a default `CLIPImageProcessor` (shortest edge 224, bicubic, centre crop 224), then exported to ONNX (eager
attention, dynamo, opset 18) and checked against torch.

The images are the committed set (tests/fixtures/images/files: 13 files, 7 x 5 to 1000 x 480, PNG, JPEG, WebP):
batch 1 is photo.jpg (640 x 480), batch 32 the 13 files cycled. Every runtime starts from the files' bytes in
memory: UForm through the Rust worker (bench/src/bin/encode.rs `--images`, over its stdin protocol:
shared.py), the peers decoding with Pillow (`Image.open`, `ImageOps.exif_transpose` as transformers' `load_image`, `convert("RGB")`) and preprocessing with transformers' `CLIPImageProcessor`
(the Pillow backend, as `AutoImageProcessor` gives without torchvision), then torch (`get_image_features`'s
projection, `torch.inference_mode`) or ONNX Runtime. Every runtime runs on 2 threads, in interleaved rounds.

Prints a table, the embeddings' agreement between UForm and torch, how much of each runtime's batch-32 time its
decoding and preprocessing take, and one line `encode-images: b32_ort_ratio=X b16_ort_ratio=Y b32_torch_ratio=Z
b16_torch_ratio=W` of UForm's images per second over ONNX Runtime's and torch's at batch 32.
"""

import argparse
import io
import os
import statistics
import sys

import numpy as np
import onnxruntime
import torch
from PIL import Image, ImageOps
from shared import Uform, made, ort_session, timed, peak as uform_peak

THREADS = 2
SHAPES = {"vit-b-32": 32, "vit-b-16": 16}
HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "../../tests/fixtures/images/files")


def make(name, out):
    """Saves the shape's vision tower and processor under `out` (once), exported to ONNX; returns the folder."""
    import transformers

    folder = os.path.join(out, name)
    if made(folder):
        return folder
    torch.manual_seed(32)
    config = transformers.CLIPVisionConfig(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                                           num_attention_heads=12, image_size=224, patch_size=SHAPES[name],
                                           projection_dim=512, hidden_act="quick_gelu")
    model = transformers.CLIPVisionModelWithProjection(config).eval()
    model.save_pretrained(folder, safe_serialization=True)
    transformers.CLIPImageProcessor().save_pretrained(folder)
    eager = transformers.CLIPVisionModelWithProjection.from_pretrained(folder, attn_implementation="eager").eval()
    export(folder, eager)
    return folder


class Embeds(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).image_embeds


def export(folder, model):
    wrapped = Embeds(model).eval()
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapped, (torch.randn(2, 3, 224, 224),), path, input_names=["pixel_values"],
                          output_names=["image_embeds"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                          opset_version=18, dynamo=True, optimize=True)
        pixels = torch.randn(3, 3, 224, 224)
        expected = wrapped(pixels).numpy()
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    error = float(np.abs(session.run(None, {"pixel_values": pixels.numpy()})[0] - expected).max())
    assert error < 1e-3, f"{folder}: the ONNX export differs from torch by {error}"
    print(f"exported {path}, max abs difference from torch {error:.1e}", file=sys.stderr)


class Peers:
    """Pillow decoding and transformers' processor, then torch or ONNX Runtime."""

    def __init__(self, folder):
        import transformers

        self.processor = transformers.CLIPImageProcessor.from_pretrained(folder)
        self.torch = transformers.CLIPVisionModelWithProjection.from_pretrained(folder).eval()
        self.session = ort_session(folder, THREADS)

    def pixels(self, blobs):
        images = [ImageOps.exif_transpose(Image.open(io.BytesIO(b))).convert("RGB") for b in blobs]
        return self.processor(images=images, return_tensors="np")["pixel_values"]

    def run_torch(self, blobs):
        with torch.inference_mode():
            return self.torch(pixel_values=torch.from_numpy(self.pixels(blobs))).image_embeds.numpy()

    def run_ort(self, blobs):
        return self.session.run(None, {"pixel_values": self.pixels(blobs)})[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rust-bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    os.makedirs(args.out, exist_ok=True)
    names = sorted(os.listdir(FILES))
    paths = {1: [os.path.abspath(os.path.join(FILES, "photo.jpg"))]}
    paths[32] = [os.path.abspath(os.path.join(FILES, names[i % len(names)])) for i in range(32)]
    blobs = {n: [open(p, "rb").read() for p in ps] for n, ps in paths.items()}
    peak = uform_peak(args.rust_bin, THREADS)
    rows, ratios = [], {}
    for name in SHAPES:
        folder = make(name, args.out)
        peers, uform = Peers(folder), Uform([args.rust_bin, "--images", folder], THREADS)
        try:
            got = np.array(uform.ask({"images": paths[32]})["embeddings"])
            want = peers.run_torch(blobs[32])
            cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
            runs = {}
            for n in (1, 32):
                runs[f"uform {n}"] = lambda reps, n=n: uform.ask({"images": paths[n], "reps": reps})["seconds"]
                runs[f"ort {n}"] = lambda reps, n=n: timed(lambda: peers.run_ort(blobs[n]), reps)
                runs[f"torch {n}"] = lambda reps, n=n: timed(lambda: peers.run_torch(blobs[n]), reps)
            runs["uform decode 32"] = lambda reps: uform.ask({"decode": paths[32], "reps": reps})["seconds"]
            runs["pillow decode 32"] = lambda reps: timed(lambda: peers.pixels(blobs[32]), reps)
            for run in runs.values():  # warm-up
                run(1)
            medians = {k: [] for k in runs}
            for _ in range(args.rounds):
                for key, run in runs.items():
                    medians[key].append(statistics.median(run(10 if key.endswith(" 1") else 2)))
            result = {k: statistics.median(v) for k, v in medians.items()}
            ratios[name] = (result["ort 32"] / result["uform 32"], result["torch 32"] / result["uform 32"],
                            result["ort 1"] / result["uform 1"])
            rows.append((name, result, float(cos.min())))
        finally:
            uform.close()
    print(f"threads: {THREADS} per runtime; {args.rounds} interleaved rounds after one warm-up; decoding and "
          "preprocessing included (peers: Pillow and CLIPImageProcessor)")
    print(f"FMA peak: {peak['peak_gflops']:.1f} GFLOP/s measured (as bench encode's)")
    print(f"{'shape':10} {'uform b32 img/s':>16} {'ort b32':>8} {'torch b32':>10} {'uform b1 ms':>12} {'ort b1 ms':>10}"
          f" {'torch b1 ms':>12} {'uform decode':>13} {'pillow decode':>14}  min cos vs torch")
    for name, r, cos in rows:
        share = lambda decode, whole: f"{100 * r[decode] / r[whole]:.0f}%"
        print(f"{name:10} {32 / r['uform 32']:16.1f} {32 / r['ort 32']:8.1f} {32 / r['torch 32']:10.1f}"
              f" {1e3 * r['uform 1']:12.2f} {1e3 * r['ort 1']:10.2f} {1e3 * r['torch 1']:12.2f}"
              f" {share('uform decode 32', 'uform 32'):>13} {share('pillow decode 32', 'ort 32'):>14}  {cos:.6f}")
    # Batch 32's ratios, then batch 1's against ONNX Runtime (`b32_1_ort_ratio`: ViT-B/32 at batch 1).
    line = [f"b{n.split('-')[-1]}_ort_ratio={o:.2f}" for n, (o, _, _) in ratios.items()]
    line += [f"b{n.split('-')[-1]}_torch_ratio={t:.2f}" for n, (_, t, _) in ratios.items()]
    line += [f"b{n.split('-')[-1]}_1_ort_ratio={one:.2f}" for n, (_, _, one) in ratios.items()]
    print("encode-images: " + " ".join(line))


if __name__ == "__main__":
    main()
