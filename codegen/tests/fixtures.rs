//! One small IDL per shape, `codegen/tests/fixtures/<shape>.yaml` (see idl/MAINTAINING.md).
//!
//! A fixture with a sibling `<shape>.expected` is a shape some backend cannot render: loading it must fail with exactly
//! that text (`UFORM_ACCEPT_EXPECTED=1 cargo test -q -p uform-codegen --test fixtures` rewrites them). Every other fixture is valid: it is rendered for every backend and each of its files is snapshotted
//! (one snapshot per fixture holding every file, `codegen/tests/snapshots/fixtures__<shape>.snap`; accept changes with
//! `INSTA_UPDATE=always cargo test -q -p uform-codegen --test fixtures`, then review `git diff`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every fixture's stem and path, sorted.
fn fixtures() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    out.sort();
    out
}

/// The fixture's diagnostics as `cargo xtask codegen` prints them, with the path relative to the fixtures folder.
fn load(path: &Path) -> Result<uform_codegen::model::Api, String> {
    let file = format!("fixtures/{}", path.file_name().unwrap().to_string_lossy());
    let text = std::fs::read_to_string(path).unwrap();
    uform_codegen::load_str(&text, &file).map_err(|d| d.to_string())
}

fn render(path: &Path) -> BTreeMap<String, String> {
    let api = load(path).unwrap_or_else(|d| panic!("{d}"));
    uform_codegen::render(&api)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|o| (o.path.display().to_string(), o.contents))
        .collect()
}

#[test]
fn there_is_a_fixture_per_shape() {
    let names: Vec<String> = fixtures().into_iter().map(|(n, _)| n).collect();
    for shape in [
        "scalars_as_input",
        "scalars_as_output",
        "scalars_in_records",
        "enums",
        "input_record_with_defaults",
        "output_record_nesting",
        "lists",
        "optional_results",
        "throwing_and_not",
        "constant",
        "string_function_with_parameters",
        "blocking_and_try_first",
        "handle_arguments",
        "async_twin",
        "pages",
        "matrix_result",
        "bytes_list_argument",
        "unsupported_bytes_outside_list_parameter",
        "only_per_language",
        "unsupported_record_in_input_record",
        "unsupported_list_in_returned_input_record",
        "unsupported_field_named_like_parameter",
    ] {
        assert!(names.iter().any(|n| n == shape), "no fixture {shape}.yaml");
    }
}

#[test]
fn each_valid_fixture_renders_for_every_backend_as_snapshotted() {
    let mut rendered = 0;
    for (name, path) in fixtures() {
        if path.with_extension("expected").exists() {
            continue;
        }
        let files = render(&path);
        for backend in [
            "c/ffi.rs",
            "c/uform.h",
            "node/glue.rs",
            "typescript/index.d.ts",
            "python/glue.rs",
            "jni/glue.rs",
            "kotlin/cloud/unum/uform/UForm.kt",
            "uniffi/glue.rs",
        ] {
            assert!(files.get(backend).is_some_and(|f| !f.trim().is_empty()), "{name}: {backend} is empty");
        }
        let mut all = String::new();
        for (file, contents) in &files {
            assert!(!contents.contains("compile_error!"), "{name}: {file} carries a compile_error!");
            all.push_str(&format!("======== generated/{file}\n{contents}"));
        }
        insta::assert_snapshot!(name, all);
        rendered += 1;
    }
    assert!(rendered >= 16, "only {rendered} valid fixtures");
}

#[test]
fn each_unsupported_shape_is_rejected_with_its_diagnostic() {
    let mut checked = 0;
    for (name, path) in fixtures() {
        let expected = path.with_extension("expected");
        let Ok(want) = std::fs::read_to_string(&expected) else { continue };
        match load(&path) {
            Ok(_) => panic!("{name}: loaded, but {name}.expected says it is rejected"),
            // `UFORM_ACCEPT_EXPECTED=1` rewrites the .expected files with what the checker says now (review the diff).
            Err(got) if std::env::var_os("UFORM_ACCEPT_EXPECTED").is_some() => {
                std::fs::write(&expected, format!("{}\n", got.trim())).unwrap()
            }
            Err(got) => assert_eq!(got.trim(), want.trim(), "{name}: the diagnostics differ from {name}.expected"),
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} unsupported fixtures");
}

/// `only:` is exact per language: Kotlin's JNI binding and Swift's UDL each hold their own calls alone.
#[test]
fn only_lands_in_the_languages_it_names() {
    let files = render(&dir().join("only_per_language.yaml"));
    let kotlin = format!("{}{}", files["kotlin/cloud/unum/uform/UForm.kt"], files["jni/glue.rs"]);
    assert!(kotlin.contains("fun kotlinOnly(") && !kotlin.contains("swiftOnly") && !kotlin.contains("swift_only"));
    let udl = &files["uniffi/uform.udl"];
    assert!(udl.contains("swift_only") && !udl.contains("kotlin_only"), "{udl}");
    assert!(!udl.contains("c_only") && !udl.contains("python_and"));
    assert!(
        files["docs/kotlin/fixture.md"].contains("kotlinOnly")
            && !files["docs/kotlin/fixture.md"].contains("swiftOnly")
    );
    assert!(
        files["docs/swift/fixture.md"].contains("swiftOnly") && !files["docs/swift/fixture.md"].contains("kotlinOnly")
    );
    assert!(files["c/uform.h"].contains("uform_c_only") && !files["c/uform.h"].contains("uform_swift_only"));
    assert!(files["typescript/index.d.ts"].contains("pythonAndTypescript"));
    assert!(!files["typescript/index.d.ts"].contains("cOnly"));
    assert!(files["python/uform/__init__.pyi"].contains("python_and_typescript"));
    assert!(!files["python/uform/__init__.pyi"].contains("c_only"));
}

/// Each file that changed between two fixtures, and whether it names `spellings` (any of them).
fn changed(before: &str, after: &str) -> BTreeMap<String, String> {
    let (a, b) = (render(&dir().join(before)), render(&dir().join(after)));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    b.into_iter().filter(|(k, v)| a[k] != *v).collect()
}

/// The files every backend renders a new item into: its glue, its declarations and its reference page (C, Node,
/// Python, Kotlin over JNI, Swift over uniffi).
const EVERY_BACKEND: [&str; 15] = [
    "c/ffi.rs",
    "c/uform.h",
    "docs/c/fixture.md",
    "node/glue.rs",
    "typescript/index.d.ts",
    "docs/javascript/fixture.md",
    "python/glue.rs",
    "python/uform/__init__.pyi",
    "docs/python/fixture.md",
    "jni/glue.rs",
    "kotlin/cloud/unum/uform/UForm.kt",
    "docs/kotlin/fixture.md",
    "uniffi/glue.rs",
    "uniffi/uform.udl",
    "docs/swift/fixture.md",
];

/// The guide's "Add a function": one IDL entry reaches every backend, spelled in each language.
#[test]
fn guide_add_a_function_reaches_every_backend() {
    let changed = changed("guide_base.yaml", "guide_add_function.yaml");
    for file in EVERY_BACKEND.iter().chain(&["kotlin/cloud/unum/uform/UFormNative.kt"]) {
        let text = changed.get(*file).unwrap_or_else(|| panic!("{file} did not change"));
        assert!(
            ["flush_all", "flushAll", "FlushAll"].iter().any(|s| text.contains(s)),
            "{file} does not name the new function"
        );
    }
}

/// The guide's "Add a field": one IDL entry reaches every backend, spelled in each language.
#[test]
fn guide_add_a_field_reaches_every_backend() {
    let changed = changed("guide_base.yaml", "guide_add_field.yaml");
    // Core's own types (generated/rust) hold the new field too.
    for file in EVERY_BACKEND.iter().chain(&["rust/types.rs"]) {
        let text = changed.get(*file).unwrap_or_else(|| panic!("{file} did not change"));
        assert!(["max_bytes", "maxBytes"].iter().any(|s| text.contains(s)), "{file} does not name the new field");
    }
}

/// A verb's `f32_matrix` reaches Swift in bulk: the UDL declares a custom type over bytes, and the generator writes its
/// Swift converter, which reads the floats with one bulk copy and no loop over them. Only a surface that returns a
/// matrix has it.
#[test]
fn the_swift_matrix_converter_copies_in_bulk() {
    let files = render(&dir().join("matrix_result.yaml"));
    let swift = &files["swift/Sources/UForm/F32Matrix.swift"];
    let code: String = swift
        .lines()
        .filter(|l| !["//", "/*", "*"].iter().any(|comment| l.trim_start().starts_with(comment)))
        .map(|l| format!("{l}\n"))
        .collect();
    for per_element in ["for ", "while ", "repeat ", ".map", "forEach", "reduce", "readInt", "readFloat"] {
        assert!(!code.contains(per_element), "the converter reads element by element (`{per_element}`):\n{code}");
    }
    assert_eq!(swift.matches("copyMemory(").count(), 1, "{swift}");
    for needed in [
        "public struct F32Matrix: Equatable, Hashable",
        "public var data: [Float]",
        "public var rows: UInt32",
        "public var columns: UInt32",
        "public func FfiConverterTypeF32Matrix_lift(_ buf: RustBuffer) throws -> F32Matrix",
        "ffi_uform_uniffi_rustbuffer_free(",
    ] {
        assert!(swift.contains(needed), "no `{needed}` in\n{swift}");
    }
    assert!(files["swift/Sources/UForm/UFormBulk.swift"].contains("public func uniffiEnsureUformBulkInitialized()"));
    let udl = &files["uniffi/uform.udl"];
    assert!(udl.contains("[Custom=\"uform_bulk\"]\ntypedef bytes F32Matrix;") && !udl.contains("sequence<float>"));
    assert!(!render(&dir().join("lists.yaml")).contains_key("swift/Sources/UForm/F32Matrix.swift"));
}
