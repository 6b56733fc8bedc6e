//! Every fixture's generated glue compiles against a stub core rendered from the same fixture
//! (`uform_codegen::lang::rust::stub`), and so does the real IDL's: C, Node (napi), Python (pyo3), Kotlin (JNI) and
//! Swift (uniffi, its scaffolding generated from the fixture's UDL by `uform_uniffi_bindgen::scaffolding`, the function
//! `cargo xtask codegen` generates bindings/uniffi's with, so no stub crate builds uniffi-bindgen in a build script). Each fixture becomes crates under `target/stub-core/all/<name>/`
//! (a `uform-core` stub, and per language a library crate standing on bindings/<language>'s runtime modules by path, with the bindings' napi, pyo3, jni and
//! uniffi versions), checked with `cargo check --offline` into one shared target directory so that reruns only
//! recheck what changed (after one
//! `cargo fetch` when the cargo cache lacks a crate the workspace needs, see [`check`]).
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

/// A binding's lib.rs with every `mod x;` standing on the real `bindings/<binding>/src/x.rs` by absolute path.
fn with_real_modules(binding: &str) -> String {
    let lib = std::fs::read_to_string(root().join(format!("bindings/{binding}/src/lib.rs"))).unwrap();
    lib.lines()
        .map(|line| match line.trim_start_matches("pub ").strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            Some(module) => {
                let src = root().join(format!("bindings/{binding}/src"));
                // `x.rs`, or `x/mod.rs` for a module of several files (its own modules lie beside it).
                let file = match src.join(format!("{module}.rs")) {
                    file if file.exists() => file,
                    _ => src.join(format!("{module}/mod.rs")),
                };
                format!("#[path = {:?}]\n{line}", file.display().to_string())
            }
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A binding's lib.rs (by [`with_real_modules`]) including the fixture's glue from its own `src/` instead.
fn glue_lib(binding: &str, included: &str, glue: &str) -> String {
    let lib = with_real_modules(binding);
    assert!(lib.contains(included), "bindings/{binding}/src/lib.rs no longer has `{included}`");
    assert!(!glue.is_empty());
    lib.replace(included, &format!("include!({glue:?});"))
}

/// bindings/c's lib.rs, standing on its runtime by absolute path and including the fixture's glue.
fn c_lib(ffi: &str) -> String {
    assert!(!ffi.is_empty());
    glue_lib("c", "include!(\"../../../generated/c/ffi.rs\");", "ffi.rs")
}

/// bindings/node's lib.rs, standing on its runtime by absolute path and including the fixture's glue.
fn node_lib(glue: &str) -> String {
    assert!(!glue.is_empty());
    glue_lib("node", "include!(\"../../../generated/node/glue.rs\");", "glue.rs")
}

/// bindings/jni's lib.rs, standing on its runtime by absolute path and including the fixture's glue.
fn jni_lib(glue: &str) -> String {
    assert!(!glue.is_empty());
    glue_lib("jni", "include!(\"../../../generated/jni/glue.rs\");", "glue.rs")
}

/// bindings/uniffi's lib.rs, standing on its runtime (`off_thread`) by absolute path and including the fixture's glue,
/// and the scaffolding made from the fixture's UDL (`src/uform.uniffi.rs`) where bindings/uniffi includes the committed
/// one.
/// Its benchmark matrix (`uform_bench_f32_matrix`) needs the real IDL's `F32Matrix`, so a fixture's copy goes
/// without it.
fn uniffi_lib(glue: &str, real_idl: bool) -> String {
    assert!(!glue.is_empty());
    let committed = "include!(\"../../../generated/uniffi/uform.uniffi.rs\");";
    let lib = glue_lib("uniffi", "include!(\"../../../generated/uniffi/glue.rs\");", "glue.rs");
    assert!(lib.contains(committed), "bindings/uniffi/src/lib.rs no longer has `{committed}`");
    let lib = lib.replace(committed, "include!(\"uform.uniffi.rs\");");
    if real_idl {
        return lib;
    }
    let start =
        lib.find("/// The Swift benchmark's matrix").expect("bindings/uniffi/src/lib.rs lost its benchmark matrix");
    let end = start + lib[start..].find("\n}\n").expect("the benchmark matrix's end") + 3;
    format!("{}{}", &lib[..start], &lib[end..])
}

/// bindings/python's lib.rs, standing on its runtime by absolute path and including the fixture's glue. Its
/// benchmark helpers from `_core_ns` on (`_core_ns` calls the real IDL's core by name, `_matrix` hands back a
/// matrix as `encode_text` does) need the real core, so a fixture's copy goes without them.
fn python_lib(glue: &str, real_idl: bool) -> String {
    assert!(!glue.is_empty());
    let lib = glue_lib("python", "include!(env!(\"UFORM_PYTHON_GLUE\"));", "glue.rs");
    if real_idl {
        return lib;
    }
    let start = lib.find("/// Nanoseconds per call").expect("bindings/python/src/lib.rs lost `_core_ns`");
    let end = start + lib[start..].find("#[pymodule]").unwrap();
    let mut lib = format!("{}{}", &lib[..start], &lib[end..]);
    for helper in ["_core_ns", "_matrix"] {
        let registered = format!("    m.add_function(wrap_pyfunction!({helper}, m)?)?;\n");
        assert!(lib.contains(&registered), "bindings/python/src/lib.rs no longer registers `{helper}`");
        lib = lib.replace(&registered, "");
    }
    lib
}

/// The napi and pyo3 dependency lines of bindings/node and bindings/python (the same versions and features).
const NODE_DEPS: &str =
    "napi = { version = \"3\", default-features = false, features = [\"napi8\"] }\nnapi-derive = \"3\"\n";
const PYTHON_DEPS: &str = "pyo3 = { version = \"0.30\", features = [\"abi3-py39\", \"extension-module\"] }\n";
/// The jni dependency line of bindings/jni.
const JNI_DEPS: &str = "jni = { version = \"0.21\", default-features = false }\n";
/// The dependency lines of bindings/uniffi.
const UNIFFI_DEPS: &str = "futures-channel = \"0.3\"\nuniffi = { version = \"0.32\", default-features = false }\n";

/// The `[package]` header of a throwaway crate; each fixture's crates have their own package names (so their
/// artefacts never collide in the shared target directory) and the library name the glue expects.
fn package(name: &str, lib: &str, deps: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [lib]\nname = \"{lib}\"\npath = \"src/lib.rs\"\n\n[dependencies]\n{deps}"
    )
}

/// The contents of one rendered output of `api` (`c/ffi.rs`, `node/glue.rs`, `python/glue.rs`).
fn rendered(outputs: &[uform_codegen::Output], path: &str) -> String {
    outputs.iter().find(|o| o.path == Path::new(path)).unwrap_or_else(|| panic!("no {path} rendered")).contents.clone()
}

/// Writes the stub core and the C, Node, Kotlin (JNI), Python and uniffi library crates of one IDL under `base/name/`;
/// returns their member paths.
fn fixture_crates(name: &str, idl: &Path, base: &Path) -> Vec<String> {
    let api = uform_codegen::load(idl).unwrap_or_else(|d| panic!("{d}"));
    let outputs = uform_codegen::render(&api).unwrap_or_else(|e| panic!("{e}"));
    let dir = base.join(name);
    let dashed = name.replace('_', "-");
    let core = format!("stub-core-{dashed}");
    write(&dir.join("core/Cargo.toml"), &package(&core, "uform_core", ""));
    write(&dir.join("core/src/lib.rs"), &uform_codegen::lang::rust::stub::core(&api).unwrap_or_else(|e| panic!("{e}")));
    let dep = format!("uform_core = {{ package = \"{core}\", path = \"../core\" }}\n");
    let ffi = rendered(&outputs, "c/ffi.rs");
    write(&dir.join("c/Cargo.toml"), &package(&format!("stub-c-{dashed}"), "stub_c", &dep));
    write(&dir.join("c/src/ffi.rs"), &ffi);
    write(&dir.join("c/src/lib.rs"), &c_lib(&ffi));
    let mut members = vec![format!("{name}/core"), format!("{name}/c")];
    if !NODE_GLUE_EXCLUDED.contains(&name) {
        let glue = rendered(&outputs, "node/glue.rs");
        write(
            &dir.join("node/Cargo.toml"),
            &package(&format!("stub-node-{dashed}"), "stub_node", &(dep.clone() + NODE_DEPS)),
        );
        write(&dir.join("node/src/glue.rs"), &glue);
        write(&dir.join("node/src/lib.rs"), &node_lib(&glue));
        members.push(format!("{name}/node"));
    }
    let glue = rendered(&outputs, "jni/glue.rs");
    write(&dir.join("jni/Cargo.toml"), &package(&format!("stub-jni-{dashed}"), "uform_jni", &(dep.clone() + JNI_DEPS)));
    write(&dir.join("jni/src/glue.rs"), &glue);
    write(&dir.join("jni/src/lib.rs"), &jni_lib(&glue));
    members.push(format!("{name}/jni"));
    let glue = rendered(&outputs, "uniffi/glue.rs");
    let manifest = package(&format!("stub-uniffi-{dashed}"), "uform_uniffi", &(dep.clone() + UNIFFI_DEPS));
    write(&dir.join("uniffi/Cargo.toml"), &manifest);
    // A build script left by an older run of this test would still be built: the scaffolding is made here now.
    let _ = std::fs::remove_file(dir.join("uniffi/build.rs"));
    let udl = rendered(&outputs, "uniffi/uform.udl");
    let scaffolding = uform_uniffi_bindgen::scaffolding(&udl, "uform")
        .unwrap_or_else(|e| panic!("{name}: uniffi-bindgen refused the rendered UDL: {e}"));
    write(&dir.join("uniffi/src/uform.udl"), &udl);
    write(&dir.join("uniffi/src/uform.uniffi.rs"), &scaffolding);
    write(&dir.join("uniffi/src/glue.rs"), &glue);
    write(&dir.join("uniffi/src/lib.rs"), &uniffi_lib(&glue, name == "uform"));
    members.push(format!("{name}/uniffi"));
    if !PYTHON_GLUE_EXCLUDED.contains(&name) {
        let glue = rendered(&outputs, "python/glue.rs");
        write(
            &dir.join("python/Cargo.toml"),
            &package(&format!("stub-python-{dashed}"), "_native", &(dep + PYTHON_DEPS)),
        );
        write(&dir.join("python/src/glue.rs"), &glue);
        write(&dir.join("python/src/lib.rs"), &python_lib(&glue, name == "uform"));
        members.push(format!("{name}/python"));
    }
    members
}

/// Fixtures whose Node glue does not compile against their stub core because of a generator bug (see each entry).
const NODE_GLUE_EXCLUDED: &[&str] = &[];

/// Fixtures whose Python glue does not compile against their stub core because of a generator bug (see each entry).
const PYTHON_GLUE_EXCLUDED: &[&str] = &[];

/// Writes one workspace of every IDL's crates under `base`, so a single `cargo check` covers them in parallel.
fn workspace(base: &Path, idls: &[(String, PathBuf)]) {
    let mut members = Vec::new();
    for (name, idl) in idls {
        members.extend(fixture_crates(name, idl, base));
    }
    let list: Vec<String> = members.iter().map(|m| format!("    {m:?},")).collect();
    write(&base.join("Cargo.toml"), &format!("[workspace]\nresolver = \"2\"\nmembers = [\n{}\n]\n", list.join("\n")));
    // The repository's lock file, so that napi and pyo3 resolve offline to the versions the bindings use.
    let lock = base.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(root().join("Cargo.lock"), lock).unwrap();
    }
}

/// `cargo check` of the workspace at `dir`, every crate even when one fails; `Err` holds the compiler's messages.
///
/// Offline, so that a machine with a warm cargo cache never touches the network; when the cache lacks a crate only
/// these workspaces use (napi's `convert_case`, on a machine that has never built the Node binding), `cargo fetch`
/// downloads it once (resolving
/// into this workspace's copy of the lock file what the repository's lacks) and the check runs offline again.
fn check(dir: &Path, target: &Path) -> Result<(), String> {
    let cargo = || {
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cargo.env("CARGO_TARGET_DIR", target).env_remove("RUSTFLAGS").current_dir(dir);
        // Fixture glue is checked, not linted (its stub cores leave much unused): `cargo xtask test`'s rust step runs
        // this test under clippy's driver with warnings denied, and would otherwise pass both on.
        cargo.env_remove("RUSTC_WORKSPACE_WRAPPER").env_remove("CLIPPY_ARGS");
        cargo
    };
    let check = || {
        cargo()
            .args(["check", "--offline", "--quiet", "--workspace", "--keep-going", "--message-format=short"])
            .output()
            .expect("cannot run cargo")
    };
    let mut out = check();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Cargo says so in two ways: a crate the lock file names is not downloaded ("--offline was specified"), or one it
    // does not name (one the repository's lock file lacks) cannot be resolved ("offline mode").
    let offline = stderr.contains("--offline was specified") || stderr.contains("offline mode");
    if !out.status.success() && offline {
        eprintln!("the cargo cache lacks crates of the stub workspace: `cargo fetch` in {}", dir.display());
        let fetch = cargo().args(["fetch", "--quiet"]).output().expect("cannot run cargo fetch");
        if !fetch.status.success() {
            return Err(format!(
                "`cargo check --offline` needs crates the cargo cache lacks, and `cargo fetch` failed:\n{}{stderr}",
                String::from_utf8_lossy(&fetch.stderr)
            ));
        }
        out = check();
    }
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
        panic!("a fixture's C, Node, Python, JNI or uniffi glue does not compile against its stub core (paths name the fixture):\n{messages}");
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
    for language in ["c", "node", "python", "jni", "uniffi"] {
        let missing = messages
            .lines()
            .any(|l| l.starts_with(&format!("broken_values/{language}/")) && l.contains("cannot find function `cook`"));
        assert!(missing, "{language}'s glue did not miss `cook`:\n{messages}");
    }
}
