//! A tiny random-weight BERT for the runs under valgrind: the test model's folder (tokenizer, sentence-transformers
//! modules) around an encoder of width 32 (2 heads, 2 layers, intermediate 64) whose tensors are the test model's
//! names with their shapes cut down, filled from a fixed seed. The same code paths as all-MiniLM-L6-v2 with about a
//! hundredth of its products: valgrind checks memory, and the native runs keep checking MiniLM's numbers.

use serde_json::{json, Value};
use std::path::Path;

const HIDDEN: u64 = 32;
const INTERMEDIATE: u64 = 64;
const LAYERS: usize = 2;

/// Writes the tiny model into `to` (made afresh) from the test model's folder `from`.
pub fn write(from: &Path, to: &Path) -> Result<(), String> {
    let fail = |what: &str, path: &Path, e: &dyn std::fmt::Display| format!("{what} {}: {e}", path.display());
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(|e| fail("cannot remove", to, &e))?;
    }
    copy_folder(from, to)?;
    let config_path = to.join("config.json");
    let mut config = read_json(&config_path)?;
    let (hidden, intermediate) = (config["hidden_size"].as_u64(), config["intermediate_size"].as_u64());
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
    let cut = |n: u64| {
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
/// dtypes (BERT's I64 `position_ids`) are copied as they are.
fn shrink(bytes: &[u8], cut: impl Fn(u64) -> u64) -> Result<Vec<u8>, String> {
    let bad = || "the test model's model.safetensors has a malformed header".to_string();
    let size = u64::from_le_bytes(bytes.get(..8).ok_or_else(bad)?.try_into().map_err(|_| bad())?) as usize;
    let header: serde_json::Map<String, Value> =
        serde_json::from_slice(bytes.get(8..8 + size).ok_or_else(bad)?).map_err(|_| bad())?;
    let body = &bytes[8 + size..];
    let mut names: Vec<&String> = header.keys().filter(|k| *k != "__metadata__").collect();
    names.sort();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut out_header, mut data) = (serde_json::Map::new(), Vec::new());
    for name in names {
        let layer = name.strip_prefix("encoder.layer.").and_then(|rest| rest.split('.').next()?.parse::<usize>().ok());
        if layer.is_some_and(|l| l >= LAYERS) {
            continue;
        }
        let entry = &header[name];
        let dtype = entry["dtype"].as_str().ok_or_else(bad)?;
        let shape: Vec<u64> = entry["shape"].as_array().ok_or_else(bad)?.iter().filter_map(Value::as_u64).collect();
        let start = data.len();
        if dtype == "F32" {
            let shape: Vec<u64> = shape.iter().map(|&n| cut(n)).collect();
            let scale = name.ends_with("LayerNorm.weight");
            for _ in 0..shape.iter().product::<u64>() {
                // A 64-bit LCG's top 24 bits: a uniform value in [-1, 1).
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let unit = ((seed >> 40) as f32 / (1u64 << 23) as f32) - 1.0;
                let value = if scale { 1.0 + 0.1 * unit } else { 0.1 * unit };
                data.extend_from_slice(&value.to_le_bytes());
            }
            out_header
                .insert(name.clone(), json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}));
        } else {
            let offsets = entry["data_offsets"].as_array().ok_or_else(bad)?;
            let (from, to) = (offsets[0].as_u64().ok_or_else(bad)?, offsets[1].as_u64().ok_or_else(bad)?);
            data.extend_from_slice(body.get(from as usize..to as usize).ok_or_else(bad)?);
            out_header
                .insert(name.clone(), json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}));
        }
    }
    let mut header = serde_json::to_vec(&out_header).map_err(|e| e.to_string())?;
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(&data);
    Ok(out)
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
