//! `cargo xtask fuzz [--seconds N] [--stable] [--merge]`: fuzzes the IDL loader (see fuzz/README.md). With nightly
//! Rust and cargo-fuzz installed, libFuzzer runs the `idl_loader` target for N seconds (default 600), seeded from the
//! committed corpus, writing what it finds to fuzz/corpus-work/; otherwise (or with `--stable`) the stable harness,
//! codegen/tests/fuzz_corpus.rs, mutates the corpus for N seconds in a release build. `--merge` folds
//! fuzz/corpus-work/ into the committed corpus, keeping only inputs that add coverage.

use crate::util::{root, status};
use std::process::Command;

const TARGET: &str = "idl_loader";
const CORPUS: &str = "fuzz/corpus/idl_loader";
const WORK: &str = "fuzz/corpus-work/idl_loader";

pub fn run(args: &[String]) -> Result<(), String> {
    let (mut seconds, mut stable, mut merge) = (600u64, false, false);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--seconds" => {
                let n = rest.next().ok_or("--seconds needs a number")?;
                seconds = n.parse().map_err(|_| format!("--seconds {n}: not a number"))?;
            }
            "--stable" => stable = true,
            "--merge" => merge = true,
            other => return Err(format!("cargo xtask fuzz: unknown argument `{other}`; see fuzz/README.md")),
        }
    }
    let libfuzzer = !stable && have_cargo_fuzz();
    if merge {
        if !libfuzzer {
            return Err("--merge needs nightly Rust and cargo-fuzz (`cargo install cargo-fuzz`)".into());
        }
        return cargo_fuzz(&[CORPUS, WORK, "--", "-merge=1", "-dict=fuzz/idl.dict", "-max_len=16384"]);
    }
    if libfuzzer {
        std::fs::create_dir_all(root().join(WORK)).map_err(|e| format!("cannot create {WORK}: {e}"))?;
        let time = format!("-max_total_time={seconds}");
        cargo_fuzz(&[
            WORK,
            CORPUS,
            "--",
            "-dict=fuzz/idl.dict",
            "-timeout=2",
            "-max_len=16384",
            "-print_final_stats=1",
            &time,
        ])?;
        eprintln!("new inputs are in {WORK}; `cargo xtask fuzz --merge` folds those that add coverage into {CORPUS}");
        Ok(())
    } else {
        eprintln!(
            "nightly Rust with cargo-fuzz is not installed (or --stable): running the stable harness for {seconds} s"
        );
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(root())
            .args(["test", "--release", "-p", "uform-codegen", "--test", "fuzz_corpus", "--", "--nocapture"])
            .env("UFORM_FUZZ_SECONDS", seconds.to_string());
        status(cmd, "the stable fuzz harness")
    }
}

/// Whether `cargo +nightly fuzz` works: rustup's cargo on PATH, a nightly toolchain and cargo-fuzz.
fn have_cargo_fuzz() -> bool {
    Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output().is_ok_and(|o| o.status.success())
}

fn cargo_fuzz(args: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root()).args(["+nightly", "fuzz", "run", TARGET]).args(args);
    status(cmd, "cargo fuzz")
}
