//! The BERT family and its relatives (its [`Variant`]s): BERT; DistilBERT and (XLM-)RoBERTa, which differ in
//! names, token types and where positions start; MPNet, which adds a relative position bias to the scores; and
//! ModernBERT, whose pre-norm layers with rotary positions, a gated GELU and sliding windows run in
//! `forward::modern_layers` over the same weights and attention.
//!
//! An [`Encoder`] is prepared once from a model's [`Weights`]: its configuration ([`config`], and the
//! sentence-transformers modules of [`pipeline`]), tokenizer and packed layer weights ([`params`]). Its forward
//! pass ([`forward`]) gives the last layer's token vectors; for training, the pass that keeps what the backward pass
//! reads, with the backward pass itself ([`train`]), over fp32 master weights and their optimiser ([`master`]). It
//! knows no verb: `crate::verbs` batch, pool, normalise and train with it.

pub(crate) mod config;
pub(crate) mod forward;
pub(crate) mod master;
pub(crate) mod params;
pub(crate) mod pipeline;
pub(crate) mod train;

pub use config::{Config, Modern, Variant};
pub use pipeline::{Pooling, ScoreActivation};

use super::tokenize::{Tokenizers, Vocab};
use super::verb;
use crate::error::{Error, Result};
use crate::model::layout::Layout;
use crate::model::Weights;
use params::Params;
use std::sync::Arc;

/// A BERT encoder prepared from a model's weights: its configuration, tokenizer and packed layer weights.
pub struct Encoder {
    pub(crate) config: Config,
    pub(crate) tokenizers: Arc<Tokenizers>,
    pub(crate) params: Params,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder").field("config", &self.config).finish()
    }
}

impl Encoder {
    /// Reads the folder beside `weights` and converts the layers' weights to `precision`.
    pub fn prepare(weights: &dyn Weights, precision: crate::types::Precision) -> Result<Encoder> {
        let dir = weights.directory().ok_or_else(|| {
            Error::unsupported(format!(
                "{} needs the model's folder (config.json, tokenizer.json); these weights have none",
                verb()
            ))
        })?;
        let layout = Layout::around(dir)?;
        let config = Config::read(&layout)?;
        // The families without token type embeddings (DistilBERT, MPNet, ModernBERT) ignore the types.
        let typed = matches!(config.variant, Variant::Bert | Variant::Roberta);
        let vocab = Vocab { words: config.vocab, types: typed.then_some(config.type_vocab) };
        let tokenizers = Arc::new(Tokenizers::read(&layout.transformer, config.max_tokens, vocab)?);
        let params = Params::read(weights, &config, precision)?;
        Ok(Encoder { config, tokenizers, params })
    }

    /// The same model with other weights: what a trainer publishes after a step.
    pub(crate) fn with_params(&self, params: Params) -> Encoder {
        Encoder { config: self.config.clone(), tokenizers: self.tokenizers.clone(), params }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn params(&self) -> &Params {
        &self.params
    }

    pub(crate) fn tokenizers(&self) -> &Tokenizers {
        &self.tokenizers
    }
}
