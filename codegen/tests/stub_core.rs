//! Every fixture's generated C glue compiles against a stub core rendered from the same fixture
//! (`uform_codegen::lang::rust::stub`), and so does the real IDL's. Each fixture becomes a throwaway workspace under
//! `target/stub-core/<name>/` (a `uform-core` stub and a C library crate standing on bindings/c's runtime), checked
//! with `cargo check --offline` into one shared target directory so that reruns only recheck what changed.
//!
//! Fixtures are every `codegen/tests/fixtures/*.yaml` except those named `bad_*` or with a sibling `.expected` file
//! (the checker's diagnostics fixtures).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `(name, IDL path)` of the real IDL and every valid fixture, by name.
fn idls() -> Vec<(String, PathBuf)> {
    let mut out = vec![("uform".to_string(), root().join("idl/uform.yaml"))];
    let dir = root().join("codegen/tests/fixtures");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml") && p.is_file())
        .filter(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            !stem.starts_with("bad_") && !p.with_extension("expected").exists()
        })
        .collect();
    fixtures.sort();
    out.extend(fixtures.into_iter().map(|p| (format!("fixture_{}", p.file_stem().unwrap().to_string_lossy()), p)));
    out
}

/// Writes `contents` to `path` unless it already holds them, so cargo's fingerprints stay fresh.
fn write(path: &Path, contents: &str) {
    if std::fs::read_to_string(path).ok().as_deref() == Some(contents) {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// bindings/c's lib.rs, standing on its runtime by absolute path and including the fixture's glue.
fn c_lib(ffi: &str) -> String {
    let lib = std::fs::read_to_string(root().join("bindings/c/src/lib.rs")).unwrap();
    // Every module of the C library (`mod runtime;`, `mod versioned;`, ...) is the real one, by path.
    let lib = lib
        .lines()
        .map(|line| match line.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            Some(module) => {
                let file = root().join(format!("bindings/c/src/{module}.rs"));
                format!("#[path = {:?}]\n{line}", file.display().to_string())
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let included = "include!(\"../../../generated/c/ffi.rs\");";
    assert!(lib.contains(included), "bindings/c/src/lib.rs no longer includes generated/c/ffi.rs");
    assert!(!ffi.is_empty());
    lib.replace(included, "include!(\"ffi.rs\");")
}

/// The `[package]` header of a throwaway crate; each fixture's crates have their own package names (so their
/// artefacts never collide in the shared target directory) and the library name the glue expects.
fn package(name: &str, lib: &str, deps: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\nname = \"{lib}\"\npath = \"src/lib.rs\"\n\n[dependencies]\n{deps}"
    )
}

/// Writes the stub core and C library crates of one IDL under `base/name/`; returns their member paths.
fn fixture_crates(name: &str, idl: &Path, base: &Path) -> [String; 2] {
    let api = uform_codegen::load(idl).unwrap_or_else(|d| panic!("{d}"));
    let outputs = uform_codegen::render(&api).unwrap_or_else(|e| panic!("{e}"));
    let ffi = &outputs.iter().find(|o| o.path == Path::new("c/ffi.rs")).expect("no c/ffi.rs rendered").contents;
    let dir = base.join(name);
    let core = format!("stub-core-{}", name.replace('_', "-"));
    write(&dir.join("core/Cargo.toml"), &package(&core, "uform_core", ""));
    write(&dir.join("core/src/lib.rs"), &uform_codegen::lang::rust::stub::core(&api).unwrap_or_else(|e| panic!("{e}")));
    let dep = format!("uform_core = {{ package = \"{core}\", path = \"../core\" }}\n");
    write(&dir.join("c/Cargo.toml"), &package(&format!("stub-c-{}", name.replace('_', "-")), "stub_c", &dep));
    write(&dir.join("c/src/ffi.rs"), ffi);
    write(&dir.join("c/src/lib.rs"), &c_lib(ffi));
    [format!("{name}/core"), format!("{name}/c")]
}

/// Writes one workspace of every IDL's crates under `base`, so a single `cargo check` covers them in parallel.
fn workspace(base: &Path, idls: &[(String, PathBuf)]) {
    let mut members = Vec::new();
    for (name, idl) in idls {
        members.extend(fixture_crates(name, idl, base));
    }
    let list: Vec<String> = members.iter().map(|m| format!("    {m:?},")).collect();
    write(&base.join("Cargo.toml"), &format!("[workspace]\nresolver = \"2\"\nmembers = [\n{}\n]\n", list.join("\n")));
}

/// `cargo check` of the workspace at `dir`, every crate even when one fails; `Err` holds the compiler's messages.
fn check(dir: &Path, target: &Path) -> Result<(), String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["check", "--offline", "--quiet", "--workspace", "--keep-going", "--message-format=short"])
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .current_dir(dir)
        .output()
        .expect("cannot run cargo");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn every_fixture_glue_compiles_against_its_stub_core() {
    let base = root().join("target/stub-core");
    let idls = idls();
    let names: Vec<&str> = idls.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.iter().filter(|n| n.starts_with("fixture_stub_")).count() >= 2, "stub fixtures missing: {names:?}");
    workspace(&base.join("all"), &idls);
    let started = std::time::Instant::now();
    let result = check(&base.join("all"), &base.join("target"));
    eprintln!("cargo check of {} IDLs' glue: {:.1}s", idls.len(), started.elapsed().as_secs_f64());
    if let Err(messages) = result {
        panic!("a fixture's C glue does not compile against its stub core (paths name the fixture):\n{messages}");
    }
}

/// The stub really is checked: a stub core missing a function the glue calls fails to compile.
#[test]
fn a_stub_missing_a_function_fails() {
    let base = root().join("target/stub-core");
    let dir = base.join("broken");
    let idl = root().join("codegen/tests/fixtures/stub_values.yaml");
    workspace(&dir, &[("broken_values".to_string(), idl)]);
    let lib = dir.join("broken_values/core/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    let broken = text.replace("pub fn cook(", "pub fn cook_renamed(");
    assert_ne!(text, broken);
    write(&lib, &broken);
    let messages = check(&dir, &base.join("target")).expect_err("a stub without `cook` compiled");
    assert!(messages.contains("cook"), "{messages}");
}
