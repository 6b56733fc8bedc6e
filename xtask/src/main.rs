//! `cargo xtask …`: the project's commands. `codegen` regenerates `generated/` from `idl/uform.yaml`;
//! `test` runs every test in every language (installing what it needs); `bench` runs the benchmarks;
//! `install` installs the C library; `fuzz` fuzzes the IDL loader or the safetensors header parser;
//! `package swift` packages the Swift library as Swift users get it; `gpu-kit` builds the device check.

mod bench_encode;
mod bench_load;
mod bench_train;
mod bench_venv;
mod codegen;
mod codegen_uniffi;
mod fuzz;
mod gpu_kit;
mod install;
mod package;
mod test;
mod util;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>
  codegen [--check]          regenerate generated/ from idl/uform.yaml; --check names every stale file
  codegen --compat REF       list what changed incompatibly since the IDL at git REF; fails without the version bump
  test [LANGUAGE...]         run the tests: rust, c, node, python, kotlin, swift, packages (default: all)
  bench <dispatch|mesh|overhead|load>   run a benchmark side by side with its peers
  bench uniffi               what the uniffi scaffolding Swift calls through costs on the Rust side, timed from C
  bench encode [--no-bindings] [--rounds N] [--families | --images]   encodeText against sentence-transformers and ONNX Runtime (--families: the text families and rerank; --images: encodeImage)
  bench train [--no-bindings] [--steps N] [--warmup W]   a Trainer step against sentence-transformers' trainer
  fuzz [--target idl_loader|safetensors_header] [--seconds N] [--stable] [--merge]   fuzz a parser (fuzz/README.md)
  gpu-kit                    build the device check's binaries into target/gpu-kit/ (scripts/gpu-check.sh runs them)
  install --prefix DIR       install uform.h, libuform.{so,a}, uform.pc and the CMake package config
  package swift [--out DIR] [--url BASE]   the Swift artifact bundle, its zip and checksum, the released manifest;
                             --out DIR: also a self-contained Swift package folder (a git repository, tagged)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("codegen") => codegen::run(&args[1..]),
        Some("test") => test::run(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("gpu-kit") => gpu_kit::run(&args[1..]),
        Some("install") => install::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("package") => package::run(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some(name @ ("dispatch" | "mesh")) => {
            util::cargo(&["run", "--release", "--quiet", "-p", "uform-bench", "--bin", name])
        }
        Some("overhead") => test::overhead(),
        Some("uniffi") => test::uniffi_overhead(),
        Some("load") => bench_load::run(&args[1..]),
        Some("encode") => bench_encode::run(&args[1..]),
        Some("train") => bench_train::run(&args[1..]),
        _ => Err(USAGE.to_string()),
    }
}
