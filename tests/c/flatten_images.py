"""Flattens tests/fixtures/images/reference.json for tests/c/test_images.c, which reads no JSON.

Writes one block per entry, as tests/c/flatten_entries.py does: a line `NAME ROWS COLUMNS`, then ROWS lines: with
COLUMNS 0 each a string's UTF-8 bytes in hex ("-" when empty), else COLUMNS numbers. NAME is `model.key`
(`clip.files`, `siglip.crop_embeds`, ...); a number (`logit_scale`, `logit_bias`) is a 1 x 1 matrix. Entries that
are neither strings, numbers nor lists of them (the versions, the processor's name, the token ids) are left out.
Usage: python3 flatten_images.py REFERENCE_JSON OUT
"""

from flatten_entries import flatten, matrix, texts


def write(reference, out):
    for model in ("clip", "clip-vision", "siglip"):
        for key, value in reference[model].items():
            name = f"{model}.{key}"
            if key in ("files", "crops", "texts"):
                texts(out, name, value)
            elif key in ("logit_scale", "logit_bias"):
                matrix(out, name, [[value]])
            elif key in ("image_embeds", "crop_embeds", "text_embeds", "logits_per_image"):
                matrix(out, name, value)


flatten(write)
