//! Text encoding against sentence-transformers' reference embeddings (`tests/fixtures/encode/reference.json`) on the
//! test model all-MiniLM-L6-v2, whose folder `UFORM_TEST_MODEL_DIR` names (`cargo xtask test rust` installs it and
//! sets it; without it every test here fails saying so).

mod support;

#[path = "encode/families.rs"]
mod families;
#[path = "encode/folders.rs"]
mod folders;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use support::cosine::worst_cosine;
use support::file_weights::{test_model_dir, Converted, FileWeights};
use uform_core::families::bert::Encoder;
use uform_core::model::{TensorView, Weights};
use uform_core::verbs::encode::{embed, kernels_for};
use uform_core::{EncodeTextOptions, ErrorKind, Executor, ExecutorForRamConfig, F32Matrix};

struct Fixture {
    texts: Vec<String>,
    embeddings: Vec<Vec<f32>>,
    unnormalized: Vec<Vec<f32>>,
    long_text: usize,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/encode/reference.json");
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let rows = |key: &str| -> Vec<Vec<f32>> {
            json[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect())
                .collect()
        };
        Fixture {
            texts: json["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect(),
            embeddings: rows("embeddings"),
            unnormalized: rows("embeddings_unnormalized"),
            long_text: json["long_text_index"].as_u64().unwrap() as usize,
        }
    })
}

fn model() -> &'static (FileWeights, Encoder) {
    static MODEL: OnceLock<(FileWeights, Encoder)> = OnceLock::new();
    MODEL.get_or_init(|| {
        let weights = FileWeights::open(&test_model_dir());
        let encoder = Encoder::prepare(&weights, uform_core::Precision::F32).expect("preparing the test model");
        (weights, encoder)
    })
}

fn executor(threads: u32, cpu_class: Option<&str>) -> Executor {
    Executor::for_ram(ExecutorForRamConfig {
        threads: Some(threads),
        cpu_class: cpu_class.map(str::to_string),
        ..Default::default()
    })
    .unwrap()
}

fn encode(executor: &Executor, texts: &[String], options: EncodeTextOptions) -> uform_core::Result<F32Matrix> {
    let (_, encoder) = model();
    embed(encoder, executor, texts, &options)
}

fn rows(m: &F32Matrix) -> Vec<&[f32]> {
    m.data.chunks_exact(m.columns as usize).collect()
}

/// Cosine ≥ 0.9999 and max |difference| ≤ 1e-4 against each reference row.
fn assert_close(got: &F32Matrix, want: &[Vec<f32>], what: &str) {
    assert_eq!((got.rows as usize, got.columns), (want.len(), 384), "{what}: shape");
    for (i, (g, w)) in rows(got).into_iter().zip(want).enumerate() {
        let dot: f64 = g.iter().zip(w).map(|(a, b)| *a as f64 * *b as f64).sum();
        let norm = |v: &[f32]| v.iter().map(|a| *a as f64 * *a as f64).sum::<f64>().sqrt();
        let cosine = dot / (norm(g) * norm(w)).max(1e-30);
        let diff = g.iter().zip(w).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(cosine >= 0.9999 && diff <= 1e-4, "{what}: text {i} cosine {cosine}, max abs difference {diff}");
    }
}

fn max_difference(a: &F32Matrix, b: &F32Matrix) -> f32 {
    assert_eq!((a.rows, a.columns), (b.rows, b.columns));
    a.data.iter().zip(&b.data).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

#[test]
fn reference_embeddings_match_sentence_transformers() {
    let f = fixture();
    let got = encode(&executor(2, None), &f.texts, EncodeTextOptions::default()).unwrap();
    assert_close(&got, &f.embeddings, "normalised by modules.json");
    let explicit =
        encode(&executor(2, None), &f.texts, EncodeTextOptions { normalize: Some(true), ..Default::default() });
    assert_eq!(explicit.unwrap(), got);
}

#[test]
fn normalize_false_gives_the_pipeline_without_normalize() {
    let f = fixture();
    let options = EncodeTextOptions { normalize: Some(false), ..Default::default() };
    let got = encode(&executor(2, None), &f.texts, options).unwrap();
    assert_close(&got, &f.unnormalized, "unnormalised");
    let norms: Vec<f32> = rows(&got).iter().map(|r| r.iter().map(|v| v * v).sum::<f32>().sqrt()).collect();
    assert!(norms.iter().any(|n| (n - 1.0).abs() > 0.1), "rows came back unit length: {norms:?}");
}

#[test]
fn every_kernel_class_this_cpu_runs_agrees_with_portable() {
    let f = fixture();
    let portable = encode(&executor(2, Some("portable")), &f.texts, EncodeTextOptions::default()).unwrap();
    assert_eq!(kernels_for(Some("portable")).unwrap(), "portable");
    let mut seen = vec!["portable"];
    for class in uform_core::capabilities::runnable_cpu_classes() {
        let kernels = kernels_for(Some(class)).unwrap();
        if seen.contains(&kernels) {
            continue;
        }
        seen.push(kernels);
        let got = encode(&executor(2, Some(class)), &f.texts, EncodeTextOptions::default()).unwrap();
        let diff = max_difference(&got, &portable);
        assert!(diff <= 1e-5, "{class} ({kernels} kernels) differs from portable by {diff}");
        assert_close(&got, &f.embeddings, class);
    }
    eprintln!("kernels compared with portable: {seen:?}");
    if std::is_x86_feature_detected!("avx512f") {
        assert!(seen.contains(&"avx512") && seen.contains(&"avx2"), "{seen:?}");
    }
}

#[test]
fn one_and_two_threads_give_identical_results_and_batching_changes_nothing() {
    let f = fixture();
    let one = encode(&executor(1, None), &f.texts, EncodeTextOptions::default()).unwrap();
    let two = encode(&executor(2, None), &f.texts, EncodeTextOptions::default()).unwrap();
    assert_eq!(one, two);
    let exec = executor(2, None);
    for i in [0, f.long_text, f.texts.len() - 1] {
        let alone = encode(&exec, &f.texts[i..i + 1], EncodeTextOptions::default()).unwrap();
        assert_eq!(alone.data, rows(&two)[i], "text {i} alone differs from its row in the batch");
    }
}

#[test]
fn edge_inputs() {
    let exec = executor(2, None);
    let empty = encode(&exec, &[], EncodeTextOptions::default()).unwrap();
    assert_eq!((empty.rows, empty.columns, empty.data.len()), (0, 384, 0));

    let texts: Vec<String> = ["", "héllo wörld — ☃ 你好 🙂", "a\u{0}b"].iter().map(|s| s.to_string()).collect();
    let e = encode(&exec, &texts, EncodeTextOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("texts[2]") && e.message().contains("NUL"), "{e}");

    let ok = encode(&exec, &texts[..2], EncodeTextOptions::default()).unwrap();
    for row in rows(&ok) {
        let norm = row.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5 && row.iter().all(|v| v.is_finite()), "norm {norm}");
    }
    assert_ne!(rows(&ok)[0], rows(&ok)[1]);
}

#[test]
fn max_tokens_truncates_and_is_checked() {
    let f = fixture();
    let exec = executor(2, None);
    for bad in [0, 513, u32::MAX] {
        let e = encode(&exec, &f.texts[..1], EncodeTextOptions { max_tokens: Some(bad), ..Default::default() });
        let e = e.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("`options.max_tokens`") && e.message().contains("512"), "{e}");
    }
    let long = &f.texts[f.long_text..f.long_text + 1];
    let with = |max: Option<u32>| encode(&exec, long, EncodeTextOptions { max_tokens: max, ..Default::default() });
    let default = with(None).unwrap();
    assert_eq!(with(Some(256)).unwrap(), default, "the model's maximum is max_seq_length 256");
    let longer = with(Some(512)).unwrap();
    let shorter = with(Some(128)).unwrap();
    // 326 tokens untruncated: 512 keeps them all, 128 keeps fewer; both must move away from the 256 row.
    assert!(max_difference(&longer, &default) > 1e-3 && max_difference(&shorter, &default) > 1e-3);
    // Text 0 has exactly 8 tokens ([CLS] … [SEP]): 8 changes nothing, 7 drops a word.
    let first = &f.texts[..1];
    let at = |max: u32| encode(&exec, first, EncodeTextOptions { max_tokens: Some(max), ..Default::default() });
    assert_close(&at(8).unwrap(), &f.embeddings[..1], "max_tokens 8");
    assert!(max_difference(&at(7).unwrap(), &at(8).unwrap()) > 1e-3);
    // Fewer than the special tokens: still a unit row.
    for max in [1, 2] {
        let row = at(max).unwrap();
        let norm = row.data.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "max_tokens {max}: norm {norm}");
    }
}

#[test]
fn a_ten_megabyte_text_embeds_as_its_truncated_prefix() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let f = fixture();
    let exec = executor(2, None);
    let long = &f.texts[f.long_text]; // 326 tokens: its first 256 are the huge text's too
    let repeat = |unit: &str| {
        let mut text = String::with_capacity((10 << 20) + unit.len());
        while text.len() < 10 << 20 {
            text.push_str(unit);
        }
        text
    };
    let huge = repeat(&format!("{long} "));
    let one = |text: &str| encode(&exec, &[text.to_string()], EncodeTextOptions::default()).unwrap();
    assert_eq!(one(&huge), one(long), "words");
    assert_eq!(one(&repeat("你好")), one(&"你好".repeat(300)), "a character per token, no whitespace");
    // One word of ten million letters is one [UNK] whole, and so is its first kilobyte.
    assert_eq!(one(&repeat("a")), one(&"a".repeat(1000)), "no whitespace at all");
    let rows = encode(&exec, &[huge.clone(), f.texts[0].clone()], EncodeTextOptions::default()).unwrap();
    assert_eq!(&rows.data[384..], &one(&f.texts[0]).data[..], "a short text beside a huge one");
}

#[test]
fn half_precision_weights_encode_close_to_the_reference() {
    let f = fixture();
    let (weights, _) = model();
    let exec = executor(2, None);
    for dtype in ["BF16", "F16"] {
        let converted = Converted::new(weights, dtype);
        let encoder = Encoder::prepare(&converted, uform_core::Precision::F32).unwrap();
        let got = embed(&encoder, &exec, &f.texts, &EncodeTextOptions::default()).unwrap();
        for (i, (g, w)) in rows(&got).into_iter().zip(&f.embeddings).enumerate() {
            let cosine: f32 = g.iter().zip(w).map(|(a, b)| a * b).sum();
            let floor = if dtype == "F16" { 0.9995 } else { 0.995 };
            assert!(cosine >= floor, "{dtype}: text {i} cosine {cosine}");
        }
    }
}

/// A model folder with the given files and no tensors.
struct Folder(PathBuf);

impl Weights for Folder {
    fn tensor(&self, _: &str) -> Option<TensorView<'_>> {
        None
    }
    fn names(&self) -> Vec<&str> {
        Vec::new()
    }
    fn directory(&self) -> Option<&Path> {
        Some(&self.0)
    }
}

fn folder(name: &str, files: &[(&str, &str)]) -> Folder {
    let dir = std::env::temp_dir().join(format!("uform-encode-{}-{name}", std::process::id()));
    for (file, text) in files {
        std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
    }
    Folder(dir)
}

#[test]
fn other_architectures_and_pooling_modes_are_unsupported_naming_what_was_found() {
    let roberta = folder("gpt2", &[("config.json", r#"{"model_type": "gpt2"}"#)]);
    let e = Encoder::prepare(&roberta, uform_core::Precision::F32).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("gpt2"), "{e}");

    let config = std::fs::read_to_string(test_model_dir().join("config.json")).unwrap();
    let max = folder(
        "max-pooling",
        &[
            ("config.json", &config),
            ("modules.json", r#"[{"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}]"#),
            ("1_Pooling/config.json", r#"{"pooling_mode_max_tokens": true}"#),
        ],
    );
    let e = Encoder::prepare(&max, uform_core::Precision::F32).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("pooling_mode_max_tokens"), "{e}");
    // sentence-transformers 5's spelling: one `pooling_mode` string.
    std::fs::write(max.0.join("1_Pooling/config.json"), r#"{"pooling_mode": "max"}"#).unwrap();
    let e = Encoder::prepare(&max, uform_core::Precision::F32).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("pooling_mode \"max\""), "{e}");
    let _ = std::fs::remove_dir_all(&roberta.0);
    let _ = std::fs::remove_dir_all(&max.0);
}

/// Held by the tests that load a model, read resident memory or allocate tens of megabytes (the 10 MB text): a
/// model's pages and another test's allocations count in the process's RSS, so the memory tests must not run
/// beside them (a family test beside the 1,000 encodes once read as 10 MiB of growth).
static RSS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn rss_kib() -> u64 {
    status_kib("VmRSS:")
}

/// The highest anonymous resident memory (KiB) seen every millisecond while `f` runs: the scratch, the result and
/// the tokens, not the pages of the mapped model file (which `FileWeights` reads through).
fn peak_anon_kib<T>(f: impl FnOnce() -> T) -> (T, u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let (done, peak) = (AtomicBool::new(false), AtomicU64::new(status_kib("RssAnon:")));
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(status_kib("RssAnon:"), Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        let out = f();
        done.store(true, Ordering::Relaxed);
        out
    });
    peak.fetch_max(status_kib("RssAnon:"), std::sync::atomic::Ordering::Relaxed);
    (out, peak.into_inner())
}

/// 20,000 short texts of varied lengths, so sorting and batching have something to reorder.
fn many_texts(count: usize) -> Vec<String> {
    let words = ["alpha", "beta", "gamma", "delta", "epsilon"];
    (0..count).map(|i| format!("{} {i}", words[..1 + i % words.len()].join(" "))).collect()
}

fn limited(threads: u32, scratch_limit: u64) -> Executor {
    Executor::for_ram(ExecutorForRamConfig {
        threads: Some(threads),
        scratch_limit: Some(scratch_limit),
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn twenty_thousand_texts_in_one_call_stay_within_a_64_mib_budget_and_match_32_text_calls() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    const LIMIT: u64 = 64 << 20;
    let exec = limited(2, LIMIT);
    let texts = many_texts(20_000);
    let small = encode(&exec, &texts[..32], EncodeTextOptions::default()).unwrap(); // prepares the encoder
    let before = status_kib("RssAnon:");
    let started = std::time::Instant::now();
    let (all, peak) = peak_anon_kib(|| encode(&exec, &texts, EncodeTextOptions::default()).unwrap());
    let result_kib = (texts.len() * 384 * 4 / 1024) as u64;
    let grown = peak.saturating_sub(before);
    eprintln!(
        "20,000 texts, scratchLimit 64 MiB: anonymous RSS +{grown} KiB at peak (result {result_kib} KiB), {:.1} s, \
         scratch held after: {} bytes",
        started.elapsed().as_secs_f64(),
        exec.host_scratch_bytes()
    );
    // The slack: the result itself, the tokens of the pending pool and the tokenizer's own allocations.
    assert!(grown <= LIMIT / 1024 + result_kib + 16 * 1024, "anonymous RSS grew {grown} KiB for a 64 MiB budget");
    assert!(exec.host_scratch_bytes() as u64 <= LIMIT);
    assert_eq!((all.rows, all.columns), (20_000, 384));
    assert!(max_difference(&small, &F32Matrix { data: all.data[..32 * 384].to_vec(), rows: 32, columns: 384 }) <= 1e-6);
    // Windows of 32 spread over the call, each its own call on an executor with the default limit.
    let plain = executor(2, None);
    for start in (0..texts.len()).step_by(32 * 31).chain([texts.len() - 32]) {
        let window = encode(&plain, &texts[start..start + 32], EncodeTextOptions::default()).unwrap();
        let rows = &all.data[start * 384..(start + 32) * 384];
        let diff = window.data.iter().zip(rows).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(diff <= 1e-6, "texts {start}..{}: max abs difference {diff}", start + 32);
    }
    encode(&exec, &texts[..3], EncodeTextOptions::default()).unwrap();
    assert!(exec.host_scratch_bytes() as u64 <= LIMIT, "a small call after the large one");
}

#[test]
fn a_text_that_cannot_fit_the_scratch_limit_is_out_of_memory_naming_it() {
    let f = fixture();
    // 1 MiB holds about 110 MiniLM tokens; the long text keeps 256.
    let exec = limited(2, 1 << 20);
    let texts = [f.texts[0].clone(), f.texts[f.long_text].clone()];
    let e = encode(&exec, &texts, EncodeTextOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    assert!(e.message().contains("`texts[1]` has 256 tokens") && e.message().contains("scratch_limit"), "{e}");
    assert!(exec.host_scratch_bytes() <= 1 << 20);
    // Truncated to fit, it encodes; the short text alone always did.
    let short = encode(&exec, &texts, EncodeTextOptions { max_tokens: Some(64), ..Default::default() }).unwrap();
    assert_eq!(short.rows, 2);
    let e = Executor::for_ram(ExecutorForRamConfig { scratch_limit: Some(0), ..Default::default() }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("`config.scratch_limit`"), "{e}");
}

#[test]
fn a_thousand_encodes_keep_resident_memory_flat() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let f = fixture();
    let exec = executor(2, None);
    let texts = &f.texts[..3];
    for _ in 0..50 {
        encode(&exec, texts, EncodeTextOptions::default()).unwrap();
    }
    let before = rss_kib();
    for _ in 0..1000 {
        encode(&exec, texts, EncodeTextOptions::default()).unwrap();
    }
    let grown = rss_kib().saturating_sub(before);
    assert!(grown < 4096, "resident memory grew by {grown} KiB over 1,000 encodes");
}

/// An encode in flight on another thread: the model's `free` is in use (and leaves the model usable), the
/// executor's `drain` waits for it, and once it has returned the model frees.
#[test]
fn free_during_an_encode_is_in_use_and_drain_waits_for_it() {
    use std::sync::atomic::Ordering;
    use uform_core::{Model, ModelLoadRamConfig};
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    let f = fixture();
    let exec = executor(2, None);
    let model = Model::load_ram(
        test_model_dir().to_str().unwrap(),
        ModelLoadRamConfig { executor: Some(exec.clone()), memory_domains: None, precision: None, revision: None },
    )
    .unwrap();
    model.encode_text(&f.texts[..1], EncodeTextOptions::default()).unwrap(); // prepares the encoder
    let quiet = exec.quiet();
    let settled = Executor::drain_quiet_when(uform_core::Mood::Parked) & 1;
    let batch: Vec<String> = (0..48).map(|i| format!("{} {i}", f.texts[f.long_text])).collect();
    let worker = {
        let model = model.clone();
        std::thread::spawn(move || model.encode_text(&batch, EncodeTextOptions::default()))
    };
    while quiet.word().load(Ordering::SeqCst) & settled != 0 {
        assert!(!worker.is_finished(), "the encode finished before it was seen in flight");
        std::hint::spin_loop();
    }
    let e = model.free().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InUse);
    assert_eq!(
        e.message(),
        "`free` cannot free this Model yet: a call is in flight on it (an `encode_text`, or its asynchronous form not yet settled); wait for it to finish first"
    );
    exec.drain(uform_core::Mood::Parked).unwrap();
    assert_ne!(quiet.word().load(Ordering::SeqCst) & settled, 0, "drain returned while the encode was in flight");
    let rows = worker.join().unwrap().unwrap();
    assert_eq!(rows.rows, 48);
    model.free().unwrap();
    assert_eq!(
        model.encode_text(&f.texts[..1], EncodeTextOptions::default()).unwrap_err().kind(),
        ErrorKind::FreedHandle
    );
}

/// Cosine of each row of `got` with the same row of `want`; the smallest.
#[test]
fn bf16_models_embed_at_cosine_0999_report_half_the_matrix_bytes_and_refuse_training_and_classes_without_bf16() {
    let _serial = RSS.lock().unwrap_or_else(|p| p.into_inner());
    use uform_core::{Model, ModelLoadRamConfig, Precision, Trainer, TrainerContrastiveConfig};
    let f = fixture();
    let dir = test_model_dir();
    let load = |executor: &Executor, precision: Option<Precision>| {
        let config =
            ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision, revision: None };
        Model::load_ram(dir.to_str().unwrap(), config)
    };
    // A class without AVX512_BF16 (icelake has AVX-512 but not its bf16 extension) refuses bf16 at load.
    if uform_core::capabilities::runnable_cpu_classes().contains(&"intel-icelake") {
        let e = load(&executor(1, Some("intel-icelake")), Some(Precision::Bf16)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.message().contains("intel-icelake") && e.message().contains("AVX512_BF16"), "{e}");
    }
    let bf16_classes: Vec<&str> = uform_core::capabilities::runnable_cpu_classes()
        .into_iter()
        .filter(|c| ["amd-genoa", "intel-sapphirerapids"].contains(c))
        .collect();
    if bf16_classes.is_empty() {
        // This CPU has no bf16 instructions: its native class refuses bf16, as the docs say.
        let e = load(&executor(1, None), Some(Precision::Bf16)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        return;
    }
    let f32_model = load(&executor(2, None), None).unwrap();
    let f32_described = f32_model.describe().unwrap();
    assert_eq!(f32_described.precision, Precision::F32);
    // genoa runs the AVX512_BF16 kernel; sapphirerapids AMX where the OS grants it.
    for class in bf16_classes {
        let model = load(&executor(2, Some(class)), Some(Precision::Bf16)).unwrap();
        let described = model.describe().unwrap();
        assert_eq!(described.precision, Precision::Bf16);
        let (mut matrices, mut vectors) = (0u64, 0u64);
        for t in described.tensors.iter().filter(|t| t.dtype == "F32") {
            let values: u64 = t.shape.iter().product();
            if t.shape.len() >= 2 {
                matrices += values;
            } else {
                vectors += values;
            }
        }
        assert_eq!(described.weight_bytes, 2 * matrices + 4 * vectors);
        assert_eq!(f32_described.weight_bytes, 4 * (matrices + vectors));
        let got = model.encode_text(&f.texts, EncodeTextOptions::default()).unwrap();
        let worst = worst_cosine(&got, &f.embeddings);
        assert!(worst >= 0.999, "{class}: bf16 embeddings at worst cosine {worst} with sentence-transformers'");
        // Not f32's floats: the products really are bf16's.
        let exact = f32_model.encode_text(&f.texts, EncodeTextOptions::default()).unwrap();
        assert!(max_difference(&got, &exact) > 1e-5, "{class}: bf16 gave f32's embeddings");
        let e = Trainer::contrastive(&model, TrainerContrastiveConfig::default()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.message().contains("precision f32"), "{e}");
        model.free().unwrap();
    }
}
