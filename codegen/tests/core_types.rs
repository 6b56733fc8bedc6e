//! Core's records, enums and error kinds come only from `generated/rust/`: core/src declares none of them itself
//! and spells none of the IDL's enum strings or error codes.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn core_repeats_nothing_of_the_idl() {
    let api = uform_codegen::load(&root().join("idl/uform.yaml")).unwrap_or_else(|d| panic!("{d}"));
    let mut forbidden = Vec::new();
    for r in api.records() {
        forbidden.push(format!("pub struct {} ", r.name.pascal()));
    }
    for e in api.enums() {
        forbidden.push(format!("pub enum {} ", e.name.pascal()));
        for v in &e.variants {
            if let uform_codegen::model::EnumValue::String(s) = &v.value {
                forbidden.push(format!("{s:?}"));
            }
        }
    }
    forbidden.push("pub enum ErrorKind ".into());
    forbidden.extend(api.errors.iter().map(|k| format!("{:?}", k.name.snake())));
    let mut files = Vec::new();
    rust_files(&root().join("core/src"), &mut files);
    assert!(files.len() > 10);
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for f in &forbidden {
            if text.contains(f.as_str()) {
                found.push(format!("{}: {f}", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "core/src repeats the IDL instead of including generated/rust:\n{}", found.join("\n"));
    let types = std::fs::read_to_string(root().join("core/src/types.rs")).unwrap();
    assert!(types.contains("include!(\"../../generated/rust/types.rs\")"));
    let error = std::fs::read_to_string(root().join("core/src/error.rs")).unwrap();
    assert!(error.contains("include!(\"../../generated/rust/error_kind.rs\")"));
}
