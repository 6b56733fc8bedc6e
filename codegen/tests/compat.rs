//! `cargo xtask codegen --compat`: each folder under tests/fixtures/compat holds an IDL pair (old.yaml, new.yaml)
//! and expected.txt, the findings per surface and the version verdict. `UPDATE_COMPAT=1` rewrites expected.txt
//! (review the diff).

use std::path::Path;
use uform_codegen::compat::{compare, required_bump};
use uform_codegen::load;

fn verdict(old: &Path, new: &Path) -> String {
    let old = load(old).unwrap_or_else(|d| panic!("{d}"));
    let new = load(new).unwrap_or_else(|d| panic!("{d}"));
    uform_codegen::compat::verdict(&old, &new)
}

#[test]
fn fixture_pairs_give_their_findings() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compat");
    let mut cases: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    cases.sort();
    assert!(cases.len() >= 8, "expected the fixture pairs in {}", dir.display());
    let mut failures = Vec::new();
    for case in &cases {
        let got = verdict(&case.join("old.yaml"), &case.join("new.yaml"));
        let expected_path = case.join("expected.txt");
        if std::env::var_os("UPDATE_COMPAT").is_some() {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if got != expected {
            failures.push(format!("{}:\n--- expected\n{expected}--- got\n{got}", case.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_interface_is_compatible_with_itself() {
    let idl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../idl/uform.yaml");
    let api = load(&idl).unwrap();
    assert!(compare(&api, &api).is_empty());
}

#[test]
fn breaking_changes_need_the_matching_bump() {
    assert!(required_bump("0.1.0", "0.1.0", false).is_ok());
    assert!(required_bump("0.1.0", "0.1.1", true).is_err());
    assert!(required_bump("0.1.0", "0.2.0", true).is_ok());
    assert!(required_bump("0.9.3", "1.0.0", true).is_ok());
    assert!(required_bump("1.2.0", "1.3.0", true).is_err());
    assert!(required_bump("1.2.0", "2.0.0", true).is_ok());
    let message = required_bump("0.3.4", "0.3.5", true).unwrap_err();
    assert!(message.contains("0.4.0"), "{message}");
}
