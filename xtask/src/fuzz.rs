//! `cargo xtask fuzz [--target idl_loader|safetensors_header|image_pixels] [--seconds N] [--stable] [--merge]`:
//! fuzzes the IDL loader (the default), the safetensors header parser or the image decoder (see fuzz/README.md). With nightly
//! Rust and cargo-fuzz installed, libFuzzer runs the `idl_loader` target for N seconds (default 600), seeded from the
//! committed corpus, writing what it finds to fuzz/corpus-work/; otherwise (or with `--stable`) the stable harness,
//! codegen/tests/fuzz_corpus.rs, mutates the corpus for N seconds in a release build. `--merge` folds
//! fuzz/corpus-work/ into the committed corpus, keeping only inputs that add coverage.

use crate::util::{root, status};
use std::process::Command;

/// One fuzz target: its libFuzzer name, libFuzzer options, and the package and test of its stable harness.
struct Target {
    name: &'static str,
    options: &'static [&'static str],
    package: &'static str,
    harness: &'static str,
}

const TARGETS: &[Target] = &[
    Target {
        name: "idl_loader",
        options: &["-dict=fuzz/idl.dict", "-max_len=16384"],
        package: "uform-codegen",
        harness: "fuzz_corpus",
    },
    Target {
        name: "safetensors_header",
        options: &["-max_len=65536"],
        package: "uform-core",
        harness: "safetensors_fuzz",
    },
    Target {
        name: "image_pixels",
        options: &["-max_len=262144", "-rss_limit_mb=4096"],
        package: "uform-core",
        harness: "image_fuzz",
    },
];

pub fn run(args: &[String]) -> Result<(), String> {
    let (mut seconds, mut stable, mut merge) = (600u64, false, false);
    let mut target = &TARGETS[0];
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--target" => {
                let name =
                    rest.next().ok_or("--target needs a name: idl_loader, safetensors_header or image_pixels")?;
                target = TARGETS.iter().find(|t| t.name == name).ok_or_else(|| {
                    format!("--target {name}: unknown; the targets are idl_loader, safetensors_header and image_pixels")
                })?;
            }
            "--seconds" => {
                let n = rest.next().ok_or("--seconds needs a number")?;
                seconds = n.parse().map_err(|_| format!("--seconds {n}: not a number"))?;
            }
            "--stable" => stable = true,
            "--merge" => merge = true,
            other => return Err(format!("cargo xtask fuzz: unknown argument `{other}`; see fuzz/README.md")),
        }
    }
    let corpus = format!("fuzz/corpus/{}", target.name);
    let work = format!("fuzz/corpus-work/{}", target.name);
    let (corpus, work) = (corpus.as_str(), work.as_str());
    let libfuzzer = !stable && have_cargo_fuzz();
    if merge {
        if !libfuzzer {
            return Err("--merge needs nightly Rust and cargo-fuzz (`cargo install cargo-fuzz`)".into());
        }
        let mut merge_args = vec![corpus, work, "--", "-merge=1"];
        merge_args.extend(target.options);
        return cargo_fuzz(target.name, &merge_args);
    }
    if libfuzzer {
        std::fs::create_dir_all(root().join(work)).map_err(|e| format!("cannot create {work}: {e}"))?;
        let time = format!("-max_total_time={seconds}");
        let mut run_args = vec![work, corpus, "--", "-timeout=2", "-print_final_stats=1", &time];
        run_args.extend(target.options);
        cargo_fuzz(target.name, &run_args)?;
        eprintln!("new inputs are in {work}; `cargo xtask fuzz --merge` folds those that add coverage into {corpus}");
        Ok(())
    } else {
        eprintln!(
            "nightly Rust with cargo-fuzz is not installed (or --stable): running the stable harness for {seconds} s"
        );
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(root())
            .args(["test", "--release", "-p", target.package, "--test", target.harness, "--", "--nocapture"])
            .env("UFORM_FUZZ_SECONDS", seconds.to_string());
        status(cmd, "the stable fuzz harness")
    }
}

/// Whether `cargo +nightly fuzz` works: rustup's cargo on PATH, a nightly toolchain and cargo-fuzz.
fn have_cargo_fuzz() -> bool {
    Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output().is_ok_and(|o| o.status.success())
}

fn cargo_fuzz(target: &str, args: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root()).args(["+nightly", "fuzz", "run", target]).args(args);
    status(cmd, "cargo fuzz")
}
