//! What the model folder says of a BERT-family encoder (its [`Variant`]): the shape from `config.json`, the maximum
//! length from `sentence_bert_config.json` (else the tokenizer's), and the sentence-transformers pipeline
//! ([`super::pipeline`]: pooling, normalisation, prompts, a cross-encoder's activation). The folder's parts are found
//! as [`crate::model::layout`] says.

use super::pipeline::{self, Pooling, Prompts, ScoreActivation};
use crate::error::{Error, ErrorKind, Result};
use crate::families::verb;
use crate::model::layout::{read_json, Layout};
use serde_json::Value;
use std::path::Path;

/// The architectures whose encoders run the BERT forward pass: post-norm layers of fused-QKV attention and a GELU
/// feed-forward, absolute position embeddings; they differ in their `config.json` keys and tensor names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `model_type: "bert"` (all-MiniLM, bge, e5 and the other BERT checkpoints).
    Bert,
    /// `model_type: "distilbert"` (msmarco-distilbert and friends): no token type embeddings, its own names.
    DistilBert,
    /// `model_type: "xlm-roberta"` or `"roberta"` (multilingual-e5, paraphrase-multilingual, bge-m3's dense output):
    /// BERT's names under `roberta.`, positions counted from the padding index plus one.
    Roberta,
    /// `model_type: "mpnet"` (all-mpnet-base-v2): RoBERTa's positions, no token types, and a relative position
    /// bias added to every head's attention scores ([`Config::relative_buckets`]).
    MpNet,
    /// `model_type: "modernbert"` (gte-modernbert, modernbert-embed): pre-norm layers without biases, rotary
    /// positions, a gated GELU, and sliding-window attention in most layers ([`Config::modern`]).
    ModernBert,
}

/// What ModernBERT adds to the shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Modern {
    /// Per layer: whether it attends globally (else within [`Modern::window`] tokens either side).
    pub global: Vec<bool>,
    /// The rotary bases of global and of sliding-window layers.
    pub theta_global: f64,
    pub theta_local: f64,
    /// Tokens either side a sliding-window layer's token attends to (`sliding_window`, else `local_attention / 2`).
    pub window: usize,
    /// A sequence-classification head's pooling (`classifier_pooling`: the first token, or the mean of the tokens)
    /// and whether its dense layer has a bias (`classifier_bias`).
    pub classifier_pooling: Pooling,
    pub classifier_bias: bool,
}

/// The model's shape and its sentence-transformers pipeline.
#[derive(Clone, Debug)]
pub struct Config {
    pub variant: Variant,
    pub hidden: usize,
    pub heads: usize,
    pub layers: usize,
    pub intermediate: usize,
    pub vocab: usize,
    /// Positions a text may use (`max_position_embeddings` less [`Config::position_offset`]).
    pub positions: usize,
    /// The position embedding of a text's first token: 0, or for RoBERTa the padding index plus one, as its
    /// position ids count from there.
    pub position_offset: usize,
    pub type_vocab: usize,
    pub layer_norm_eps: f32,
    pub pooling: Pooling,
    /// Whether `modules.json` lists a `Normalize` module.
    pub normalize: bool,
    /// Tokens kept per text by default: `max_seq_length`, else the tokenizer's `model_max_length`, at most the
    /// position embeddings.
    pub max_tokens: usize,
    /// The prompts of `config_sentence_transformers.json` by name, and its `default_prompt_name`.
    pub prompts: Prompts,
    pub default_prompt: Option<String>,
    /// Whether mean pooling counts a prompt's tokens (`include_prompt` of the pooling module; true when absent).
    pub include_prompt: bool,
    /// For a `*ForSequenceClassification` checkpoint (a cross-encoder), the activation of its single logit.
    pub classifier: Option<ScoreActivation>,
    /// ModernBERT's layer kinds, rotary bases and window; `None` for the other families. Its `intermediate` is
    /// twice `intermediate_size`: the gated GELU's input and gate come from one projection.
    pub modern: Option<Modern>,
    /// MPNet's `relative_attention_num_buckets` (32 when absent); `None` for the families without a relative bias.
    pub relative_buckets: Option<usize>,
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
    /// A BERT of the given shape with the pipeline sentence-transformers gives all-MiniLM (mean pooling, normalised,
    /// two token types, no prompts, no head, dropout 0.1), for the tests that need a configuration without a folder.
    #[cfg(test)]
    pub fn bert(
        hidden: usize,
        heads: usize,
        layers: usize,
        intermediate: usize,
        vocab: usize,
        positions: usize,
    ) -> Config {
        Config {
            variant: Variant::Bert,
            hidden,
            heads,
            layers,
            intermediate,
            vocab,
            positions,
            position_offset: 0,
            relative_buckets: None,
            prompts: Vec::new(),
            default_prompt: None,
            include_prompt: true,
            classifier: None,
            modern: None,
            type_vocab: 2,
            layer_norm_eps: 1e-12,
            pooling: Pooling::Mean,
            normalize: true,
            max_tokens: positions,
            hidden_dropout: 0.1,
            attention_dropout: 0.1,
        }
    }

    /// Reads the model's folders; anything but an encoder of a [`Variant`] with mean or CLS pooling is
    /// unsupported, naming what was found.
    pub fn read(layout: &Layout) -> Result<Config> {
        let dir = &layout.transformer;
        let path = dir.join("config.json");
        let config = read_json(dir, "config.json")?.ok_or_else(|| {
            Error::unsupported(format!(
                "{} needs a `config.json` beside the weights; `{}` has none",
                verb(),
                dir.display()
            ))
        })?;
        let variant = Variant::read(&config, &path)?;
        let keys = Keys::of(variant);
        variant.check(&config, &keys, &path)?;
        let hidden = count(&config, keys.hidden, &path)?;
        let heads = count(&config, keys.heads, &path)?;
        if hidden % heads != 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("`{}`: {} {hidden} is not a multiple of {} {heads}", path.display(), keys.hidden, keys.heads),
            ));
        }
        let table = count(&config, "max_position_embeddings", &path)?;
        let position_offset = match variant {
            Variant::Roberta | Variant::MpNet => {
                config.get("pad_token_id").and_then(Value::as_u64).unwrap_or(1) as usize + 1
            }
            Variant::Bert | Variant::DistilBert | Variant::ModernBert => 0,
        };
        let positions = table.checked_sub(position_offset).filter(|p| *p > 0).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "`{}`: max_position_embeddings {table} leaves no position past the padding index's {position_offset}",
                    path.display()
                ),
            )
        })?;
        let (pooling, normalize, include_prompt) = pipeline::pipeline(layout)?;
        let (prompts, default_prompt) = pipeline::prompts(dir)?;
        let classifier = pipeline::classifier(&config, dir, &path)?;
        let max_seq = max_seq(dir)?;
        let number = |key: &str, default: f64| config.get(key).and_then(Value::as_f64).unwrap_or(default);
        let (hidden_dropout, attention_dropout) = match variant {
            Variant::Bert | Variant::Roberta | Variant::MpNet => {
                (number("hidden_dropout_prob", 0.1), number("attention_probs_dropout_prob", 0.1))
            }
            Variant::DistilBert => (number("dropout", 0.1), number("attention_dropout", 0.1)),
            Variant::ModernBert => (number("mlp_dropout", 0.0), number("attention_dropout", 0.0)),
        };
        let layers = count(&config, keys.layers, &path)?;
        let modern = match variant {
            Variant::ModernBert => Some(modern(&config, layers, &path)?),
            _ => None,
        };
        let intermediate = count(&config, keys.intermediate, &path)? * if modern.is_some() { 2 } else { 1 };
        Ok(Config {
            variant,
            hidden,
            heads,
            layers,
            intermediate,
            vocab: count(&config, "vocab_size", &path)?,
            positions,
            position_offset,
            // DistilBERT has no token type embeddings: one row of zeros stands for them.
            type_vocab: match variant {
                Variant::Bert | Variant::Roberta => {
                    config.get("type_vocab_size").and_then(Value::as_u64).unwrap_or(2).max(1) as usize
                }
                Variant::DistilBert | Variant::MpNet | Variant::ModernBert => 1,
            },
            // DistilBERT's LayerNorms are built with 1e-12 whatever the config says.
            layer_norm_eps: match variant {
                Variant::Bert | Variant::Roberta | Variant::MpNet => number("layer_norm_eps", 1e-12) as f32,
                Variant::DistilBert => 1e-12,
                Variant::ModernBert => number("norm_eps", 1e-5) as f32,
            },
            pooling,
            normalize,
            max_tokens: max_seq.filter(|m| *m >= 1).unwrap_or(positions).min(positions),
            prompts,
            default_prompt,
            include_prompt,
            classifier,
            modern,
            relative_buckets: match variant {
                Variant::MpNet => Some(match config.get("relative_attention_num_buckets") {
                    None => 32,
                    Some(_) => count(&config, "relative_attention_num_buckets", &path)?,
                }),
                _ => None,
            },
            hidden_dropout: hidden_dropout as f32,
            attention_dropout: attention_dropout as f32,
        })
    }

    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }
}

impl Variant {
    /// The variant `config.json`'s `model_type` names; any other is unsupported.
    fn read(config: &Value, path: &Path) -> Result<Variant> {
        Ok(match config.get("model_type").and_then(Value::as_str).unwrap_or("") {
            "bert" => Variant::Bert,
            "distilbert" => Variant::DistilBert,
            "xlm-roberta" | "roberta" => Variant::Roberta,
            "mpnet" => Variant::MpNet,
            "modernbert" => Variant::ModernBert,
            _ => {
                return Err(Error::unsupported(format!(
                    "{} runs BERT, DistilBERT, (XLM-)RoBERTa, MPNet and ModernBERT encoders (`model_type` \"bert\", \
                     \"distilbert\", \"xlm-roberta\", \"roberta\", \"mpnet\" or \"modernbert\"); `{}` has model_type \
                     {:?}",
                    verb(),
                    path.display(),
                    config.get("model_type").map_or("absent".to_string(), Value::to_string)
                )))
            }
        })
    }

    /// Refuses what the forward pass does not run: an activation other than the erf GELU, and positions other than
    /// learned absolute embeddings (ModernBERT's rotary ones aside).
    fn check(self, config: &Value, keys: &Keys, path: &Path) -> Result<()> {
        let text = |key: &str, default: &str| config.get(key).and_then(Value::as_str).unwrap_or(default).to_string();
        let act = text(keys.activation, "gelu");
        if act != "gelu" {
            return Err(Error::unsupported(format!(
                "{} runs `{}: \"gelu\"` (the erf form); `{}` has {act:?}",
                verb(),
                keys.activation,
                path.display()
            )));
        }
        let position = match self {
            Variant::Bert | Variant::Roberta => text("position_embedding_type", "absolute"),
            Variant::MpNet => "absolute".to_string(),
            Variant::ModernBert => "rotary".to_string(),
            Variant::DistilBert if config.get("sinusoidal_pos_embds").and_then(Value::as_bool) == Some(true) => {
                "sinusoidal".to_string()
            }
            Variant::DistilBert => "absolute".to_string(),
        };
        if position != "absolute" && self != Variant::ModernBert {
            return Err(Error::unsupported(format!(
                "{} runs learned absolute position embeddings; `{}` has {position:?}",
                verb(),
                path.display()
            )));
        }
        Ok(())
    }
}

/// The keys a variant spells its shape and activation with in `config.json`.
struct Keys {
    activation: &'static str,
    hidden: &'static str,
    heads: &'static str,
    layers: &'static str,
    intermediate: &'static str,
}

impl Keys {
    fn of(variant: Variant) -> Keys {
        let [activation, hidden, heads, layers, intermediate] = match variant {
            Variant::Bert | Variant::Roberta | Variant::MpNet => {
                ["hidden_act", "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size"]
            }
            Variant::DistilBert => ["activation", "dim", "n_heads", "n_layers", "hidden_dim"],
            Variant::ModernBert => {
                ["hidden_activation", "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size"]
            }
        };
        Keys { activation, hidden, heads, layers, intermediate }
    }
}

/// sentence-transformers' max_seq_length; without it (version 6 keeps it out of the file), as it derives one: the
/// tokenizer's model_max_length, under the positions (a float like 1e30 means none).
fn max_seq(dir: &Path) -> Result<Option<usize>> {
    Ok(match read_json(dir, "sentence_bert_config.json")?.and_then(|v| v.get("max_seq_length").cloned()) {
        Some(v) => v.as_u64().map(|v| v as usize),
        None => read_json(dir, "tokenizer_config.json")?
            .and_then(|v| v.get("model_max_length").and_then(Value::as_u64))
            .map(|v| v as usize),
    })
}

/// ModernBERT's layer kinds, rotary bases and window from `config.json`; biases are refused (no checkpoint of the
/// family has them).
fn modern(config: &Value, layers: usize, path: &Path) -> Result<Modern> {
    for key in ["norm_bias", "attention_bias", "mlp_bias"] {
        if config.get(key).and_then(Value::as_bool) == Some(true) {
            return Err(Error::unsupported(format!(
                "{} runs ModernBERT without biases; `{}` has {key}: true",
                verb(),
                path.display()
            )));
        }
    }
    let every = config.get("global_attn_every_n_layers").and_then(Value::as_u64).filter(|n| *n > 0).unwrap_or(3);
    let global: Vec<bool> = match config.get("layer_types").and_then(Value::as_array) {
        Some(kinds) if kinds.len() == layers => kinds.iter().map(|k| k.as_str() != Some("sliding_attention")).collect(),
        _ => (0..layers).map(|l| (l as u64).is_multiple_of(every)).collect(),
    };
    let theta = |kind: &str, old: &str, default: f64| {
        config
            .pointer(&format!("/rope_parameters/{kind}/rope_theta"))
            .or_else(|| config.get(old))
            .and_then(Value::as_f64)
            .unwrap_or(default)
    };
    if let Some(other) = config.get("classifier_activation").and_then(Value::as_str).filter(|a| *a != "gelu") {
        return Err(Error::unsupported(format!(
            "{} runs ModernBERT's classification head with GELU; `{}` has classifier_activation {other:?}",
            verb(),
            path.display()
        )));
    }
    let classifier_pooling = match config.get("classifier_pooling").and_then(Value::as_str) {
        None | Some("cls") => Pooling::Cls,
        Some("mean") => Pooling::Mean,
        Some(other) => {
            return Err(Error::unsupported(format!(
                "{} pools ModernBERT's classification head by \"cls\" or \"mean\"; `{}` has classifier_pooling \
                 {other:?}",
                verb(),
                path.display()
            )))
        }
    };
    let local = config.get("local_attention").and_then(Value::as_u64).unwrap_or(128) as usize;
    let window = config.get("sliding_window").and_then(Value::as_u64).map_or(local / 2, |w| w as usize);
    Ok(Modern {
        global,
        theta_global: theta("full_attention", "global_rope_theta", 160_000.0),
        theta_local: theta("sliding_attention", "local_rope_theta", 10_000.0),
        window,
        classifier_pooling,
        classifier_bias: config.get("classifier_bias").and_then(Value::as_bool) == Some(true),
    })
}
