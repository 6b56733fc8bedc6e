//! What the model folder says of a BERT-family encoder: the shape from `config.json`, and from
//! sentence-transformers' `1_Pooling/config.json` and `sentence_bert_config.json` the pooling, the normalisation
//! and the maximum length. The folder's parts are found as [`crate::model::layout`] says.

use crate::error::{Error, ErrorKind, Result};
use crate::model::layout::{read_json, Layout};
use serde_json::Value;
use std::path::Path;

/// How token vectors become one embedding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over the text's tokens (all real: texts are never padded here).
    Mean,
    /// The first token's vector (`[CLS]`).
    Cls,
}

/// The model's shape and its sentence-transformers pipeline.
#[derive(Clone, Debug)]
pub struct Config {
    pub hidden: usize,
    pub heads: usize,
    pub layers: usize,
    pub intermediate: usize,
    pub vocab: usize,
    pub positions: usize,
    pub type_vocab: usize,
    pub layer_norm_eps: f32,
    pub pooling: Pooling,
    /// Whether `modules.json` lists a `Normalize` module.
    pub normalize: bool,
    /// Tokens kept per text by default: `max_seq_length`, else the position embeddings.
    pub max_tokens: usize,
    /// `hidden_dropout_prob` and `attention_probs_dropout_prob` (0.1 each when absent, as transformers' BERT).
    pub hidden_dropout: f32,
    pub attention_dropout: f32,
}

fn count(config: &Value, key: &str, path: &Path) -> Result<usize> {
    config.get(key).and_then(Value::as_u64).filter(|v| *v > 0).map(|v| v as usize).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("`{}` has no positive integer `{key}` (found {:?})", path.display(), config.get(key)),
        )
    })
}

impl Config {
    /// Reads the model's folders; anything but a BERT encoder with mean or CLS pooling is unsupported, naming what
    /// was found.
    pub fn read(layout: &Layout) -> Result<Config> {
        let dir = &layout.transformer;
        let path = dir.join("config.json");
        let config = read_json(dir, "config.json")?.ok_or_else(|| {
            Error::unsupported(format!(
                "{} needs a `config.json` beside the weights; `{}` has none",
                super::verb(),
                dir.display()
            ))
        })?;
        let model_type = config.get("model_type").and_then(Value::as_str).unwrap_or("");
        if model_type != "bert" {
            return Err(Error::unsupported(format!(
                "{} runs BERT-family encoders (`model_type: \"bert\"`); `{}` has model_type {:?}",
                super::verb(),
                path.display(),
                config.get("model_type").map_or("absent".to_string(), Value::to_string)
            )));
        }
        let text = |key: &str, default: &str| config.get(key).and_then(Value::as_str).unwrap_or(default).to_string();
        let act = text("hidden_act", "gelu");
        if act != "gelu" {
            return Err(Error::unsupported(format!(
                "{} runs BERT with `hidden_act: \"gelu\"` (the erf form); `{}` has {act:?}",
                super::verb(),
                path.display()
            )));
        }
        let position = text("position_embedding_type", "absolute");
        if position != "absolute" {
            return Err(Error::unsupported(format!(
                "{} runs BERT with absolute position embeddings; `{}` has {position:?}",
                super::verb(),
                path.display()
            )));
        }
        let hidden = count(&config, "hidden_size", &path)?;
        let heads = count(&config, "num_attention_heads", &path)?;
        if hidden % heads != 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("`{}`: hidden_size {hidden} is not a multiple of num_attention_heads {heads}", path.display()),
            ));
        }
        let positions = count(&config, "max_position_embeddings", &path)?;
        let (pooling, normalize) = pipeline(layout)?;
        let max_seq = read_json(dir, "sentence_bert_config.json")?
            .and_then(|v| v.get("max_seq_length").and_then(Value::as_u64))
            .map(|v| v as usize);
        Ok(Config {
            hidden,
            heads,
            layers: count(&config, "num_hidden_layers", &path)?,
            intermediate: count(&config, "intermediate_size", &path)?,
            vocab: count(&config, "vocab_size", &path)?,
            positions,
            type_vocab: config.get("type_vocab_size").and_then(Value::as_u64).unwrap_or(2).max(1) as usize,
            layer_norm_eps: config.get("layer_norm_eps").and_then(Value::as_f64).unwrap_or(1e-12) as f32,
            pooling,
            normalize,
            max_tokens: max_seq.filter(|m| *m >= 1).unwrap_or(positions).min(positions),
            hidden_dropout: config.get("hidden_dropout_prob").and_then(Value::as_f64).unwrap_or(0.1) as f32,
            attention_dropout: config.get("attention_probs_dropout_prob").and_then(Value::as_f64).unwrap_or(0.1) as f32,
        })
    }

    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }
}

/// The pooling and normalisation `modules.json` lists. Without `modules.json` (a plain Hugging Face model):
/// mean pooling, no normalisation, as sentence-transformers does for such a model.
fn pipeline(layout: &Layout) -> Result<(Pooling, bool)> {
    let Some(modules) = &layout.modules else {
        return Ok((Pooling::Mean, false));
    };
    let (mut pooling, mut normalize) = (None, false);
    for module in modules {
        match module.kind.as_str() {
            "Transformer" => {}
            "Normalize" => normalize = true,
            "Pooling" => pooling = Some(read_pooling(&layout.root.join(&module.path))?),
            kind => {
                return Err(Error::unsupported(format!(
                    "{} runs Transformer, Pooling and Normalize modules; `{}` lists {kind:?}",
                    super::verb(),
                    layout.root.join("modules.json").display()
                )))
            }
        }
    }
    Ok((pooling.unwrap_or(Pooling::Mean), normalize))
}

fn read_pooling(dir: &Path) -> Result<Pooling> {
    let path = dir.join("config.json");
    let config = read_json(dir, "config.json")?
        .ok_or_else(|| Error::unsupported(format!("the pooling module's `{}` is missing", path.display())))?;
    let on: Vec<&str> = config
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(key, value)| key.starts_with("pooling_mode_") && value.as_bool() == Some(true))
        .map(|(key, _)| key.as_str())
        .collect();
    match on.as_slice() {
        ["pooling_mode_mean_tokens"] => Ok(Pooling::Mean),
        ["pooling_mode_cls_token"] => Ok(Pooling::Cls),
        _ => Err(Error::unsupported(format!(
            "{} pools by mean or CLS alone; `{}` turns on {on:?}",
            super::verb(),
            path.display()
        ))),
    }
}
