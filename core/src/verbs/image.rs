//! The `encodeImage` verb, and `encodeText` for image-text models (CLIP, SigLIP): both towers of
//! [`crate::families::clip::ImageText`] embed into one space, so a text's row and an image's row compare by cosine.
//!
//! - Each image is the bytes of an encoded file, decoded and preprocessed by [`crate::families::pixels`] as the
//!   folder's `preprocessor_config.json` says (decode, EXIF orientation, RGB, resize, crop, rescale, normalise); an
//!   image that cannot be decoded is an invalid argument naming `images[i]`, and no image is decoded past the pixel
//!   budget ([`crate::families::pixels::MAX_PIXELS`]).
//! - Memory: images are decoded a batch at a time, each thread one image at once, into a batch of pixel tensors whose
//!   size follows the executor's `scratchLimit` (the towers' own scratch per image, [`ImageText::scratch_per_image`],
//!   plus the pixels); a call of any size holds one batch of pixels and its result. Texts run in batches too.
//! - Rows are normalised unless `options.normalize` is false: image-text models are compared by cosine.

use super::input::{check_nul, columns};
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::families::clip::ImageText;
use crate::families::pixels::Preprocess;
use crate::kernels::Kernels;
use crate::model::Weights;
use crate::types::{EncodeImageOptions, EncodeTextOptions, F32Matrix, Precision};
use std::sync::Mutex;

/// An image-text model prepared once: its towers and, with an image tower, its preprocessing.
pub struct Prepared {
    towers: ImageText,
    preprocess: Option<Preprocess>,
}

/// Where a model keeps its prepared towers: prepared by the first call at the model's precision.
pub type ImageTextSlot = super::slot::Slot<Prepared>;

impl super::slot::Prepare for Prepared {
    fn prepare(weights: &dyn Weights, precision: Precision) -> Result<Prepared> {
        let towers = ImageText::prepare(weights, precision)?;
        let preprocess = match (towers.has_vision(), weights.directory()) {
            (true, Some(dir)) => Some(Preprocess::read(&dir.join("preprocessor_config.json"))?),
            _ => None,
        };
        if let Some(p) = &preprocess {
            let side = towers.image_size();
            if p.side() != (side, side) {
                return Err(Error::unsupported(format!(
                    "{}: preprocessor_config.json gives {}x{} pixels, but the vision tower takes {side}x{side}",
                    crate::path::name("Model.encode_image"),
                    p.side().0,
                    p.side().1
                )));
            }
        }
        Ok(Prepared { towers, preprocess })
    }
}

/// Scales each row of `columns` to unit length (a zero row stays zero).
fn normalize_rows(executor: &Executor, data: &mut [f32], columns: usize) -> Result<()> {
    let kernels = Kernels::for_class(executor.cpu_class())?;
    data.chunks_exact_mut(columns).for_each(|row| kernels.normalize(row));
    Ok(())
}

/// `Model.encodeImage`: one row per image, in input order.
pub fn encode_image(
    slot: &ImageTextSlot,
    weights: &dyn Weights,
    executor: &Executor,
    images: &[&[u8]],
    options: &EncodeImageOptions,
) -> Result<F32Matrix> {
    let prepared = slot.get_or_prepare(weights)?;
    let Some(preprocess) = prepared.preprocess.as_ref().filter(|_| prepared.towers.has_vision()) else {
        return Err(Error::unsupported(format!(
            "{} needs a model with an image tower (CLIP, SigLIP); this {} model has none",
            crate::path::name("Model.encode_image"),
            prepared.towers.family()
        )));
    };
    let towers = &prepared.towers;
    let columns = towers.dimensions();
    let rows = super::input::rows("images", images.len(), "images")?;
    let mut data = super::encode::output(images.len(), columns)?;
    let (height, width) = preprocess.side();
    let per_image = 3 * height * width;
    // A batch's pixels and the towers' scratch for it stay within the scratch limit; one image at least.
    let bytes_per_image = per_image * 4 + towers.scratch_per_image();
    let batch = (executor.host_scratch_limit() / bytes_per_image.max(1)).clamp(1, 256).min(images.len().max(1));
    let mut pixels = Vec::new();
    pixels.try_reserve_exact(batch * per_image).map_err(|_| {
        Error::new(crate::error::ErrorKind::OutOfMemory, format!("{batch} images' pixels cannot be allocated"))
    })?;
    pixels.resize(batch * per_image, 0.0f32);
    for (b, chunk) in images.chunks(batch).enumerate() {
        let first = b * batch;
        let failures: Vec<Mutex<Option<Error>>> = chunk.iter().map(|_| Mutex::new(None)).collect();
        let shared = crate::kernels::gemm::Shared(pixels.as_mut_ptr());
        executor.for_n_dynamic(chunk.len(), |i| {
            // SAFETY: image `i`'s pixels are floats `i * per_image ..` of `pixels`, which holds `batch >= chunk.len()`
            // images: each index is handed to one thread only, so no two threads write the same floats, and `pixels`
            // outlives the dispatch, which joins before returning.
            let out = unsafe { shared.slice(i * per_image, per_image) };
            if let Err(e) = preprocess.pixels(chunk[i], first + i, out) {
                *failures[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        })?;
        // The first failing image in input order fails the call.
        if let Some(e) = failures.into_iter().find_map(|f| f.into_inner().unwrap_or_else(|p| p.into_inner())) {
            return Err(e);
        }
        let out = &mut data[first * columns..(first + chunk.len()) * columns];
        towers.encode_pixels(executor, &pixels[..chunk.len() * per_image], chunk.len(), out)?;
    }
    if options.normalize.unwrap_or(EncodeImageOptions::DEFAULT_NORMALIZE) {
        normalize_rows(executor, &mut data, columns)?;
    }
    Ok(F32Matrix { data, rows, columns: columns as u32 })
}

/// Texts an image-text model's text tower embeds at once: its scratch is small, and the rows land in the result.
const TEXT_BATCH: usize = 64;

/// `Model.encodeText` for an image-text model: the text tower's rows, in the images' space.
pub fn encode_text(
    slot: &ImageTextSlot,
    weights: &dyn Weights,
    executor: &Executor,
    texts: &[String],
    options: &EncodeTextOptions,
) -> Result<F32Matrix> {
    let prepared = slot.get_or_prepare(weights)?;
    let towers = &prepared.towers;
    if !towers.has_text() {
        return Err(Error::unsupported(format!(
            "{} needs a text tower; this {} model has only an image tower (a *VisionModelWithProjection checkpoint)",
            crate::path::name("Model.encode_text"),
            towers.family()
        )));
    }
    for (name, given) in [
        ("options.prompt", options.prompt.is_some()),
        ("options.prompt_name", options.prompt_name.is_some()),
        ("options.max_tokens", options.max_tokens.is_some()),
    ] {
        if given {
            return Err(Error::unsupported(format!(
                "{} is for sentence-transformers encoders; a {} text tower takes its texts as its processor does",
                crate::path::name(name),
                towers.family()
            )));
        }
    }
    check_nul(texts.iter().map(String::as_str), |i| format!("texts[{i}]"))?;
    let h = towers.dimensions();
    let columns = columns(options.dimensions, h)?;
    let rows = super::input::rows("texts", texts.len(), "texts")?;
    let mut data = super::encode::output(texts.len(), h)?;
    for (b, chunk) in texts.chunks(TEXT_BATCH).enumerate() {
        let out = &mut data[b * TEXT_BATCH * h..(b * TEXT_BATCH + chunk.len()) * h];
        towers.encode_texts(executor, chunk, out)?;
    }
    let kernels = Kernels::for_class(executor.cpu_class())?;
    let mut data = if columns < h { super::encode::truncate(&kernels, &data, h, columns, false)? } else { data };
    if options.normalize.unwrap_or(true) {
        normalize_rows(executor, &mut data, columns)?;
    }
    Ok(F32Matrix { data, rows, columns: columns as u32 })
}
