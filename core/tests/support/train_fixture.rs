//! What the trainer tests (train.rs, train_mesh.rs) read from a training fixture the same way: its settings as a
//! trainer configuration, and the cosine they compare embeddings by.
#![allow(dead_code)] // each test binary uses its own part of the support module

use serde_json::Value;
use uform_core::TrainerContrastiveConfig;

/// The fixture's `config` as the trainer's, dropout off as the fixture ran.
pub fn config(f: &Value) -> TrainerContrastiveConfig {
    let c = &f["config"];
    TrainerContrastiveConfig {
        learning_rate: c["learning_rate"].as_f64(),
        weight_decay: c["weight_decay"].as_f64(),
        warmup_steps: c["warmup_steps"].as_u64().map(|v| v as u32),
        total_steps: c["max_steps"].as_u64().map(|v| v as u32),
        max_grad_norm: c["max_grad_norm"].as_f64(),
        scale: c["scale"].as_f64(),
        dropout: Some(0.0),
        seed: c["seed"].as_u64(),
        ..Default::default()
    }
}

/// The cosine of two vectors, in f64.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let n = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (n(a) * n(b))
}
