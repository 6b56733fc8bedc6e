//! Encode latency and throughput on the test model, through the Rust API, on an executor of 2 threads (or
//! `UFORM_BENCH_THREADS`), with the kernels of `UFORM_BENCH_CPU_CLASS` (absent: this CPU's native class).
//!
//! `UFORM_TEST_MODEL_DIR=… cargo run --release -p uform-core --example encode_bench`
//!
//! Workloads (tokenisation included): batch 1 of a 13-token sentence, batch 32 of 128-token texts, batch 32 of
//! short sentences. Prints the median of several runs and the GFLOP/s the dense layers and attention reach.

#[path = "../tests/support/file_weights.rs"]
mod file_weights;

use std::time::{Duration, Instant};
use uform_core::families::bert::Encoder;
use uform_core::verbs::encode::{embed, kernels_for};
use uform_core::{EncodeTextOptions, Executor, ExecutorForRamConfig, Mood};

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let start = Instant::now();
    let dir = file_weights::test_model_dir();
    let threads: u32 = std::env::var("UFORM_BENCH_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2);
    let class = std::env::var("UFORM_BENCH_CPU_CLASS").ok();
    let executor = Executor::for_ram(ExecutorForRamConfig {
        threads: Some(threads),
        cpu_class: class.clone(),
        ..Default::default()
    })
    .unwrap();
    let weights = file_weights::FileWeights::open(&dir);
    let precision = std::env::var("UFORM_BENCH_PRECISION").ok();
    let precision = precision.as_deref().map_or(uform_core::Precision::F32, |p| {
        uform_core::Precision::parse(p).unwrap_or_else(|| panic!("UFORM_BENCH_PRECISION: f32 or bf16, got {p:?}"))
    });
    let encoder = Encoder::prepare(&weights, precision).unwrap();
    let c = encoder.config().clone();
    let opts = EncodeTextOptions::default();
    let first = embed(&encoder, &executor, &["hello".to_string()], &opts).unwrap();
    assert_eq!(first.columns as usize, c.hidden);
    println!(
        "encode_bench: {threads} threads, {precision} kernels {} (cpuClass {}), process start to first embedding {:.1} ms",
        kernels_for(class.as_deref()).unwrap(),
        class.as_deref().unwrap_or("native"),
        start.elapsed().as_secs_f64() * 1e3
    );
    let flop_per_text = |tokens: usize| {
        let dense = 2.0 * (4 * c.hidden * c.hidden + 2 * c.hidden * c.intermediate) as f64 * tokens as f64;
        let attention = 4.0 * (tokens * tokens * c.hidden) as f64;
        (dense + attention) * c.layers as f64
    };

    let sentence = "The quick brown fox jumps over the lazy dog today.".to_string();
    let words: Vec<&str> = "system language model vector kernel thread memory cache token layer".split(' ').collect();
    let long: String = (0..200).map(|i| words[i % words.len()]).collect::<Vec<_>>().join(" ");
    let short = [
        "A man is eating food.",
        "The new movie is awesome.",
        "A cat sits on the mat today.",
        "Where is the nearest train station?",
    ];
    let workloads: Vec<(&str, Vec<String>, Option<u32>, usize)> = vec![
        ("batch 1, ~13 tokens", vec![sentence], None, 13),
        ("32 x 128 tokens", vec![long; 32], Some(128), 128),
        ("32 short (~10 tokens)", (0..32).map(|i| short[i % 4].to_string()).collect(), None, 10),
    ];
    for (name, texts, max_tokens, tokens) in workloads {
        let options = EncodeTextOptions { max_tokens, ..Default::default() };
        let runs = if tokens >= 128 { 7 } else { 101 };
        let mut times = Vec::with_capacity(runs);
        for _ in 0..3 {
            embed(&encoder, &executor, &texts, &options).unwrap();
        }
        for _ in 0..runs {
            let t = Instant::now();
            embed(&encoder, &executor, &texts, &options).unwrap();
            times.push(t.elapsed());
        }
        let m = median(times).as_secs_f64();
        let flop = flop_per_text(tokens) * texts.len() as f64;
        println!(
            "{name:24} median {:8.3} ms  {:8.1} texts/s  {:6.1} GFLOP/s",
            m * 1e3,
            texts.len() as f64 / m,
            flop / m / 1e9
        );
    }
    executor.drain(Mood::Parked).unwrap();
}
