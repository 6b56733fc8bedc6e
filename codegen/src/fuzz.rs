//! One fuzz input through the whole pipeline: bytes → load (UTF-8, YAML, check) → model → every language's files.
//! The libFuzzer target (`fuzz/fuzz_targets/idl_loader.rs`) and the stable harness (`tests/fuzz_corpus.rs`) both
//! call [`fuzz_one`], so they test the same thing; `fuzz/README.md` says how to run them.

use crate::diagnostics::Diagnostics;
use std::collections::BTreeSet;
use std::path::{Component, Path};

/// How far an input got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The loader rejected it with this many problems.
    Rejected { problems: usize },
    /// It loaded, checked and rendered this many files.
    Rendered { files: usize },
}

/// Runs arbitrary bytes through load → check → model → render of every language. Panics (the fuzzers' failure
/// signal) when a stage panics or when the pipeline breaks a promise it makes: a rejection carries at least one
/// problem, each with a message and a position inside the input; a rendered file lies inside `generated/` under a
/// unique path and ends with a newline. Bytes that are not UTF-8 get their diagnostic, and then go on through the
/// pipeline with the bad bytes replaced, so the stages after the loader see them too.
pub fn fuzz_one(data: &[u8]) -> Outcome {
    let outcome = run_bytes(data);
    match std::str::from_utf8(data) {
        Ok(_) => outcome,
        Err(_) => {
            assert!(
                matches!(outcome, Outcome::Rejected { problems: 1 }),
                "bytes that are not UTF-8 were not rejected: {outcome:?}"
            );
            run_bytes(String::from_utf8_lossy(data).as_bytes())
        }
    }
}

fn run_bytes(data: &[u8]) -> Outcome {
    match crate::load_bytes(data, "fuzz.yaml") {
        Err(d) => {
            check_diagnostics(&d, data);
            Outcome::Rejected { problems: d.problems.len() }
        }
        Ok(api) => {
            // An accepted IDL renders: a template or formatter failure is a generator bug.
            let files = crate::render(&api).unwrap_or_else(|e| panic!("an accepted IDL failed to render: {e}"));
            check_files(&files);
            Outcome::Rendered { files: files.len() }
        }
    }
}

fn check_diagnostics(d: &Diagnostics, data: &[u8]) {
    assert!(!d.problems.is_empty(), "a rejection without a problem");
    // YAML breaks lines at LF, CR and CRLF; either count bounds the last line a position may name.
    let lines = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count() as u32 + 1;
    for p in &d.problems {
        assert!(!p.message.trim().is_empty(), "a problem without a message at {}:{}", p.line, p.column);
        assert!(p.line <= lines + 1, "a problem at line {} of a {lines}-line input: {}", p.line, p.message);
    }
    let shown = d.to_string();
    assert!(shown.ends_with(&format!("in {}", d.file)), "the summary line is missing: {shown}");
}

fn check_files(files: &[crate::Output]) {
    assert!(!files.is_empty(), "an accepted IDL rendered no files");
    let mut seen = BTreeSet::new();
    for o in files {
        let path: &Path = &o.path;
        let inside = path.components().all(|c| matches!(c, Component::Normal(_))) && path.components().count() >= 2;
        assert!(inside, "rendered file {path:?} does not lie inside generated/<language>/");
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert!(!name.is_empty() && !name.starts_with('.'), "rendered file {path:?} has a hidden or empty name");
        assert!(seen.insert(path.to_path_buf()), "rendered file {path:?} is produced twice");
        assert!(o.contents.ends_with('\n'), "rendered file {path:?} does not end with a newline");
    }
}
