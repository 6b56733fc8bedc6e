//! The generated surfaces of the real IDL: generated/ up to date, determinism, and the compile checks (the C header with
//! gcc and g++, the TypeScript declarations with strict tsc).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn outputs() -> Vec<uform_codegen::Output> {
    let api = uform_codegen::load(&root().join("idl/uform.yaml")).unwrap_or_else(|d| panic!("{d}"));
    uform_codegen::render(&api).unwrap_or_else(|e| panic!("{e}"))
}

/// What `cargo xtask codegen --check` guards, as a test: no snapshots of the real IDL to accept (the per-shape
/// fixtures, tests/fixtures.rs, are the snapshots); `cargo xtask codegen` updates generated/ and this passes again.
#[test]
fn generated_matches_the_idl() {
    let mut stale = Vec::new();
    for o in outputs() {
        let path = root().join("generated").join(&o.path);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(o.contents.as_str()) {
            stale.push(o.path.display().to_string());
        }
    }
    assert!(stale.is_empty(), "stale in generated/: {}; run `cargo xtask codegen`", stale.join(", "));
}

#[test]
fn output_is_deterministic_lf_and_newline_terminated() {
    let (a, b) = (outputs(), outputs());
    assert_eq!(a, b);
    for o in &a {
        assert!(o.contents.ends_with('\n'), "{} lacks a trailing newline", o.path.display());
        assert!(!o.contents.contains('\r'), "{} has CR characters", o.path.display());
        assert!(!o.contents.lines().any(|l| l.ends_with(' ')), "{} has trailing spaces", o.path.display());
    }
}

#[test]
fn one_doc_sentence_reaches_every_surface() {
    let idl = std::fs::read_to_string(root().join("idl/uform.yaml")).unwrap();
    let (before, after) = ("Spawns host threads for RAM-resident models.", "Spawns host threads, placed by NUMA node.");
    let edited = idl.replace(before, after);
    assert_ne!(idl, edited);
    let original = outputs();
    let files = uform_codegen::render(&uform_codegen::load_str(&edited, "edited.yaml").unwrap()).unwrap();
    let mut reached = Vec::new();
    for (old, new) in original.iter().zip(&files) {
        assert_eq!(old.path, new.path);
        if old.contents.contains(before) {
            assert!(
                new.contents.contains(after) && !new.contents.contains(before),
                "{} did not change",
                new.path.display()
            );
            reached.push(new.path.display().to_string());
        }
    }
    for path in [
        "c/uform.h",
        "typescript/index.d.ts",
        "docs/javascript/executors.md",
        "docs/c/executors.md",
        "python/uform/__init__.pyi",
    ] {
        assert!(reached.iter().any(|r| r == path), "the sentence never reached {path}: {reached:?}");
    }
}

fn compile_header(compiler: &str, args: &[&str], source: &str) {
    let dir = root().join("target/header-check");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(source);
    std::fs::copy(root().join("tests/c/header_uses_everything.c"), &file).unwrap();
    let out = Command::new(compiler)
        .args(args)
        .arg("-I")
        .arg(root().join("generated/c"))
        .arg("-c")
        .arg(&file)
        .arg("-o")
        .arg(dir.join(format!("{source}.o")))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(out.status.success(), "{compiler} rejected uform.h:\n{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_header_compiles_as_strict_c99() {
    compile_header("gcc", &["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"], "uses.c");
}

#[test]
fn the_header_compiles_as_strict_cpp17() {
    compile_header("g++", &["-std=c++17", "-Wall", "-Wextra", "-Werror", "-x", "c++"], "uses.cpp");
}

/// Installs TypeScript and @types/node@20 from npm under target/tools when no `tsc` is there yet.
fn tsc() -> PathBuf {
    let tools = root().join("target/tools");
    let tsc = tools.join("node_modules/.bin/tsc");
    if !tsc.exists() {
        std::fs::create_dir_all(&tools).unwrap();
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&tools)
            .args(["typescript@7", "@types/node@20"])
            .status()
            .expect("npm is needed to install TypeScript");
        assert!(status.success(), "npm could not install TypeScript");
    }
    tsc
}

#[test]
fn the_declarations_pass_strict_tsc() {
    let out = Command::new(tsc()).arg("-p").arg(root().join("tests/typescript/tsconfig.json")).output().unwrap();
    assert!(
        out.status.success(),
        "tsc rejected the declarations:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
