//! Where a model folder's parts are, whatever its architecture: sentence-transformers' `modules.json` and the
//! Transformer module's folder ([`Layout`]), and how every side file is read ([`read_side`]).
//!
//! The layout: the folder holding `modules.json` is the model's root, and its Transformer module's `path` (`""` in
//! today's layout, `0_Transformer` in older ones) holds `config.json`, `tokenizer.json`, `sentence_bert_config.json`
//! and the weights. The weights' folder may be either: a root, or the Transformer folder of a root whose
//! `modules.json` names it. Without `modules.json` the weights' folder is both (a plain Hugging Face model).
//!
//! Every side file is read like the weights: a regular file (a FIFO or a device is an invalid argument, never a
//! blocked read), at most [`MAX_CONFIG_BYTES`] ([`MAX_TOKENIZER_BYTES`] for `tokenizer.json`), and a module's
//! `path` must be `""` or a relative path of plain names inside the root (no `..`, not absolute).

use super::file::{read_regular, FileProblem};
use crate::error::{Error, ErrorKind, Result};
use serde_json::Value;
use std::path::{Component, Path, PathBuf};

/// The largest configuration JSON read: `config.json`, `modules.json`, a module's `config.json`,
/// `sentence_bert_config.json`.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;
/// The largest `tokenizer.json` read.
pub const MAX_TOKENIZER_BYTES: u64 = 100_000_000;

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

pub fn read_json(dir: &Path, name: &str) -> Result<Option<Value>> {
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
