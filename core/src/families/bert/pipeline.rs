//! What sentence-transformers' modules say of a BERT-family encoder's pipeline: `modules.json` and the pooling
//! module's `config.json` (the pooling, the normalisation, `include_prompt`), `config_sentence_transformers.json`
//! (the prompts, a cross-encoder's activation). The folder's parts are found as [`crate::model::layout`] says.

use crate::error::{Error, ErrorKind, Result};
use crate::families::verb;
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

/// What a sequence-classification checkpoint (sentence-transformers' CrossEncoder layout) applies to its logit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreActivation {
    Sigmoid,
    Identity,
}

/// Prompts by name, as `config_sentence_transformers.json` lists them.
pub type Prompts = Vec<(String, String)>;

/// `config_sentence_transformers.json`'s `prompts` (name to text) and `default_prompt_name`; none without the file.
pub(super) fn prompts(dir: &Path) -> Result<(Prompts, Option<String>)> {
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
pub(super) fn classifier(config: &Value, dir: &Path, path: &Path) -> Result<Option<ScoreActivation>> {
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
        None | Some("torch.nn.modules.activation.Sigmoid") => Ok(Some(ScoreActivation::Sigmoid)),
        Some("torch.nn.modules.linear.Identity") => Ok(Some(ScoreActivation::Identity)),
        Some(other) => Err(Error::unsupported(format!(
            "{} applies a sigmoid or nothing to a cross-encoder's score; `{}` names {other:?}",
            crate::path::name("Model.rerank"),
            path.display()
        ))),
    }
}

/// The pooling, normalisation and `include_prompt` `modules.json` lists. Without `modules.json` (a plain Hugging
/// Face model): mean pooling, no normalisation, as sentence-transformers does for such a model.
pub(super) fn pipeline(layout: &Layout) -> Result<(Pooling, bool, bool)> {
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
                    verb(),
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
                verb(),
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
            verb(),
            path.display()
        ))),
    }
}
