//! A tiny random-weight BERT for the runs under valgrind: the test model's folder (tokenizer, sentence-transformers
//! modules) around an encoder of width 32 (2 heads, 2 layers, intermediate 64) whose tensors are the test model's
//! names with their shapes cut down, filled from a fixed seed. The same code paths as all-MiniLM-L6-v2 with about a
//! hundredth of its products: valgrind checks memory, and the native runs keep checking MiniLM's numbers.

use safetensors::tensor::{Dtype, SafeTensorError, SafeTensors, TensorView};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const HIDDEN: usize = 32;
const INTERMEDIATE: usize = 64;
const LAYERS: usize = 2;

/// The tiny model in target/tiny-bert, written from the test model once per run: the suites that check memory
/// rather than MiniLM's numbers (valgrind's C runs, the Node and Python loops of 10,000 encode calls) load it, named
/// in `UFORM_TEST_TINY_MODEL_DIR`.
pub fn dir() -> Result<PathBuf, String> {
    static WRITTEN: OnceLock<PathBuf> = OnceLock::new();
    if let Some(dir) = WRITTEN.get() {
        return Ok(dir.clone());
    }
    let dir = crate::util::root().join("target/tiny-bert");
    write(&crate::util::test_model_dir()?, &dir)?;
    Ok(WRITTEN.get_or_init(|| dir).clone())
}

/// Writes the tiny model into `to` (made afresh) from the test model's folder `from`.
fn write(from: &Path, to: &Path) -> Result<(), String> {
    let fail = |what: &str, path: &Path, e: &dyn std::fmt::Display| format!("{what} {}: {e}", path.display());
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| fail("cannot remove", to, &e))?;
    }
    copy_folder(from, to)?;
    let config_path = to.join("config.json");
    let mut config = read_json(&config_path)?;
    let size = |key: &str| config[key].as_u64().map(|n| n as usize);
    let (hidden, intermediate) = (size("hidden_size"), size("intermediate_size"));
    let (Some(hidden), Some(intermediate)) = (hidden, intermediate) else {
        return Err(format!("{} names no hidden_size or intermediate_size", config_path.display()));
    };
    config["hidden_size"] = json!(HIDDEN);
    config["intermediate_size"] = json!(INTERMEDIATE);
    config["num_attention_heads"] = json!(2);
    config["num_hidden_layers"] = json!(LAYERS);
    write_json(&config_path, &config)?;
    let pooling = to.join("1_Pooling/config.json");
    if pooling.is_file() {
        let mut value = read_json(&pooling)?;
        value["word_embedding_dimension"] = json!(HIDDEN);
        write_json(&pooling, &value)?;
    }
    let weights = to.join("model.safetensors");
    let bytes = std::fs::read(from.join("model.safetensors")).map_err(|e| fail("cannot read", from, &e))?;
    let cut = |n: usize| {
        if n == hidden {
            HIDDEN
        } else if n == intermediate {
            INTERMEDIATE
        } else {
            n
        }
    };
    std::fs::write(&weights, shrink(&bytes, cut)?).map_err(|e| fail("cannot write", &weights, &e))
}

/// The safetensors file `bytes` with every F32 tensor's dimensions passed through `cut`, the layers past `LAYERS`
/// left out, and values from a fixed-seed generator: LayerNorm scales near 1, everything else within ±0.1. Other
/// dtypes (BERT's I64 `position_ids`) are copied as they are. Read and written with the safetensors crate core uses.
fn shrink(bytes: &[u8], cut: impl Fn(usize) -> usize) -> Result<Vec<u8>, String> {
    let model = SafeTensors::deserialize(bytes).map_err(|e| format!("the test model's model.safetensors: {e}"))?;
    let mut tensors = model.tensors();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut out: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, view) in tensors {
        let layer = name.strip_prefix("encoder.layer.").and_then(|rest| rest.split('.').next()?.parse::<usize>().ok());
        if layer.is_some_and(|l| l >= LAYERS) {
            continue;
        }
        if view.dtype() != Dtype::F32 {
            out.push((name, view.dtype(), view.shape().to_vec(), view.data().to_vec()));
            continue;
        }
        let shape: Vec<usize> = view.shape().iter().map(|&n| cut(n)).collect();
        let scale = name.ends_with("LayerNorm.weight");
        let mut data = Vec::with_capacity(shape.iter().product::<usize>() * 4);
        for _ in 0..shape.iter().product::<usize>() {
            // A 64-bit LCG's top 24 bits: a uniform value in [-1, 1).
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let unit = ((seed >> 40) as f32 / (1u64 << 23) as f32) - 1.0;
            data.extend_from_slice(&(if scale { 1.0 + 0.1 * unit } else { 0.1 * unit }).to_le_bytes());
        }
        out.push((name, Dtype::F32, shape, data));
    }
    let views = out
        .iter()
        .map(|(name, dtype, shape, data)| Ok((name.as_str(), TensorView::new(*dtype, shape.clone(), data)?)))
        .collect::<Result<Vec<_>, SafeTensorError>>()
        .map_err(|e| e.to_string())?;
    safetensors::serialize(views, None).map_err(|e| e.to_string())
}

fn copy_folder(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_folder(&source, &target)?;
        } else if entry.file_name() != "model.safetensors" {
            std::fs::copy(&source, &target).map_err(|e| format!("cannot copy {}: {e}", source.display()))?;
        }
    }
    Ok(())
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    let text = serde_json::to_vec_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
