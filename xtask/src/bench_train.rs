//! `cargo xtask bench train [--no-bindings] [--steps N] [--warmup W]`: UForm's `Trainer.contrastive` step through
//! Rust and Python against sentence-transformers' `SentenceTransformerTrainer` on torch, on the same batches of 16
//! and 32 pairs of 128-token texts and the same 2 threads, step by step in turns in one run.
//!
//! Uses the benchmarks' virtual environment (`bench_venv.rs`: torch, sentence-transformers, datasets, accelerate and
//! the model), builds the Rust worker (bench/src/bin/train.rs) and, unless `--no-bindings`, the Python wheel as its
//! tests do, and hands over to bench/train/driver.py, which makes the texts (target/bench-train/texts.json), runs the
//! trainers, replays tests/fixtures/train/reference.json through the Rust worker, and prints the table and the
//! `train: torch_ratio=X loss_max_rel_diff=Y` line. A wheel that does not build is reported unavailable.
//!
//! `cargo xtask bench train --mesh [--steps N] [--warmup W]`: the trainer across 2 processes (1 thread each, one
//! mesh) against torch's DistributedDataParallel with gloo under torchrun, same data and settings, in one run
//! (bench/train/mesh.py); prints the table and `train-mesh: ddp_ratio=X loss_max_rel_diff=Y`.

use crate::bench_venv::{bench_venv, model_dir};
use crate::util::{cargo, root, status};
use std::process::Command;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut bindings = true;
    let mut mesh = false;
    let (mut steps, mut warmup) = ("5".to_string(), "2".to_string());
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--no-bindings" => bindings = false,
            "--mesh" => mesh = true,
            "--steps" => steps = rest.next().ok_or("--steps takes a number")?.clone(),
            "--warmup" => warmup = rest.next().ok_or("--warmup takes a number")?.clone(),
            other => return Err(format!("bench train: unknown argument `{other}`")),
        }
    }
    let root = root();
    let python = bench_venv()?;
    let model = model_dir(&python)?;
    cargo(&["build", "--release", "--quiet", "-p", "uform-bench", "--bin", "train"])?;
    if mesh {
        let mut driver = Command::new(&python);
        driver
            .arg(root.join("bench/train/mesh.py"))
            .arg("--model-dir")
            .arg(&model)
            .arg("--rust-bin")
            .arg(root.join("target/release/train"))
            .arg("--out-dir")
            .arg(root.join("target/bench-train-mesh"));
        if args.iter().any(|a| a == "--steps") {
            driver.args(["--steps", &steps]);
        }
        if args.iter().any(|a| a == "--warmup") {
            driver.args(["--warmup", &warmup]);
        }
        std::fs::create_dir_all(root.join("target/bench-train-mesh")).map_err(|e| e.to_string())?;
        driver.current_dir(&root);
        return status(driver, "bench/train/mesh.py");
    }

    let mut driver = Command::new(&python);
    driver
        .arg(root.join("bench/train/driver.py"))
        .arg("--model-dir")
        .arg(&model)
        .arg("--rust-bin")
        .arg(root.join("target/release/train"))
        .arg("--fixture")
        .arg(root.join("tests/fixtures/train/reference.json"))
        .arg("--out-dir")
        .arg(root.join("target/bench-train"))
        .args(["--steps", &steps, "--warmup", &warmup]);
    if bindings {
        crate::bench_encode::uform_python(&mut driver);
    } else {
        driver.args(["--skip", "uform python=skipped (--no-bindings)"]);
    }
    driver.current_dir(&root);
    status(driver, "bench/train/driver.py")
}
