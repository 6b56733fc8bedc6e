//! What the model folder says: the BERT shape from `config.json`, and from sentence-transformers' `modules.json`,
//! `1_Pooling/config.json` and `sentence_bert_config.json` the pooling, the normalisation and the maximum length.
//!
//! The layout ([`Layout`]): the folder holding `modules.json` is the model's root, and its Transformer module's
//! `path` (`""` in today's layout, `0_Transformer` in older ones) holds `config.json`, `tokenizer.json`,
//! `sentence_bert_config.json` and the weights. The weights' folder may be either: a root, or the Transformer folder
//! of a root whose `modules.json` names it. Without `modules.json` the weights' folder is both (a plain Hugging Face
//! model: mean pooling, no normalisation).
//!
//! Every side file is read like the weights ([`read_side`]): a regular file (a FIFO or a device is an invalid
//! argument, never a blocked read), at most [`MAX_CONFIG_BYTES`] ([`MAX_TOKENIZER_BYTES`] for `tokenizer.json`),
//! and a module's `path` must be `""` or a relative path of plain names inside the root (no `..`, not absolute).

use crate::error::{Error, ErrorKind, Result};
use crate::model::source::{read_regular, FileProblem};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// The largest configuration JSON read: `config.json`, `modules.json`, a module's `config.json`,
/// `sentence_bert_config.json`.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;
/// The largest `tokenizer.json` read.
pub const MAX_TOKENIZER_BYTES: u64 = 100_000_000;

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

/// Reads a side file of the model folder whole, checked like the weights: `None` when it does not exist; a file
/// that is not a regular file or is over `limit` bytes is an invalid argument naming it.
pub fn read_side(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    match read_regular(path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(FileProblem::NotFound(_)) => Ok(None),
        Err(FileProblem::NotRegular(kind)) => {
            Err(Error::new(ErrorKind::InvalidArgument, format!("`{}` is {kind}, not a regular file", path.display())))
        }
        Err(FileProblem::TooLarge(len)) => Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("`{}` is {len} bytes, over the {limit}-byte limit for a model's side file", path.display()),
        )),
        Err(FileProblem::Io(action, e)) => Err(Error::io(action, path, &e)),
    }
}

fn read_json(dir: &Path, name: &str) -> Result<Option<Value>> {
    let path = dir.join(name);
    let Some(bytes) = read_side(&path, MAX_CONFIG_BYTES)? else { return Ok(None) };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::new(ErrorKind::InvalidArgument, format!("`{}` is not valid JSON: {e}", path.display())))
}

/// One entry of `modules.json`: the last segment of its `type` (`Transformer`, `Pooling`, …) and its folder
/// relative to the root.
#[derive(Clone, Debug)]
pub struct Module {
    pub kind: String,
    pub path: PathBuf,
}

/// The entries of `dir/modules.json`, `None` without one; a `path` that leaves the folder is an invalid argument.
pub fn modules(dir: &Path) -> Result<Option<Vec<Module>>> {
    let file = dir.join("modules.json");
    let Some(json) = read_json(dir, "modules.json")? else { return Ok(None) };
    let list = json
        .as_array()
        .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, format!("`{}` is not a list", file.display())))?;
    let mut modules = Vec::with_capacity(list.len());
    for module in list {
        let kind = module.get("type").and_then(Value::as_str).unwrap_or("");
        let path = module.get("path").and_then(Value::as_str).unwrap_or("");
        let inside = Path::new(path).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "`{}` puts module {kind:?} at {path:?}, outside the model's folder: a module's path is \"\" or \
                     relative, without `..`",
                    file.display()
                ),
            ));
        }
        modules.push(Module { kind: kind.rsplit('.').next().unwrap_or("").to_string(), path: PathBuf::from(path) });
    }
    Ok(Some(modules))
}

/// The folder `modules.json` in `dir` puts its Transformer module in, when that is not `dir` itself: where the
/// weights of such a root are.
pub fn transformer_folder(dir: &Path) -> Result<Option<PathBuf>> {
    let Some(modules) = modules(dir)? else { return Ok(None) };
    Ok(modules
        .iter()
        .find(|m| m.kind == "Transformer")
        .map(|m| dir.join(&m.path))
        .filter(|folder| folder.components().ne(dir.components())))
}

/// Where a sentence-transformers model's parts are (module documentation).
#[derive(Clone, Debug)]
pub struct Layout {
    /// The folder holding `modules.json` and the other modules' folders.
    pub root: PathBuf,
    /// The Transformer module's folder: `config.json`, `tokenizer.json`, `sentence_bert_config.json`.
    pub transformer: PathBuf,
    /// `modules.json`'s entries, `None` without one.
    pub modules: Option<Vec<Module>>,
}

impl Layout {
    /// The layout around `dir`, the folder of the weights.
    pub fn around(dir: &Path) -> Result<Layout> {
        if let Some(modules) = modules(dir)? {
            let transformer =
                modules.iter().find(|m| m.kind == "Transformer").map_or(dir.into(), |m| dir.join(&m.path));
            return Ok(Layout { root: dir.into(), transformer, modules: Some(modules) });
        }
        // An older layout, loaded from its `0_Transformer/`: the root above names this folder. A parent whose
        // `modules.json` cannot be read or does not name this folder is not this model's root.
        let parent = match dir.parent() {
            Some(p) if p.as_os_str().is_empty() => Path::new("."),
            Some(p) => p,
            None => Path::new(".."),
        };
        if let (Some(name), Ok(Some(modules))) = (dir.file_name(), modules(parent)) {
            let names_this =
                |m: &Module| m.kind == "Transformer" && m.path.components().eq(Path::new(name).components());
            if modules.iter().any(names_this) {
                return Ok(Layout { root: parent.into(), transformer: dir.into(), modules: Some(modules) });
            }
        }
        Ok(Layout { root: dir.into(), transformer: dir.into(), modules: None })
    }
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
                crate::encode::verb(),
                dir.display()
            ))
        })?;
        let model_type = config.get("model_type").and_then(Value::as_str).unwrap_or("");
        if model_type != "bert" {
            return Err(Error::unsupported(format!(
                "{} runs BERT-family encoders (`model_type: \"bert\"`); `{}` has model_type {:?}",
                crate::encode::verb(),
                path.display(),
                config.get("model_type").map_or("absent".to_string(), Value::to_string)
            )));
        }
        let text = |key: &str, default: &str| config.get(key).and_then(Value::as_str).unwrap_or(default).to_string();
        let act = text("hidden_act", "gelu");
        if act != "gelu" {
            return Err(Error::unsupported(format!(
                "{} runs BERT with `hidden_act: \"gelu\"` (the erf form); `{}` has {act:?}",
                crate::encode::verb(),
                path.display()
            )));
        }
        let position = text("position_embedding_type", "absolute");
        if position != "absolute" {
            return Err(Error::unsupported(format!(
                "{} runs BERT with absolute position embeddings; `{}` has {position:?}",
                crate::encode::verb(),
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
                    crate::encode::verb(),
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
            crate::encode::verb(),
            path.display()
        ))),
    }
}
