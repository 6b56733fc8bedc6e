//! UForm's trainer in `cargo xtask bench train`: `Trainer::contrastive` + `step` on a 2-thread executor, driven over
//! stdin/stdout by bench/train/driver.py (the protocol is in bench/train/README.md).
//!
//! `train MODEL_DIR PAIRS` (UFORM_BENCH_TEXTS naming the driver's texts.json): loads the model, makes a trainer
//! (dropout 0, 128 tokens, the schedule over all of the file's batches) and prints `{"ready": …}`, or
//! `{"unavailable": "<error>"}`; then answers `{"step": K}` with the time, loss and peak RSS of a step on batch K of
//! `batches[PAIRS]`.
//!
//! `train --fixture FIXTURE MODEL_DIR`: the 20 steps of tests/fixtures/train/reference.json, as
//! core/tests/train.rs runs them; prints each step's loss beside sentence-transformers' and the largest relative
//! difference.
//!
//! `train --mesh RANK WORLD DIRECTORY STEPS MODEL_DIR` (UFORM_BENCH_TEXTS as above): one rank of a trainer across
//! processes for `cargo xtask bench train --mesh`: joins the mesh `DIRECTORY/bench`, trains on its contiguous share
//! of each of the first STEPS batches of 32 pairs (settings as the worker's), and prints one JSON line with each
//! step's seconds, loss and seconds in collectives.
//!
//! `train --peak`: the FMA peak, as `encode --peak` measures it.

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::time::Instant;
use uform_bench::peak::{fma_peak, peak_rss_bytes};
use uform_core::{
    Executor, ExecutorForRamConfig, Mesh, MeshOptions, Model, ModelLoadRamConfig, Trainer, TrainerContrastiveConfig,
};

/// The fixture's settings as the trainer's, read as core's trainer tests read them.
#[path = "../../../core/tests/support/train_fixture.rs"]
mod train_fixture;

fn threads() -> usize {
    std::env::var("UFORM_BENCH_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2)
}

fn reply(message: Value) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{message}").and_then(|()| out.flush()).expect("stdout");
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().expect("a list of texts").iter().map(|t| t.as_str().expect("texts are strings").into()).collect()
}

fn load(model_dir: &str) -> uform_core::Result<Model> {
    let config = ExecutorForRamConfig { threads: Some(threads() as u32), ..Default::default() };
    let executor = Executor::for_ram(config)?;
    Model::load_ram(
        model_dir,
        ModelLoadRamConfig { executor: Some(executor), memory_domains: None, precision: None, revision: None },
    )
}

/// The batches of `pairs` pairs: (anchors, positives) per step.
fn batches(pairs: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let path = std::env::var("UFORM_BENCH_TEXTS").expect("UFORM_BENCH_TEXTS names texts.json");
    let texts: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("texts.json")).expect("texts.json is JSON");
    let list = texts["batches"][pairs].as_array().unwrap_or_else(|| panic!("texts.json has no batches of {pairs}"));
    list.iter().map(|b| (strings(&b["anchors"]), strings(&b["positives"]))).collect()
}

fn worker(model_dir: &str, pairs: &str) {
    let batches = batches(pairs);
    let made = load(model_dir).and_then(|model| {
        let config = TrainerContrastiveConfig {
            dropout: Some(0.0),
            max_tokens: Some(128),
            total_steps: Some(batches.len() as u32),
            ..Default::default()
        };
        Trainer::contrastive(&model, config).map(|trainer| (model, trainer))
    });
    let (model, trainer) = match made {
        Ok(made) => made,
        Err(e) => {
            eprintln!("uform: unavailable ({e})");
            reply(json!({ "unavailable": e.to_string() }));
            return;
        }
    };
    reply(json!({"ready": "uform (Rust)", "rss_bytes": peak_rss_bytes()}));
    for line in std::io::stdin().lock().lines() {
        let command: Value = serde_json::from_str(&line.expect("stdin")).expect("a JSON command");
        if let Some(k) = command["step"].as_u64() {
            let (anchors, positives) = &batches[k as usize];
            let start = Instant::now();
            let step = trainer.step(anchors, positives).expect("Trainer::step");
            let seconds = start.elapsed().as_secs_f64();
            reply(json!({
                "seconds": seconds,
                "loss": step.loss,
                "learning_rate": step.learning_rate,
                "peak_rss_bytes": peak_rss_bytes(),
            }));
        }
    }
    trainer.free().expect("free the trainer");
    model.free().expect("free the model");
}

/// The 20 steps of the fixture, configured as core/tests/train.rs configures them.
fn fixture(path: &str, model_dir: &str) {
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the fixture")).expect("JSON");
    let config = train_fixture::config(&f);
    let model = load(model_dir).expect("load the model");
    let trainer = Trainer::contrastive(&model, config).expect("Trainer::contrastive");
    let pairs = f["pairs"].as_array().expect("pairs");
    let text = |i: &Value, side: usize| pairs[i.as_u64().unwrap() as usize][side].as_str().unwrap().to_string();
    let (mut worst, mut losses) = (0.0f64, Vec::new());
    for (k, indices) in f["steps"].as_array().expect("steps").iter().enumerate() {
        let indices = indices.as_array().unwrap();
        let anchors: Vec<String> = indices.iter().map(|i| text(i, 0)).collect();
        let positives: Vec<String> = indices.iter().map(|i| text(i, 1)).collect();
        let step = trainer.step(&anchors, &positives).expect("Trainer::step");
        let want = f["loss"][k].as_f64().unwrap();
        worst = worst.max((step.loss - want).abs() / want.abs());
        losses.push([step.loss, want]);
    }
    trainer.free().unwrap();
    model.free().unwrap();
    reply(json!({ "steps": losses.len(), "loss_max_rel_diff": worst, "losses": losses }));
}

/// One rank of the mesh benchmark (see the module documentation).
fn mesh_rank(rank: u32, world: u32, directory: &str, steps: usize, model_dir: &str) {
    let batches = batches("32");
    let executor =
        Executor::for_ram(ExecutorForRamConfig { threads: Some(threads() as u32), ..Default::default() }).unwrap();
    let options = MeshOptions {
        host_domain_index: Some(rank),
        host_domain_count: Some(world),
        directory: Some(directory.into()),
        job: Some("bench".into()),
        ..Default::default()
    };
    let mesh = Mesh::bootstrap(&executor, options).expect("Mesh::bootstrap");
    let model = Model::load_ram(
        model_dir,
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision: None, revision: None },
    )
    .expect("load the model");
    let config = TrainerContrastiveConfig {
        dropout: Some(0.0),
        max_tokens: Some(128),
        total_steps: Some(steps as u32),
        mesh: Some(mesh.clone()),
        ..Default::default()
    };
    let trainer = Trainer::contrastive(&model, config).expect("Trainer::contrastive");
    let (mut seconds, mut losses) = (Vec::new(), Vec::new());
    let (mut collective, mut all_reduce, mut waited) = (Vec::new(), Vec::new(), Vec::new());
    for (anchors, positives) in batches.iter().take(steps) {
        let share = anchors.len() / world as usize;
        let mine = rank as usize * share..(rank as usize + 1) * share;
        let start = Instant::now();
        let step = trainer.step(&anchors[mine.clone()], &positives[mine]).expect("Trainer::step");
        seconds.push(start.elapsed().as_secs_f64());
        losses.push(step.loss);
        let spent = trainer.collective_seconds();
        collective.push(spent.total());
        all_reduce.push(spent.all_reduce);
        waited.push(spent.waited);
    }
    trainer.free().unwrap();
    model.free().unwrap();
    mesh.free().unwrap();
    reply(json!({
        "rank": rank,
        "seconds": seconds,
        "loss": losses,
        "collective_seconds": collective,
        "all_reduce_seconds": all_reduce,
        "waited_seconds": waited,
    }));
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["--peak"] => reply(fma_peak(threads())),
        ["--fixture", path, model_dir] => fixture(path, model_dir),
        ["--mesh", rank, world, directory, steps, model_dir] => mesh_rank(
            rank.parse().expect("RANK"),
            world.parse().expect("WORLD"),
            directory,
            steps.parse().expect("STEPS"),
            model_dir,
        ),
        [model_dir, pairs] => worker(model_dir, pairs),
        _ => {
            eprintln!(
                "usage: train MODEL_DIR PAIRS | train --fixture FIXTURE MODEL_DIR | \
                 train --mesh RANK WORLD DIRECTORY STEPS MODEL_DIR | train --peak"
            );
            std::process::exit(2);
        }
    }
}
