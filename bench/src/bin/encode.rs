//! UForm's runtime in `cargo xtask bench encode`: `Model::load_ram` + `encode_text` on a 2-thread executor, driven
//! over stdin/stdout by bench/encode/driver.py (the protocol is in bench/encode/README.md), and this machine's FMA
//! peak, which the table divides by.
//!
//! `encode MODEL_DIR` (with UFORM_BENCH_WORKLOADS naming workloads.json): prints `{"ready": …}` once the first
//! embedding exists, or `{"unavailable": "<error>"}`; then answers `{"run": W, "reps": N}` with the N encode times
//! of workload W, and `{"embed": W}` with its rows.
//!
//! `encode --peak`: GFLOP/s of fp32 fused multiply-adds on UFORM_BENCH_THREADS threads (default 2), each running
//! 16 independent accumulator chains of the widest FMA this CPU has (AVX-512, else AVX2+FMA); best of 5 rounds.
//! Each thread's FLOP count is divided by its own CPU time (`peak_gflops`: the cores' peak, whatever else runs on
//! the machine); `wall_gflops` divides by wall time instead (what this process got).

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use uform_core::{EncodeTextOptions, Executor, ExecutorForRamConfig, Model, ModelLoadRamConfig};

fn threads() -> usize {
    std::env::var("UFORM_BENCH_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2)
}

fn reply(message: Value) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{message}").and_then(|()| out.flush()).expect("stdout");
}

fn texts(workloads: &Value, name: &str) -> Vec<String> {
    let list = workloads[name].as_array().unwrap_or_else(|| panic!("workloads.json has no list `{name}`"));
    list.iter().map(|t| t.as_str().expect("texts are strings").to_string()).collect()
}

fn load(model_dir: &str) -> uform_core::Result<Model> {
    let config = ExecutorForRamConfig { threads: Some(threads() as u32), ..Default::default() };
    let executor = Executor::for_ram(config)?;
    Model::load_ram(model_dir, ModelLoadRamConfig { executor, memory_domains: None })
}

fn worker(model_dir: &str) {
    let path = std::env::var("UFORM_BENCH_WORKLOADS").expect("UFORM_BENCH_WORKLOADS names workloads.json");
    let workloads: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("workloads.json")).expect("workloads.json is JSON");
    let encode = |model: &Model, texts: &[String]| model.encode_text(texts, EncodeTextOptions::default());
    let model = match load(model_dir).and_then(|m| encode(&m, &texts(&workloads, "latency")).map(|e| (m, e))) {
        Ok((model, first)) => {
            let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
            let shape = [first.rows, first.columns];
            reply(json!({"ready": "uform (Rust)", "first_embedding_at": at, "shape": shape}));
            model
        }
        Err(e) => {
            eprintln!("uform: unavailable ({e})");
            reply(json!({ "unavailable": e.to_string() }));
            return;
        }
    };
    for line in std::io::stdin().lock().lines() {
        let command: Value = serde_json::from_str(&line.expect("stdin")).expect("a JSON command");
        if let Some(name) = command["run"].as_str() {
            let batch = texts(&workloads, name);
            let reps = command["reps"].as_u64().unwrap_or(1);
            let seconds: Vec<f64> = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    encode(&model, &batch).expect("encode_text");
                    start.elapsed().as_secs_f64()
                })
                .collect();
            reply(json!({ "seconds": seconds }));
        } else if let Some(name) = command["embed"].as_str() {
            let m = encode(&model, &texts(&workloads, name)).expect("encode_text");
            let rows: Vec<&[f32]> = m.data.chunks(m.columns.max(1) as usize).collect();
            reply(json!({ "embeddings": rows }));
        }
    }
    model.free().expect("free");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--peak") => reply(uform_bench::peak::fma_peak(threads())),
        Some(dir) => worker(dir),
        None => {
            eprintln!("usage: encode MODEL_DIR | encode --peak");
            std::process::exit(2);
        }
    }
}
