#!/usr/bin/env python3
"""One trainer of `cargo xtask bench train`, driven over stdin/stdout by bench/train/driver.py.

    worker.py torch MODEL_DIR PAIRS   sentence-transformers' SentenceTransformerTrainer on torch, THREADS threads
    worker.py uform MODEL_DIR PAIRS   the uform wheel: uform.Trainer.contrastive(model, dropout=0.0, ...).step(...)

Both train on the batches `batches[PAIRS]` of the driver's texts.json (UFORM_BENCH_TEXTS), in order, with the same
settings: MultipleNegativesRankingLoss with scale 20, AdamW with the trainer's defaults (lr 5e-5, no weight decay,
gradients clipped to norm 1, the linear schedule over all the batches, no warm-up), dropout off, 128 tokens.

The protocol (bench/train/README.md): after loading, the worker prints one JSON line, {"ready": INFO, "rss_bytes": N},
or {"unavailable": "<why>"} and exits. Then each line {"step": K} runs one step on batch K and answers
{"seconds": S, "loss": L, "learning_rate": LR, "peak_rss_bytes": N} (torch adds "data_seconds", the part of S spent
before its trainer's on_step_begin: fetching and tokenising the batch); end of input ends it.
"""

import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/, for uform_wheel
from uform_wheel import THREADS, load_model  # noqa: E402
MAX_TOKENS = 128
SCALE = 20.0


READY = False


def reply(message):
    global READY
    READY = READY or "ready" in message
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def commands():
    """The driver's commands, one per line; None at end of input."""
    line = sys.stdin.readline()
    return json.loads(line) if line.strip() else None


def uform_worker(model_dir, batches):
    uform, model = load_model(model_dir, needs="Trainer")
    trainer = uform.Trainer.contrastive(model, dropout=0.0, max_tokens=MAX_TOKENS, total_steps=len(batches))
    reply({"ready": f"uform {getattr(uform, '__version__', '?')} (Python)", "rss_bytes": peak_rss_bytes()})
    while (command := commands()) is not None:
        batch = batches[command["step"]]
        start = time.perf_counter()
        step = trainer.step(batch["anchors"], batch["positives"])
        seconds = time.perf_counter() - start
        reply(
            {
                "seconds": seconds,
                "loss": step.loss,
                "learning_rate": step.learning_rate,
                "peak_rss_bytes": peak_rss_bytes(),
            }
        )
    trainer.free()
    model.free()


def torch_worker(model_dir, batches):
    import tempfile

    import torch

    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(1)
    import sentence_transformers
    import transformers
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    try:
        from sentence_transformers.sentence_transformer import losses
    except ImportError:  # before sentence-transformers 6
        from sentence_transformers import losses
    from sentence_transformers.base.sampler import DefaultBatchSampler
    from torch.utils.data import SequentialSampler
    from transformers import TrainerCallback

    model = SentenceTransformer(model_dir, device="cpu")
    model.max_seq_length = MAX_TOKENS
    # Dropout off, as UForm's `dropout=0.0`: the config's probabilities and every nn.Dropout module.
    config = model[0].auto_model.config if hasattr(model[0], "auto_model") else model[0].model.config
    for key in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout"):
        if getattr(config, key, None) is not None:
            setattr(config, key, 0.0)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0

    class RecordingLoss(losses.MultipleNegativesRankingLoss):
        """The stock loss; remembers the value of its last forward (a float read, no extra work)."""

        last = None

        def compute_loss_from_embeddings(self, embeddings, labels):
            loss = super().compute_loss_from_embeddings(embeddings, labels)
            self.last = float(loss.detach())
            return loss

    class InOrderTrainer(SentenceTransformerTrainer):
        """The stock trainer, taking the batches in the order of texts.json (as the UForm workers do)."""

        def get_batch_sampler(self, dataset, batch_size, drop_last, valid_label_columns=None, generator=None, seed=0):
            return DefaultBatchSampler(
                SequentialSampler(dataset),
                batch_size=batch_size,
                drop_last=drop_last,
                valid_label_columns=valid_label_columns,
                generator=generator,
                seed=seed,
            )

    class Pacer(TrainerCallback):
        """Runs the trainer one step per command. It waits for the command at the end of the previous step (at the
        start of training for the first), so a step's time runs from the command through fetching and tokenising
        its batch (which the trainer does before on_step_begin), forward, backward, clipping, AdamW and the
        schedule, to on_step_end."""

        def __init__(self):
            self.started = self.begun = self.learning_rate = None
            self.steps = 0

        def wait(self):
            command = commands()
            if command is None:
                sys.exit(0)
            assert command["step"] == self.steps, f"steps run in order: got {command}, expected {self.steps}"
            self.started = time.perf_counter()

        def on_train_begin(self, args, state, control, **kwargs):
            self.wait()

        def on_step_begin(self, args, state, control, **kwargs):
            self.begun = time.perf_counter()

        def on_pre_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
            self.learning_rate = float(optimizer.param_groups[0]["lr"])

        def on_step_end(self, args, state, control, **kwargs):
            ended = time.perf_counter()
            reply(
                {
                    "seconds": ended - self.started,
                    "data_seconds": self.begun - self.started,
                    "loss": loss.last,
                    "learning_rate": self.learning_rate,
                    "peak_rss_bytes": peak_rss_bytes(),
                    "torch_threads": torch.get_num_threads(),
                }
            )
            self.steps += 1
            if self.steps < len(batches):
                self.wait()

    rows = [(a, p) for b in batches for a, p in zip(b["anchors"], b["positives"])]
    dataset = Dataset.from_dict({"anchor": [a for a, _ in rows], "positive": [p for _, p in rows]})
    loss = RecordingLoss(model, scale=SCALE)
    with tempfile.TemporaryDirectory() as tmp:
        args = SentenceTransformerTrainingArguments(
            output_dir=tmp,
            per_device_train_batch_size=len(batches[0]["anchors"]),
            max_steps=len(batches),
            use_cpu=True,
            save_strategy="no",
            report_to="none",
            disable_tqdm=True,
        )
        trainer = InOrderTrainer(model=model, args=args, train_dataset=dataset, loss=loss, callbacks=[Pacer()])
        info = (
            f"sentence-transformers {sentence_transformers.__version__}, transformers {transformers.__version__}, "
            f"torch {torch.__version__}, optim {args.optim.value if hasattr(args.optim, 'value') else args.optim}"
        )
        reply({"ready": info, "rss_bytes": peak_rss_bytes()})
        trainer.train()
    while commands() is not None:
        pass


def main():
    runtime, model_dir, pairs = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(os.environ["UFORM_BENCH_TEXTS"], encoding="utf-8") as f:
        batches = json.load(f)["batches"][pairs]
    try:
        if runtime == "torch":
            torch_worker(model_dir, batches)
        elif runtime == "uform":
            uform_worker(model_dir, batches)
        else:
            sys.exit(f"unknown runtime {runtime}")
    except Exception as e:  # noqa: BLE001 - a failure before "ready" makes the runtime unavailable, and says why
        if READY:
            raise
        reply({"unavailable": f"{type(e).__name__}: {e}".splitlines()[0][:300]})


if __name__ == "__main__":
    main()
