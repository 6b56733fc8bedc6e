"""Images, scenarios 36–38 of SCENARIOS.md (issue 32): the random-weight CLIP, CLIP vision-only and SigLIP
checkpoints of tests/fixtures/images, found beside UFORM_TEST_REFERENCE (../images), against transformers'
embeddings of the committed files, of the processor's own crops (the same pixels), and its image × text logits.
`cargo xtask test python` sets UFORM_TEST_REFERENCE."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterator, List, Tuple, Union

import numpy as np
import pytest

import uform
from uform import Executor, Model, Precision

Images = Tuple[pathlib.Path, Dict[str, Any]]


@pytest.fixture(scope="module")
def images() -> Images:
    value = os.environ.get("UFORM_TEST_REFERENCE")
    if not value:
        pytest.fail("UFORM_TEST_REFERENCE is not set: run the suite through `cargo xtask test python`")
    root = pathlib.Path(value).parent.parent / "images"
    return root, json.loads((root / "reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def executor() -> Iterator[Executor]:
    with Executor.for_ram(threads=2) as ex:
        yield ex


def read(root: pathlib.Path, folder: str, names: List[str]) -> List[bytes]:
    return [(root / folder / name).read_bytes() for name in names]


def worst_cosine(got: np.ndarray[Any, Any], want: List[List[float]]) -> Tuple[float, int]:
    """The worst cosine between `got`'s rows and `want`'s, row by row, and the row it was found at."""
    w = np.array(want, dtype=np.float64)
    assert got.shape == w.shape, (got.shape, w.shape)
    g = got.astype(np.float64)
    cosines = (g * w).sum(axis=1) / np.linalg.norm(g, axis=1) / np.linalg.norm(w, axis=1)
    at = int(np.argmin(cosines))
    return float(cosines[at]), at


@pytest.mark.parametrize("name", ["clip", "clip-vision", "siglip"])
def test_36_every_checkpoint_embeds_the_files_and_the_crops_as_transformers(
    images: Images, executor: Executor, name: str
) -> None:
    root, reference = images
    entry = reference[name]
    with Model.load_ram(root / name, executor=executor) as model:
        files = read(root, "files", entry["files"])
        raw = model.encode_image(files, normalize=False)
        assert isinstance(raw, np.ndarray) and raw.dtype == np.float32 and raw.shape[0] == len(files)
        cosine, at = worst_cosine(raw, entry["image_embeds"])
        assert cosine >= 0.999, f"{name}: files[{at}] ({entry['files'][at]}) at cosine {cosine}"
        norms = np.linalg.norm(raw.astype(np.float64), axis=1)
        assert np.abs(norms - 1).max() > 1e-3, f"{name}: normalize=False gave unit rows"
        # Normalised by default: raw / |raw|, one row per image in input order.
        normalised = model.encode_image(files)
        np.testing.assert_allclose(np.linalg.norm(normalised.astype(np.float64), axis=1), 1.0, rtol=0, atol=1e-5)
        np.testing.assert_allclose(normalised, raw / norms[:, None], rtol=0, atol=1e-5)
        np.testing.assert_array_equal(model.encode_image(files, normalize=True), normalised)
        np.testing.assert_array_equal(model.encode_image(files[::-1]), normalised[::-1])
        # The processor's own crops are the same pixels transformers fed its model.
        crops = read(root, f"crops/{name.split('-')[0]}", entry["crops"])
        cosine, at = worst_cosine(model.encode_image(crops), entry["crop_embeds"])
        assert cosine >= 0.9999, f"{name}: crops[{at}] at cosine {cosine}"
        d = model.describe()
        assert d.towers == (("image",) if name == "clip-vision" else ("text", "image"))
        assert d.family == name.split("-")[0]
        assert d.dimensions == raw.shape[1]


@pytest.mark.parametrize("name", ["clip", "siglip"])
def test_36_image_text_logits_match_transformers(images: Images, executor: Executor, name: str) -> None:
    root, reference = images
    entry = reference[name]
    with Model.load_ram(root / name, executor=executor) as model:
        pictures = model.encode_image(read(root, "files", entry["files"]))
        texts = model.encode_text(entry["texts"])
        cosine, at = worst_cosine(texts, entry["text_embeds"])
        assert cosine >= 0.9999, f"{name}: texts[{at}] at cosine {cosine}"
        np.testing.assert_allclose(np.linalg.norm(texts.astype(np.float64), axis=1), 1.0, rtol=0, atol=1e-5)
        scale = float(np.exp(entry["logit_scale"]))
        logits = scale * (pictures.astype(np.float64) @ texts.astype(np.float64).T) + entry.get("logit_bias", 0.0)
        worst = float(np.abs(logits - np.array(entry["logits_per_image"])).max())
        assert worst < 0.02 * scale, f"{name}: logits differ by {worst} (scale {scale:.2f})"
        # The text tower takes dimensions, but no prompt and no max_tokens.
        assert model.encode_text(entry["texts"][:1], dimensions=8).shape == (1, 8)
        with pytest.raises(uform.UnsupportedError):
            model.encode_text(["a dog"], prompt="query: ")
        with pytest.raises(uform.UnsupportedError):
            model.encode_text(["a dog"], max_tokens=8)


def test_36_bf16_reproduces_the_files_where_the_cpu_has_it(images: Images, executor: Executor) -> None:
    root, reference = images
    entry = reference["clip"]
    if not {"amd-genoa", "intel-sapphirerapids"} & set(uform.capabilities_available().split(",")):
        # This CPU has no bf16 instructions: its native class refuses bf16.
        with pytest.raises(uform.UnsupportedError):
            Model.load_ram(root / "clip", executor=executor, precision=Precision.BF16)
        return
    files = read(root, "files", entry["files"])
    with Model.load_ram(root / "clip", executor=executor, precision=Precision.BF16) as bf16:
        assert bf16.describe().precision == Precision.BF16
        got = bf16.encode_image(files, normalize=False)
        cosine, at = worst_cosine(got, entry["image_embeds"])
        assert cosine >= 0.999, f"bf16: files[{at}] at cosine {cosine}"
    with Model.load_ram(root / "clip", executor=executor) as f32:
        assert float(np.abs(got - f32.encode_image(files, normalize=False)).max()) > 1e-6, "bf16 gave f32's rows"


def test_37_bytes_bytearray_and_memoryviews_give_the_same_rows_and_so_do_threads(
    images: Images, executor: Executor
) -> None:
    root, reference = images
    entry = reference["clip"]
    with Model.load_ram(root / "clip", executor=executor) as model:
        files = read(root, "files", entry["files"][:4])
        want = model.encode_image(files)
        assert want.shape[0] == 4
        assert worst_cosine(want, entry["image_embeds"][:4])[0] >= 0.999
        # One larger bytearray holding every file with junk around it: slices of its memoryview start mid-buffer.
        big = bytearray(b"\xa5" * 7)
        spans = []
        for f in files:
            spans.append((len(big), len(big) + len(f)))
            big += f + b"\xa5" * 7
        view = memoryview(big)
        sliced = [view[start:end] for start, end in spans]
        assert all(s.contiguous and s.nbytes == len(f) for s, f in zip(sliced, files))
        forms: Dict[str, List[Union[bytes, bytearray, memoryview]]] = {
            "bytearray": [bytearray(f) for f in files],
            "memoryview": [memoryview(f) for f in files],
            "sliced memoryview": list(sliced),
            "mixed": [files[0], bytearray(files[1]), memoryview(files[2]), sliced[3]],
        }
        for form, inputs in forms.items():
            np.testing.assert_array_equal(model.encode_image(inputs), want, err_msg=form)
        np.testing.assert_array_equal(model.encode_image(tuple(files)), want)
        # encode_image releases the GIL: the same rows from threads at once (and through asyncio.to_thread).
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(lambda inputs: model.encode_image(inputs), [files, *forms.values()]))
        for got in results:
            np.testing.assert_array_equal(got, want)

        async def both() -> List[np.ndarray[Any, Any]]:
            return list(await asyncio.gather(
                asyncio.to_thread(model.encode_image, files),
                asyncio.to_thread(model.encode_image, sliced, normalize=False),
            ))

        normalised, raw = asyncio.run(both())
        np.testing.assert_array_equal(normalised, want)
        np.testing.assert_array_equal(raw, model.encode_image(files, normalize=False))
        # What is not a list of byte buffers is a TypeError.
        with pytest.raises(TypeError):
            model.encode_image(["photo.jpg"])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            model.encode_image([files[0], 7])  # type: ignore[list-item]


def test_38_hostile_files_are_invalid_arguments_naming_images_2_and_the_model_stays_usable(
    images: Images, executor: Executor
) -> None:
    root, _ = images
    good = (root / "files" / "photo.jpg").read_bytes()
    names = sorted(p.name for p in (root / "hostile").iterdir())
    assert len(names) >= 6, names
    cases = [(n, (root / "hostile" / n).read_bytes()) for n in names] + [("<empty>", b"")]
    with Model.load_ram(root / "clip", executor=executor) as model:
        before = model.encode_image([good])
        for name, bad in cases:
            for form in (bad, bytearray(bad), memoryview(bad)):
                with pytest.raises(uform.InvalidArgumentError) as caught:
                    model.encode_image([good, good, form])
                assert isinstance(caught.value, ValueError)
                assert caught.value.code == "invalid_argument"
                assert "images[2]" in str(caught.value), f"{name}: {caught.value}"
                if "bomb" in name:
                    assert "budget" in str(caught.value), f"{name}: {caught.value}"
        # Nothing was lost: the model still embeds, the same as before.
        np.testing.assert_array_equal(model.encode_image([good]), before)
        empty = model.encode_image([])
        assert empty.dtype == np.float32 and empty.shape[0] == 0


def test_38_a_text_only_model_refuses_images_and_a_vision_only_model_refuses_texts(
    images: Images, executor: Executor
) -> None:
    root, _ = images
    photo = (root / "files" / "photo.jpg").read_bytes()
    with Model.load_ram(root.parent / "families" / "distilbert", executor=executor) as text:
        assert text.describe().towers == ("text",)
        with pytest.raises(uform.UnsupportedError) as caught:
            text.encode_image([photo])
        assert isinstance(caught.value, NotImplementedError)
    with Model.load_ram(root / "clip-vision", executor=executor) as vision:
        with pytest.raises(uform.UnsupportedError):
            vision.encode_text(["a dog"])
        assert vision.encode_image([photo]).shape[0] == 1
