//! CLIP and SigLIP: an image tower (a ViT: patches, positions, pre-norm layers, then CLIP's class token and
//! projection or SigLIP's attention-pooling head) and a text tower (pre-norm layers, CLIP's causal mask pooled at the
//! end-of-text token and projected, or SigLIP's full attention over a text padded to its length, pooled at the last
//! position through a head). One module: the two share the layers, and differ in [`params::Config`]'s fields. An
//! [`ImageText`] is prepared once from a model's [`Weights`]; it knows no verb: `crate::verbs` decode images, batch
//! and normalise.

pub(crate) mod forward;
pub(crate) mod params;

use super::tokenize::{Tokenizers, Vocab};
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::kernels::Kernels;
use crate::model::layout::{read_json, Layout};
use crate::model::Weights;
use crate::types::Precision;
pub use params::Variant;
use params::{Config, Text, Vision};

/// The verb a CLIP model's messages name.
pub(crate) fn verb() -> impl std::fmt::Display {
    crate::path::name("encode_image")
}

/// What a folder's `config.json` says of an image-text model, read without its weights (for `describe`).
#[derive(Clone, Debug, PartialEq)]
pub struct Described {
    pub variant: Variant,
    pub has_text: bool,
    pub has_vision: bool,
    /// The embeddings' width.
    pub dimensions: usize,
    /// The text tower's positions (0 without one).
    pub max_tokens: usize,
}

/// The image-text model the folder `dir` holds, or `None` when its `config.json` is absent, unreadable or of
/// another architecture.
pub fn describe(dir: &std::path::Path) -> Option<Described> {
    let layout = Layout::around(dir).ok()?;
    let json = read_json(&layout.transformer, "config.json").ok()??;
    let config = Config::from_json(&json).ok()?;
    Some(Described {
        variant: config.variant,
        has_text: config.text.is_some(),
        has_vision: config.vision.is_some(),
        dimensions: config.dimensions,
        max_tokens: config.text.as_ref().map_or(0, |t| t.positions),
    })
}

/// A CLIP or SigLIP model prepared from its weights: configuration, tokenizer and packed layer weights.
pub struct ImageText {
    config: Config,
    vision: Vision,
    text: Option<(Text, Tokenizers)>,
    logit_scale: Option<f32>,
    logit_bias: Option<f32>,
}

impl std::fmt::Debug for ImageText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageText").field("config", &self.config).finish()
    }
}

impl ImageText {
    /// Reads the folder beside `weights` (`config.json`, and `tokenizer.json` where there is a text tower) and
    /// converts the layers' weights to `precision`.
    pub fn prepare(weights: &dyn Weights, precision: Precision) -> Result<ImageText> {
        let dir = weights.directory().ok_or_else(|| {
            Error::unsupported(format!("{} needs the model's folder (config.json); these weights have none", verb()))
        })?;
        let layout = Layout::around(dir)?;
        let json = read_json(&layout.transformer, "config.json")?.ok_or_else(|| {
            Error::unsupported(format!("{} needs config.json beside the weights in `{}`", verb(), dir.display()))
        })?;
        let config = Config::from_json(&json)?;
        let vision = Vision::read(weights, &config, precision)?;
        let text = match Text::read(weights, &config, precision)? {
            None => None,
            Some(text) => {
                let (positions, words) = config.text.as_ref().map_or((0, 0), |t| (t.positions, t.vocab));
                let vocab = Vocab { words, types: None };
                Some((text, Tokenizers::read(&layout.transformer, positions, vocab)?))
            }
        };
        let (logit_scale, logit_bias) = params::logits(weights)?;
        Ok(ImageText { config, vision, text, logit_scale, logit_bias })
    }

    /// `"clip"` or `"siglip"`.
    pub fn family(&self) -> &'static str {
        self.config.variant.name()
    }

    pub fn has_vision(&self) -> bool {
        self.config.vision.is_some()
    }

    pub fn has_text(&self) -> bool {
        self.text.is_some()
    }

    /// The square input's side in pixels.
    pub fn image_size(&self) -> usize {
        self.config.vision.as_ref().map_or(0, |v| v.image_size)
    }

    /// The embeddings' width.
    pub fn dimensions(&self) -> usize {
        self.config.dimensions
    }

    /// The checkpoint's `logit_scale` (before `exp`) and SigLIP's `logit_bias`, where it has them.
    pub fn logit_scale(&self) -> Option<f32> {
        self.logit_scale
    }

    pub fn logit_bias(&self) -> Option<f32> {
        self.logit_bias
    }

    fn vision_config(&self) -> &params::VisionConfig {
        self.config.vision.as_ref().expect("every model here has an image tower")
    }

    /// Bytes of scratch one image takes in [`ImageText::encode_pixels`]: its patches, tokens and pooling rows, and
    /// one attention slot's scores and keys (a batch of `n` takes about `n` times this, and a slot per thread).
    pub fn scratch_per_image(&self) -> usize {
        let lens = forward::image_lens(self.config.variant, self.vision_config(), 1, 1);
        lens.iter().sum::<usize>() * std::mem::size_of::<f32>()
    }

    /// `pixels`: `n` images, each `3 × image_size × image_size` f32, channel-major, already normalised. Writes `n`
    /// rows of [`ImageText::dimensions`] (unnormalised, as transformers' `get_image_features`) into `out`, a batch
    /// at a time within the executor's scratch limit.
    pub fn encode_pixels(&self, executor: &Executor, pixels: &[f32], n: usize, out: &mut [f32]) -> Result<()> {
        let side = self.image_size();
        let (per_image, d) = (3 * side * side, self.dimensions());
        if pixels.len() != n * per_image {
            return Err(Error::internal(format!(
                "encode_pixels: {} pixel values; {n} images of 3 × {side} × {side} take {}",
                pixels.len(),
                n * per_image
            )));
        }
        if out.len() < n * d {
            return Err(Error::internal(format!("encode_pixels: {} output values for {n} rows of {d}", out.len())));
        }
        let kernels = Kernels::for_class(executor.cpu_class())?;
        let mut scratch = executor.host_scratch()?;
        let (variant, config) = (self.config.variant, self.vision_config());
        let slots = executor.threads();
        let bytes = |n: usize| forward::image_lens(variant, config, n, slots).iter().sum::<usize>() * 4;
        let fixed = bytes(0);
        let batch = (scratch.limit().saturating_sub(fixed) / (bytes(1) - fixed).max(1)).clamp(1, n.max(1));
        for first in (0..n).step_by(batch) {
            let m = batch.min(n - first);
            let (pixels, out) =
                (&pixels[first * per_image..(first + m) * per_image], &mut out[first * d..(first + m) * d]);
            forward::images(executor, &kernels, variant, config, &self.vision, d, pixels, m, out, &mut scratch)?;
        }
        Ok(())
    }

    /// The token ids the text tower reads for `texts`: CLIP's truncated to its positions, SigLIP's also padded to
    /// them with the pad token (as `processor(text=…, padding="max_length")` gives).
    pub fn token_ids(&self, executor: &Executor, texts: &[String]) -> Result<Vec<Vec<u32>>> {
        let (Some((_, tokenizers)), Some(config)) = (&self.text, &self.config.text) else {
            return Err(Error::unsupported("this model has no text tower"));
        };
        let which: Vec<usize> = (0..texts.len()).collect();
        let tokens = tokenizers.encode(executor, texts, &which, config.positions)?;
        let mut ids: Vec<Vec<u32>> = tokens.into_iter().map(|t| t.ids).collect();
        for (i, t) in ids.iter_mut().enumerate() {
            if self.config.variant == Variant::Siglip && t.len() < config.positions {
                // The tokenizer checked its ids; the padding is the configuration's.
                if config.pad as usize >= config.vocab {
                    return Err(Error::unsupported(format!(
                        "the padding of `texts[{i}]` is token {}, past the {} word embeddings",
                        config.pad, config.vocab
                    )));
                }
                t.resize(config.positions, config.pad);
            }
            if t.is_empty() {
                return Err(Error::internal(format!("texts[{i}] reached the text tower with no tokens")));
            }
        }
        Ok(ids)
    }

    /// Tokenises and embeds `texts` with the text tower (CLIP: causal mask, pooled at the end-of-text token as
    /// transformers does; SigLIP: padded to its length, the last position, the head) into `out`'s rows of
    /// [`ImageText::dimensions`], unnormalised.
    pub fn encode_texts(&self, executor: &Executor, texts: &[String], out: &mut [f32]) -> Result<()> {
        let (Some((text, _)), Some(config)) = (&self.text, &self.config.text) else {
            return Err(Error::unsupported(format!("{} has no text tower: it embeds images only", self.family())));
        };
        let d = self.dimensions();
        if out.len() < texts.len() * d {
            return Err(Error::internal(format!("encode_texts: {} output values for {} rows", out.len(), texts.len())));
        }
        let ids = self.token_ids(executor, texts)?;
        let kernels = Kernels::for_class(executor.cpu_class())?;
        let mut scratch = executor.host_scratch()?;
        let slots = executor.threads();
        // Texts a batch: as many as fit the scratch limit at the longest length, at least one.
        let bytes = |n: usize| {
            let p = config.positions;
            forward::text_lens(config, n, n * p, p, slots).iter().sum::<usize>() * 4
        };
        let fixed = bytes(0);
        let batch = (scratch.limit().saturating_sub(fixed) / (bytes(1) - fixed).max(1)).clamp(1, texts.len().max(1));
        for first in (0..texts.len()).step_by(batch) {
            let m = batch.min(texts.len() - first);
            let out = &mut out[first * d..(first + m) * d];
            let variant = self.config.variant;
            forward::texts(executor, &kernels, variant, config, text, d, &ids[first..first + m], out, &mut scratch)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
