//! UForm's runtime in `cargo xtask bench encode`: `Model::load_ram` + `encode_text` on a 2-thread executor, driven
//! over stdin/stdout by bench/encode/driver.py (the protocol is in bench/encode/README.md), and this machine's FMA
//! peak, which the table divides by.
//!
//! `encode MODEL_DIR [bf16]` (with UFORM_BENCH_WORKLOADS naming workloads.json; `bf16` loads the model with
//! precision bf16): prints `{"ready": …}` once the first
//! embedding exists, or `{"unavailable": "<error>"}`; then answers `{"run": W, "reps": N}` with the N encode times
//! of workload W, `{"embed": W}` with its rows, and for a cross-encoder `{"rerank": W, "reps": N}` with the N times
//! of scoring workload W's texts against the latency text (`{"rerank": W}`: the scores).
//!
//! `encode --scale MODEL_DIR`: what issue 29 asks of one call at scale, on a 2-thread executor with the default
//! `scratchLimit` (256 MiB): 100,000 texts (the `short` workload's sentences, numbered) in one `encode_text`, its
//! time and the growth of the peak resident size (VmHWM, reset before the call through `/proc/self/clear_refs`);
//! and one text of some 380 tokens (truncated to the model's 256) against the same text repeated to 10 MB and
//! 100 MB, median of 5 calls each: tokenisation reads a bounded prefix, so the three cost about the same.
//!
//! `encode --peak`: GFLOP/s of fp32 fused multiply-adds on UFORM_BENCH_THREADS threads (default 2), each running
//! 16 independent accumulator chains of the widest FMA this CPU has (AVX-512, else AVX2+FMA); best of 5 rounds.
//! Each thread's FLOP count is divided by its own CPU time (`peak_gflops`: the cores' peak, whatever else runs on
//! the machine); `wall_gflops` divides by wall time instead (what this process got).
//!
//! `encode --images MODEL_DIR`: an image-text model's `encode_image` for bench/encode/images.py. Prints
//! `{"ready": …}` once the first image embeds; then answers `{"images": [PATH…], "reps": N}` with the N times of
//! embedding those files (read once, bytes in memory: decoding and preprocessing are timed, reading is not),
//! `{"images": [PATH…]}` with their rows, and `{"decode": [PATH…], "reps": N}` with the N times of decoding and
//! preprocessing them alone (`families::pixels`, on one thread a file, as `encode_image` runs them).
//!
//! `encode --bf16-peak`: the same for this CPU's bf16 products: AMX `tdpbf16ps` on 4 tiles of sums where the CPU
//! and OS offer it, else AVX512_BF16 `vdpbf16ps` on 16 chains (`bench/src/peak.rs`).

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use uform_core::{
    EncodeTextOptions, Executor, ExecutorForRamConfig, Model, ModelLoadRamConfig, Precision, RerankOptions,
};

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

fn load(model_dir: &str, precision: Precision) -> uform_core::Result<Model> {
    let config = ExecutorForRamConfig { threads: Some(threads() as u32), ..Default::default() };
    let executor = Executor::for_ram(config)?;
    Model::load_ram(
        model_dir,
        ModelLoadRamConfig {
            executor: Some(executor),
            memory_domains: None,
            precision: Some(precision),
            revision: None,
        },
    )
}

fn worker(model_dir: &str, precision: Precision) {
    let path = std::env::var("UFORM_BENCH_WORKLOADS").expect("UFORM_BENCH_WORKLOADS names workloads.json");
    let workloads: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("workloads.json")).expect("workloads.json is JSON");
    let encode = |model: &Model, texts: &[String]| model.encode_text(texts, EncodeTextOptions::default());
    let model = match load(model_dir, precision).and_then(|m| encode(&m, &texts(&workloads, "latency")).map(|e| (m, e)))
    {
        Ok((model, first)) => {
            let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
            let shape = [first.rows, first.columns];
            let ready = format!("uform (Rust, {precision})");
            reply(json!({"ready": ready, "first_embedding_at": at, "shape": shape}));
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
        } else if let Some(name) = command["rerank"].as_str() {
            // A cross-encoder's scores of workload `name` against the latency text, timed `reps` times (or, with
            // no `reps`, the scores themselves).
            let (query, documents) = (texts(&workloads, "latency").remove(0), texts(&workloads, name));
            let rerank = || model.rerank(&query, &documents, RerankOptions::default()).expect("rerank");
            match command["reps"].as_u64() {
                Some(reps) => {
                    let seconds: Vec<f64> = (0..reps)
                        .map(|_| {
                            let start = Instant::now();
                            rerank();
                            start.elapsed().as_secs_f64()
                        })
                        .collect();
                    reply(json!({ "seconds": seconds }));
                }
                None => reply(json!({ "scores": rerank().iter().map(|s| s.score).collect::<Vec<_>>() })),
            }
        }
    }
    model.free().expect("free");
}

/// Times `reps` runs of `f`, in seconds.
fn timed(reps: u64, mut f: impl FnMut()) -> Vec<f64> {
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect()
}

fn image_worker(model_dir: &str) {
    let read = |paths: &Value| -> Vec<Vec<u8>> {
        let paths = paths.as_array().expect("a list of paths");
        paths.iter().map(|p| std::fs::read(p.as_str().expect("a path")).expect("an image file")).collect()
    };
    let encode = |model: &Model, images: &[Vec<u8>]| {
        let borrowed: Vec<&[u8]> = images.iter().map(Vec::as_slice).collect();
        model.encode_image(&borrowed, uform_core::EncodeImageOptions::default())
    };
    let model = match load(model_dir, Precision::F32) {
        Ok(model) => model,
        Err(e) => return reply(json!({ "unavailable": e.to_string() })),
    };
    let preprocess = uform_core::families::pixels::Preprocess::read(Path::new(model_dir)).expect("preprocessor");
    let (height, width) = preprocess.side();
    let executor = model.executor().expect("executor");
    reply(json!({ "ready": "uform (Rust, f32)", "side": [height, width] }));
    for line in std::io::stdin().lock().lines() {
        let command: Value = serde_json::from_str(&line.expect("stdin")).expect("a JSON command");
        if command["images"].is_array() {
            let images = read(&command["images"]);
            match command["reps"].as_u64() {
                Some(reps) => {
                    reply(json!({ "seconds": timed(reps, || drop(encode(&model, &images).expect("encode_image"))) }))
                }
                None => {
                    let m = encode(&model, &images).expect("encode_image");
                    let rows: Vec<&[f32]> = m.data.chunks(m.columns.max(1) as usize).collect();
                    reply(json!({ "embeddings": rows }));
                }
            }
        } else if command["decode"].is_array() {
            let images = read(&command["decode"]);
            let reps = command["reps"].as_u64().unwrap_or(1);
            let per_image = 3 * height * width;
            let seconds = timed(reps, || {
                executor
                    .for_n_dynamic(images.len(), |i| {
                        let mut out = vec![0f32; per_image];
                        preprocess.pixels(&images[i], i, &mut out).expect("pixels");
                    })
                    .expect("dispatch")
            });
            reply(json!({ "seconds": seconds }));
        }
    }
    model.free().expect("free");
}

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

fn median_ms(mut run: impl FnMut() -> f64, reps: usize) -> f64 {
    let mut v: Vec<f64> = (0..reps).map(|_| run()).collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2] * 1e3
}

fn scale(model_dir: &str) {
    let path = std::env::var("UFORM_BENCH_WORKLOADS").expect("UFORM_BENCH_WORKLOADS names workloads.json");
    let workloads: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("workloads.json")).expect("workloads.json is JSON");
    let model = load(model_dir, Precision::F32).expect("loading the model");
    let encode = |texts: &[String]| model.encode_text(texts, EncodeTextOptions::default()).expect("encode_text");
    let short = texts(&workloads, "short");
    let many: Vec<String> = (0..100_000).map(|i| format!("{} ({i})", short[i % short.len()])).collect();
    encode(&many[..64]); // prepares the encoder
    let before = status_kib("VmRSS:");
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let start = Instant::now();
    let m = encode(&many);
    let seconds = start.elapsed().as_secs_f64();
    let peak = if reset { status_kib("VmHWM:") } else { status_kib("VmRSS:") };
    let result_mib = (m.data.len() * 4) as f64 / (1 << 20) as f64;
    println!(
        "scale: 100,000 texts in one call, default scratchLimit ({} MiB): {seconds:.1} s ({:.0} texts/s), peak RSS \
         +{:.0} MiB over the loaded model{} (the result itself is {result_mib:.0} MiB)",
        uform_core::ExecutorForRamConfig::DEFAULT_SCRATCH_LIMIT >> 20,
        many.len() as f64 / seconds,
        peak.saturating_sub(before) as f64 / 1024.0,
        if reset { "" } else { " (VmHWM could not be reset: RSS after the call instead)" },
    );
    drop(m);
    let long = texts(&workloads, "long");
    let text = format!("{} {} {}", long[0], long[1], long[2]); // ~380 tokens: truncated to the model's 256
    let repeated = |bytes: usize| {
        let unit = format!("{text} ");
        unit.repeat(bytes / unit.len() + 1)
    };
    let one = |t: &String| {
        let start = Instant::now();
        encode(std::slice::from_ref(t));
        start.elapsed().as_secs_f64()
    };
    let (ten, hundred) = (repeated(10 << 20), repeated(100 << 20));
    let base = median_ms(|| one(&text), 5);
    let (t10, t100) = (median_ms(|| one(&ten), 5), median_ms(|| one(&hundred), 5));
    assert_eq!(encode(std::slice::from_ref(&hundred)), encode(std::slice::from_ref(&text)), "100 MB vs its prefix");
    println!(
        "long text: 256 tokens {base:.1} ms; the same text repeated to 10 MB {t10:.1} ms ({:.2}x), to 100 MB \
         {t100:.1} ms ({:.2}x); medians of 5, one text per call, embeddings equal",
        t10 / base,
        t100 / base
    );
    model.free().expect("free");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--peak") => reply(uform_bench::peak::fma_peak(threads())),
        Some("--bf16-peak") => reply(uform_bench::peak::bf16_peak(threads())),
        Some("--scale") => scale(args.get(1).expect("encode --scale MODEL_DIR")),
        Some("--images") => image_worker(args.get(1).expect("encode --images MODEL_DIR")),
        Some(dir) => {
            let precision = args.get(1).map_or(Precision::F32, |p| Precision::parse(p).expect("f32 or bf16"));
            worker(dir, precision)
        }
        None => {
            eprintln!(
                "usage: encode MODEL_DIR [f32|bf16] | encode --scale MODEL_DIR | encode --images MODEL_DIR | encode --peak | \
                 encode --bf16-peak"
            );
            std::process::exit(2);
        }
    }
}
