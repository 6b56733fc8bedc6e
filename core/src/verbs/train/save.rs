//! `Trainer.save`: the trained model as a sentence-transformers folder. `model.safetensors` holds every tensor of
//! the original checkpoint in its order, the trained ones as F32 from the master weights and the others (the BERT
//! pooler, which the loss never reaches) byte for byte as loaded; the model folder's other files (`config.json`, the
//! tokenizer's files, `modules.json` and the module folders it names) are copied. Everything is written into a
//! hidden sibling that is renamed into place last, so a failure leaves nothing behind.

use crate::error::{Error, Result};
use crate::families::bert::master::Master;
use crate::model::Weights;
use safetensors::tensor::{Dtype, TensorView};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Files of a model folder that are weights (rewritten, or not ours to carry over).
fn is_weights(name: &str) -> bool {
    name.ends_with(".safetensors")
        || name.ends_with(".safetensors.index.json")
        || name.ends_with(".bin")
        || name.ends_with(".onnx")
        || name.ends_with(".h5")
        || name.ends_with(".msgpack")
        || name.ends_with(".ot")
}

/// Writes the folder at `directory`, which must not exist yet.
pub fn folder(directory: &str, weights: &dyn Weights, names: &[String], master: &Master) -> Result<()> {
    let target = PathBuf::from(directory);
    if directory.is_empty() {
        return Err(Error::invalid_argument("directory", "must name a folder to create, got an empty path"));
    }
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(Error::invalid_argument("directory", format!("`{directory}` already exists; name a new folder")));
    }
    let file_name = target
        .file_name()
        .ok_or_else(|| Error::invalid_argument("directory", format!("`{directory}` names no folder")))?
        .to_string_lossy()
        .into_owned();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temporary = parent.join(format!(".{file_name}.uform-saving-{}", std::process::id()));
    // The error names the folder the caller asked for, not the temporary sibling.
    std::fs::create_dir(&temporary).map_err(|e| Error::io("creating", &target, &e))?;
    let written = write(&temporary, weights, names, master)
        .and_then(|()| std::fs::rename(&temporary, &target).map_err(|e| Error::io("renaming into", &target, &e)));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&temporary);
    }
    written
}

fn write(dir: &Path, weights: &dyn Weights, names: &[String], master: &Master) -> Result<()> {
    let trained: HashMap<&str, &[f32]> =
        master.tensors.iter().map(|t| (t.name.as_str(), &master.values[t.range.clone()])).collect();
    let mut bytes: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::with_capacity(names.len());
    for name in names {
        let view = weights
            .tensor(name)
            .ok_or_else(|| Error::internal(format!("tensor `{name}` vanished from the weights")))?;
        let (dtype, data) = match trained.get(name.as_str()) {
            Some(values) => (Dtype::F32, values.iter().flat_map(|v| v.to_le_bytes()).collect()),
            None => {
                let dtype =
                    serde_json::from_value(serde_json::Value::String(view.dtype.to_string())).map_err(|_| {
                        Error::internal(format!("tensor `{name}` has dtype {} safetensors cannot write", view.dtype))
                    })?;
                (dtype, view.data.to_vec())
            }
        };
        bytes.push((name.clone(), dtype, view.shape.to_vec(), data));
    }
    let views = bytes
        .iter()
        .map(|(name, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(|e| Error::internal(format!("tensor `{name}`: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let file = dir.join("model.safetensors");
    let metadata = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::tensor::serialize_to_file(views, Some(metadata), &file)
        .map_err(|e| Error::io("writing", &file, &std::io::Error::other(e.to_string())))?;
    if let Some(source) = weights.directory() {
        copy_side_files(source, dir)?;
    }
    Ok(())
}

/// Copies the regular files of `source` that are not weights, and the module folders `modules.json` names.
fn copy_side_files(source: &Path, dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(source).map_err(|e| Error::io("listing", source, &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("listing", source, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().map_err(|e| Error::io("reading", &entry.path(), &e))?;
        if kind.is_file() && !is_weights(&name) {
            let to = dir.join(&name);
            std::fs::copy(entry.path(), &to).map_err(|e| Error::io("copying to", &to, &e))?;
        }
    }
    let Ok(modules) = std::fs::read_to_string(source.join("modules.json")) else { return Ok(()) };
    let list: Vec<serde_json::Value> = serde_json::from_str(&modules).unwrap_or_default();
    for module in list {
        let sub = module.get("path").and_then(|p| p.as_str()).unwrap_or("");
        // Only plain relative folder names inside the model folder.
        if sub.is_empty() || sub.contains("..") || Path::new(sub).is_absolute() {
            continue;
        }
        let from = source.join(sub);
        if !from.is_dir() {
            continue;
        }
        let to = dir.join(sub);
        std::fs::create_dir_all(&to).map_err(|e| Error::io("creating", &to, &e))?;
        for entry in std::fs::read_dir(&from).map_err(|e| Error::io("listing", &from, &e))? {
            let entry = entry.map_err(|e| Error::io("listing", &from, &e))?;
            if entry.file_type().map(|k| k.is_file()).unwrap_or(false)
                && !is_weights(&entry.file_name().to_string_lossy())
            {
                let dst = to.join(entry.file_name());
                std::fs::copy(entry.path(), &dst).map_err(|e| Error::io("copying to", &dst, &e))?;
            }
        }
    }
    Ok(())
}
