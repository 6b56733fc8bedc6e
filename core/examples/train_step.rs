//! Times `Trainer::step` on batches of 128-token pairs, for profiling the training pass by itself:
//! `UFORM_TEST_MODEL_DIR=… cargo run --release -p uform-core --example train_step [pairs] [steps]`.
//! The side-by-side comparison with torch is `cargo xtask bench train`.

use uform_core::{Executor, ExecutorForRamConfig, Model, ModelLoadRamConfig, Trainer, TrainerContrastiveConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let pairs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(32);
    let steps: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(4);
    let dir = std::env::var("UFORM_TEST_MODEL_DIR").expect("set UFORM_TEST_MODEL_DIR to the test model's folder");
    let executor = Executor::for_ram(ExecutorForRamConfig { threads: Some(2), ..Default::default() }).unwrap();
    let model = Model::load_ram(
        &dir,
        ModelLoadRamConfig { executor: Some(executor), memory_domains: None, precision: None, revision: None },
    )
    .unwrap();
    let config = TrainerContrastiveConfig { dropout: Some(0.0), max_tokens: Some(128), ..Default::default() };
    let trainer = Trainer::contrastive(&model, config).unwrap();
    let words = ["river", "market", "signal", "garden", "engine", "story", "winter", "cloud", "paper", "light"];
    let text = |seed: usize| -> String {
        (0..160).map(|i| words[(i * 7 + seed * 13 + i * i * seed) % words.len()]).collect::<Vec<_>>().join(" ")
    };
    for s in 0..steps {
        let anchors: Vec<String> = (0..pairs).map(|i| text(2 * i + s)).collect();
        let positives: Vec<String> = (0..pairs).map(|i| text(2 * i + 1 + s)).collect();
        let step = trainer.step(&anchors, &positives).unwrap();
        println!("step {}: {:.3} s, loss {:.4}", step.step, step.seconds, step.loss);
    }
    if let Ok(to) = std::env::var("UFORM_SAVE_TO") {
        trainer.save(&to).unwrap();
        println!("saved to {to}");
    }
}
