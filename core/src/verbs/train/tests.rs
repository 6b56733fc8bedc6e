//! The whole training pass of a small random BERT checked against finite differences of its loss, for every
//! kernel class this CPU runs, with and without dropout; and the optimiser and schedule against their formulas.

use super::*;
use crate::families::bert::train::{Model, Tape};
use crate::families::tokenize::Tokens;
use crate::families::{Config, Pooling};
use crate::model::TensorView;
use std::path::Path;

/// Weights of a tiny BERT with values from a fixed hash, served as F32 tensors.
struct Random {
    tensors: Vec<(String, Vec<usize>, Vec<u8>)>,
}

impl Weights for Random {
    fn tensor(&self, name: &str) -> Option<TensorView<'_>> {
        self.tensors.iter().find(|t| t.0 == name).map(|(n, s, d)| TensorView {
            name: n,
            dtype: "F32",
            shape: s,
            data: d,
        })
    }
    fn names(&self) -> Vec<&str> {
        self.tensors.iter().map(|t| t.0.as_str()).collect()
    }
    fn directory(&self) -> Option<&Path> {
        None
    }
}

fn config(pooling: Pooling) -> Config {
    Config {
        hidden: 8,
        heads: 2,
        layers: 2,
        intermediate: 12,
        vocab: 11,
        positions: 9,
        type_vocab: 2,
        layer_norm_eps: 1e-12,
        pooling,
        normalize: true,
        max_tokens: 9,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
    }
}

fn random_weights(config: &Config) -> Random {
    // The layout names every tensor; fill each with values from a hash, LayerNorm weights near 1.
    let probe = Master::layout_only(config, "");
    let tensors = probe
        .into_iter()
        .enumerate()
        .map(|(k, (name, shape))| {
            let len: usize = shape.iter().product();
            let layer_norm = name.contains("LayerNorm.weight");
            let data: Vec<u8> = (0..len)
                .flat_map(|i| {
                    let x = ((i * 2654435761 + k * 40503 + 17) % 1009) as f32 / 1009.0 - 0.5;
                    let v = if layer_norm { 1.0 + 0.2 * x } else { 0.6 * x };
                    v.to_le_bytes()
                })
                .collect();
            (name, shape, data)
        })
        .collect();
    Random { tensors }
}

fn batch() -> Vec<Tokens> {
    let texts: [&[u32]; 6] = [&[1, 5, 7, 2], &[1, 3, 2], &[1, 9, 4, 6, 8, 2], &[1, 4, 2], &[1, 10, 5, 3, 2], &[1, 2]];
    texts.iter().map(|ids| Tokens { ids: ids.to_vec(), type_ids: ids.iter().map(|i| i % 2).collect() }).collect()
}

fn loss_of(ex: &Executor, kernels: &Kernels, config: &Config, master: &Master, drop: (Dropout, Dropout)) -> f64 {
    let params = master.params("", config);
    let tokens = batch();
    let mut tape = Tape::default();
    let mut pooled = vec![0.0; tokens.len() * config.hidden];
    tape.forward(ex, kernels, &Model { config, params: &params, master }, &tokens, drop, &mut pooled).unwrap();
    let mut d = vec![0.0; pooled.len()];
    loss::contrastive(&pooled, tokens.len() / 2, config.hidden, 5.0, &mut d)
}

#[test]
fn every_gradient_matches_finite_differences_for_every_kernel_class() {
    let ex = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let mut classes = vec![Some("portable")];
    classes.extend(crate::capabilities::runnable_cpu_classes().into_iter().map(Some));
    for (class, pooling, p) in
        classes.iter().map(|c| (*c, Pooling::Mean, 0.0)).chain([(None, Pooling::Cls, 0.0), (None, Pooling::Mean, 0.25)])
    {
        let kernels = Kernels::for_class(class).unwrap();
        let config = config(pooling);
        let weights = random_weights(&config);
        let mut master = Master::read(&weights, &config, "").unwrap();
        let drop = (Dropout { p, seed: 3, step: 1 }, Dropout { p, seed: 3, step: 1 });
        // The analytic gradient.
        let params = master.params("", &config);
        let tokens = batch();
        let mut tape = Tape::default();
        let mut pooled = vec![0.0; tokens.len() * config.hidden];
        let model = Model { config: &config, params: &params, master: &master };
        tape.forward(&ex, &kernels, &model, &tokens, drop, &mut pooled).unwrap();
        let mut dpooled = vec![0.0; pooled.len()];
        loss::contrastive(&pooled, tokens.len() / 2, config.hidden, 5.0, &mut dpooled);
        let mut grads = vec![f32::NAN; master.values.len()];
        tape.backward(&ex, &kernels, &model, drop, &dpooled, &mut grads).unwrap();
        // Central differences in a few elements of every tensor.
        let tensors = master.tensors.clone();
        let mut checked = 0;
        for t in &tensors {
            for i in (t.range.clone()).step_by((t.range.len() / 4).max(1)).take(4) {
                assert!(grads[i].is_finite(), "{class:?} {pooling:?}: {} [{i}] was not written", t.name);
                let h = 1e-2f32;
                let old = master.values[i];
                master.values[i] = old + h;
                let up = loss_of(&ex, &kernels, &config, &master, drop);
                master.values[i] = old - h;
                let down = loss_of(&ex, &kernels, &config, &master, drop);
                master.values[i] = old;
                let fd = (up - down) / (2.0 * h as f64);
                let got = grads[i] as f64;
                assert!(
                    (fd - got).abs() <= 2e-2 * fd.abs().max(got.abs()) + 2e-4,
                    "{class:?} {pooling:?} dropout {p}: d loss / d {}[{}] = {got}, finite differences {fd}",
                    t.name,
                    i - t.range.start
                );
                checked += 1;
            }
        }
        assert!(checked > 60, "{checked}");
    }
}

#[test]
fn the_schedule_warms_up_then_decays_linearly() {
    let s = Settings {
        learning_rate: 1e-4,
        weight_decay: 0.0,
        warmup_steps: 2,
        total_steps: Some(10),
        max_grad_norm: 1.0,
        scale: 20.0,
        max_tokens: 8,
        hidden_dropout: 0.0,
        attention_dropout: 0.0,
        seed: 0,
    };
    let rates: Vec<f64> = (1..=12).map(|k| s.learning_rate(k)).collect();
    let want = [0.0, 0.5e-4, 1e-4, 0.875e-4, 0.75e-4, 0.625e-4, 0.5e-4, 0.375e-4, 0.25e-4, 0.125e-4, 0.0, 0.0];
    for (got, want) in rates.iter().zip(want) {
        assert!((got - want).abs() < 1e-15, "{rates:?}");
    }
    let constant = Settings { total_steps: None, warmup_steps: 0, ..s };
    assert_eq!(constant.learning_rate(1), 1e-4);
    assert_eq!(constant.learning_rate(1000), 1e-4);
}

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(0) * 4096
}

/// Memory follows the batch, not the number of steps: 10,000 whole steps (forward, loss, backward, AdamW, a new
/// packed encoder) on the tape of one trainer, after 100 to warm it up, grow the process by less than 2 MB.
#[test]
fn ten_thousand_steps_keep_memory_flat() {
    let ex = Executor::for_ram(crate::ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let kernels = Kernels::for_class(None).unwrap();
    let config = config(Pooling::Mean);
    let mut master = Master::read(&random_weights(&config), &config, "").unwrap();
    let tokens = batch();
    let mut tape = Tape::default();
    let (mut pooled, mut dpooled) = (vec![0.0; tokens.len() * 8], vec![0.0; tokens.len() * 8]);
    let drop = (Dropout { p: 0.1, seed: 1, step: 1 }, Dropout { p: 0.1, seed: 1, step: 1 });
    let mut params = master.params("", &config);
    let mut step = |k: u64, master: &mut Master, params: &mut crate::families::bert::params::Params| {
        let model = Model { config: &config, params, master };
        tape.forward(&ex, &kernels, &model, &tokens, drop, &mut pooled).unwrap();
        loss::contrastive(&pooled, tokens.len() / 2, config.hidden, 20.0, &mut dpooled);
        let mut grads = std::mem::take(&mut master.grads);
        let model = Model { config: &config, params, master };
        tape.backward(&ex, &kernels, &model, drop, &dpooled, &mut grads).unwrap();
        master.grads = grads;
        adamw(&ex, master, k, 1e-4, 0.01, 1.0).unwrap();
        *params = master.params("", &config);
    };
    for k in 1..=100 {
        step(k, &mut master, &mut params);
    }
    let before = rss_bytes();
    for k in 101..=10_100 {
        step(k, &mut master, &mut params);
    }
    let grown = rss_bytes().saturating_sub(before);
    assert!(grown < 2 << 20, "10,000 steps grew RSS by {grown} bytes");
    assert!(master.values.iter().all(|v| v.is_finite()));
}
