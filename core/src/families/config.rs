//! What the model folder says of a BERT-family encoder (BERT or DistilBERT, see [`Family`]): the shape from `config.json`, and from
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

/// The architectures whose encoders run the BERT forward pass: post-norm layers of fused-QKV attention and a GELU
/// feed-forward, absolute position embeddings; they differ in their `config.json` keys and tensor names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
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

/// What a sequence-classification checkpoint (sentence-transformers' CrossEncoder layout) applies to its logit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Sigmoid,
    Identity,
}

/// The model's shape and its sentence-transformers pipeline.
#[derive(Clone, Debug)]
pub struct Config {
    pub family: Family,
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
    pub classifier: Option<Activation>,
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
            family: Family::Bert,
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

    /// Reads the model's folders; anything but a BERT or DistilBERT encoder with mean or CLS pooling is unsupported,
    /// naming what was found.
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
        let family = match model_type {
            "bert" => Family::Bert,
            "distilbert" => Family::DistilBert,
            "xlm-roberta" | "roberta" => Family::Roberta,
            "mpnet" => Family::MpNet,
            "modernbert" => Family::ModernBert,
            _ => {
                return Err(Error::unsupported(format!(
                    "{} runs BERT, DistilBERT, (XLM-)RoBERTa, MPNet and ModernBERT encoders (`model_type` \"bert\", \
                     \"distilbert\", \"xlm-roberta\", \"roberta\", \"mpnet\" or \"modernbert\"); `{}` has model_type \
                     {:?}",
                    super::verb(),
                    path.display(),
                    config.get("model_type").map_or("absent".to_string(), Value::to_string)
                )))
            }
        };
        let text = |key: &str, default: &str| config.get(key).and_then(Value::as_str).unwrap_or(default).to_string();
        // The keys each family spells its shape and choices with.
        let [act_key, hidden_key, heads_key, layers_key, intermediate_key] = match family {
            Family::Bert | Family::Roberta | Family::MpNet => {
                ["hidden_act", "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size"]
            }
            Family::DistilBert => ["activation", "dim", "n_heads", "n_layers", "hidden_dim"],
            Family::ModernBert => {
                ["hidden_activation", "hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size"]
            }
        };
        let act = text(act_key, "gelu");
        if act != "gelu" {
            return Err(Error::unsupported(format!(
                "{} runs `{act_key}: \"gelu\"` (the erf form); `{}` has {act:?}",
                super::verb(),
                path.display()
            )));
        }
        let position = match family {
            Family::Bert | Family::Roberta => text("position_embedding_type", "absolute"),
            Family::MpNet => "absolute".to_string(),
            Family::ModernBert => "rotary".to_string(),
            Family::DistilBert if config.get("sinusoidal_pos_embds").and_then(Value::as_bool) == Some(true) => {
                "sinusoidal".to_string()
            }
            Family::DistilBert => "absolute".to_string(),
        };
        if position != "absolute" && family != Family::ModernBert {
            return Err(Error::unsupported(format!(
                "{} runs learned absolute position embeddings; `{}` has {position:?}",
                super::verb(),
                path.display()
            )));
        }
        let hidden = count(&config, hidden_key, &path)?;
        let heads = count(&config, heads_key, &path)?;
        if hidden % heads != 0 {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("`{}`: {hidden_key} {hidden} is not a multiple of {heads_key} {heads}", path.display()),
            ));
        }
        let table = count(&config, "max_position_embeddings", &path)?;
        let position_offset = match family {
            Family::Roberta | Family::MpNet => {
                config.get("pad_token_id").and_then(Value::as_u64).unwrap_or(1) as usize + 1
            }
            Family::Bert | Family::DistilBert | Family::ModernBert => 0,
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
        let (pooling, normalize, include_prompt) = pipeline(layout)?;
        let (prompts, default_prompt) = prompts(dir)?;
        let classifier = classifier(&config, dir, &path)?;
        // sentence-transformers' max_seq_length; without it (version 6 keeps it out of the file), as it derives
        // one: the tokenizer's model_max_length, under the positions (a float like 1e30 means none).
        let max_seq = match read_json(dir, "sentence_bert_config.json")?.and_then(|v| v.get("max_seq_length").cloned())
        {
            Some(v) => v.as_u64().map(|v| v as usize),
            None => read_json(dir, "tokenizer_config.json")?
                .and_then(|v| v.get("model_max_length").and_then(Value::as_u64))
                .map(|v| v as usize),
        };
        let number = |key: &str, default: f64| config.get(key).and_then(Value::as_f64).unwrap_or(default);
        let (hidden_dropout, attention_dropout) = match family {
            Family::Bert | Family::Roberta | Family::MpNet => {
                (number("hidden_dropout_prob", 0.1), number("attention_probs_dropout_prob", 0.1))
            }
            Family::DistilBert => (number("dropout", 0.1), number("attention_dropout", 0.1)),
            Family::ModernBert => (number("mlp_dropout", 0.0), number("attention_dropout", 0.0)),
        };
        let layers = count(&config, layers_key, &path)?;
        let modern = match family {
            Family::ModernBert => Some(modern(&config, layers, &path)?),
            _ => None,
        };
        let intermediate = count(&config, intermediate_key, &path)? * if modern.is_some() { 2 } else { 1 };
        Ok(Config {
            family,
            hidden,
            heads,
            layers,
            intermediate,
            vocab: count(&config, "vocab_size", &path)?,
            positions,
            position_offset,
            // DistilBERT has no token type embeddings: one row of zeros stands for them.
            type_vocab: match family {
                Family::Bert | Family::Roberta => {
                    config.get("type_vocab_size").and_then(Value::as_u64).unwrap_or(2).max(1) as usize
                }
                Family::DistilBert | Family::MpNet | Family::ModernBert => 1,
            },
            // DistilBERT's LayerNorms are built with 1e-12 whatever the config says.
            layer_norm_eps: match family {
                Family::Bert | Family::Roberta | Family::MpNet => number("layer_norm_eps", 1e-12) as f32,
                Family::DistilBert => 1e-12,
                Family::ModernBert => number("norm_eps", 1e-5) as f32,
            },
            pooling,
            normalize,
            max_tokens: max_seq.filter(|m| *m >= 1).unwrap_or(positions).min(positions),
            prompts,
            default_prompt,
            include_prompt,
            classifier,
            modern,
            relative_buckets: match family {
                Family::MpNet => Some(match config.get("relative_attention_num_buckets") {
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

/// ModernBERT's layer kinds, rotary bases and window from `config.json`; biases are refused (no checkpoint of the
/// family has them).
fn modern(config: &Value, layers: usize, path: &Path) -> Result<Modern> {
    for key in ["norm_bias", "attention_bias", "mlp_bias"] {
        if config.get(key).and_then(Value::as_bool) == Some(true) {
            return Err(Error::unsupported(format!(
                "{} runs ModernBERT without biases; `{}` has {key}: true",
                super::verb(),
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
            super::verb(),
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
                super::verb(),
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

/// Prompts by name, as `config_sentence_transformers.json` lists them.
type Prompts = Vec<(String, String)>;

/// `config_sentence_transformers.json`'s `prompts` (name to text) and `default_prompt_name`; none without the file.
fn prompts(dir: &Path) -> Result<(Prompts, Option<String>)> {
    let Some(config) = read_json(dir, "config_sentence_transformers.json")? else { return Ok((Vec::new(), None)) };
    let prompts: Vec<(String, String)> = config
        .get("prompts")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, text)| Some((name.clone(), text.as_str()?.to_string())))
        .collect();
    let default = config.get("default_prompt_name").and_then(Value::as_str).map(str::to_string);
    if let Some(name) = default.as_ref().filter(|name| !prompts.iter().any(|(n, _)| n == *name)) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!(
                "`{}` names default prompt {name:?}, which its prompts lack",
                dir.join("config_sentence_transformers.json").display()
            ),
        ));
    }
    Ok((prompts, default))
}

/// The activation of a `*ForSequenceClassification` checkpoint's logit, as sentence-transformers' CrossEncoder
/// reads it (`activation_fn` of `config_sentence_transformers.json` since version 5, before that
/// `sentence_transformers.activation_fn` or `sbert_ce_default_activation_function` in `config.json`; sigmoid for one
/// label when none is there); `None` for other architectures.
fn classifier(config: &Value, dir: &Path, path: &Path) -> Result<Option<Activation>> {
    let architectures = config.get("architectures").and_then(Value::as_array).into_iter().flatten();
    if !architectures.filter_map(Value::as_str).any(|a| a.ends_with("ForSequenceClassification")) {
        return Ok(None);
    }
    let st = read_json(dir, "config_sentence_transformers.json")?;
    let named = st
        .as_ref()
        .and_then(|st| st.get("activation_fn"))
        .or_else(|| config.pointer("/sentence_transformers/activation_fn"))
        .or_else(|| config.get("sbert_ce_default_activation_function"))
        .and_then(Value::as_str);
    match named {
        None | Some("torch.nn.modules.activation.Sigmoid") => Ok(Some(Activation::Sigmoid)),
        Some("torch.nn.modules.linear.Identity") => Ok(Some(Activation::Identity)),
        Some(other) => Err(Error::unsupported(format!(
            "{} applies a sigmoid or nothing to a cross-encoder's score; `{}` names {other:?}",
            crate::path::name("Model.rerank"),
            path.display()
        ))),
    }
}

/// The pooling, normalisation and `include_prompt` `modules.json` lists. Without `modules.json` (a plain Hugging
/// Face model): mean pooling, no normalisation, as sentence-transformers does for such a model.
fn pipeline(layout: &Layout) -> Result<(Pooling, bool, bool)> {
    let Some(modules) = &layout.modules else {
        return Ok((Pooling::Mean, false, true));
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
    let (pooling, include_prompt) = pooling.unwrap_or((Pooling::Mean, true));
    Ok((pooling, normalize, include_prompt))
}

fn read_pooling(dir: &Path) -> Result<(Pooling, bool)> {
    let path = dir.join("config.json");
    let config = read_json(dir, "config.json")?
        .ok_or_else(|| Error::unsupported(format!("the pooling module's `{}` is missing", path.display())))?;
    let include_prompt = config.get("include_prompt").and_then(Value::as_bool).unwrap_or(true);
    read_mode(&config, &path).map(|pooling| (pooling, include_prompt))
}

fn read_mode(config: &Value, path: &Path) -> Result<Pooling> {
    // sentence-transformers 5 writes one `pooling_mode` string; earlier versions one boolean per mode.
    if let Some(mode) = config.get("pooling_mode").and_then(Value::as_str) {
        return match mode {
            "mean" => Ok(Pooling::Mean),
            "cls" => Ok(Pooling::Cls),
            _ => Err(Error::unsupported(format!(
                "{} pools by mean or CLS alone; `{}` has pooling_mode {mode:?}",
                super::verb(),
                path.display()
            ))),
        };
    }
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
