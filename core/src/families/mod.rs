//! Model families, one module per architecture: each reads its weights through [`crate::model::Weights`] and
//! writes its forward pass (and, for training, its backward pass) with [`crate::kernels`]; no family imports
//! another. A family knows no verb: batching, pooling across calls, memory budgets and losses are `crate::verbs`'.
//!
//! - [`bert`]: BERT and its relatives (DistilBERT, (XLM-)RoBERTa, MPNet, ModernBERT), the text encoders of
//!   sentence-transformers' layout, and their training pass.
//! - [`clip`]: CLIP and SigLIP, an image tower and a text tower into one space.
//! - [`pixels`]: an image file's bytes to the tensor an image tower reads; [`tokenize`]: texts to token ids.
//!
//! Which family runs a model is decided once, when its folder is described ([`describe`]): an [`Architecture`].

pub mod bert;
pub mod clip;
pub mod pixels;
pub(crate) mod tokenize;

use crate::model::layout::Layout;
use std::path::Path;

/// The architecture a model's folder holds, and with it the family that runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Architecture {
    /// A text encoder of BERT's family: [`bert`].
    Text(bert::Variant),
    /// An image-text model: [`clip`].
    ImageText(clip::Variant),
}

/// What the folder beside a model's weights says of the model, read without the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Described {
    pub architecture: Architecture,
    /// Tokens a text keeps by default (0 without a text tower).
    pub max_tokens: usize,
    /// The embeddings' width.
    pub dimensions: usize,
    /// The names of the prompts of `config_sentence_transformers.json`.
    pub prompts: Vec<String>,
    /// Whether it has a cross-encoder's classification head.
    pub cross_encoder: bool,
    /// Its towers: `"text"`, `"image"`, or both.
    pub towers: Vec<&'static str>,
}

/// The model the folder `dir` holds: an image-text model when its `config.json` describes one, else a text encoder
/// the BERT family runs; `None` when neither family would run it (a text encoder's verbs then say why).
pub fn describe(dir: &Path) -> Option<Described> {
    if let Some(image_text) = clip::describe(dir) {
        let towers = [(image_text.has_text, "text"), (image_text.has_vision, "image")];
        return Some(Described {
            architecture: Architecture::ImageText(image_text.variant),
            max_tokens: image_text.max_tokens,
            dimensions: image_text.dimensions,
            prompts: Vec::new(),
            cross_encoder: false,
            towers: towers.iter().filter(|(has, _)| *has).map(|(_, t)| *t).collect(),
        });
    }
    let config = Layout::around(dir).and_then(|layout| bert::Config::read(&layout)).ok()?;
    Some(Described {
        architecture: Architecture::Text(config.variant),
        max_tokens: config.max_tokens,
        dimensions: config.hidden,
        prompts: config.prompts.iter().map(|(name, _)| name.clone()).collect(),
        cross_encoder: config.classifier.is_some(),
        towers: vec!["text"],
    })
}

/// The verb a family's messages name (the one that prepares it), in each language's spelling.
pub(crate) fn verb() -> impl std::fmt::Display {
    crate::path::name("encode_text")
}
