//! `cargo xtask test swift`. These machines have no Swift compiler, so this syntax-checks every generated and
//! hand-written Swift file (Package.swift included) with tree-sitter-swift from PyPI, in a virtual environment
//! under `target/`, and fails on any ERROR or MISSING node (bindings/swift/check_syntax.py; it masks only uniffi's
//! `@_documentation(visibility: private)` attribute, a known gap of the grammar). It first checks that the checker
//! rejects a broken file, so a broken setup cannot pass silently. Where `swift` exists it also runs
//! `swift build` and `swift test` over the cdylib.

use crate::util::{cargo, have, root, run_in};
use std::path::{Path, PathBuf};

pub fn run() -> Result<(), String> {
    let root = root();
    let venv = root.join("target/swift-syntax-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        run_in(&root, "python3", &["-m", "venv", &venv.display().to_string()])?;
    }
    let python = python.display().to_string();
    let ready = std::process::Command::new(&python)
        .args(["-c", "import tree_sitter, tree_sitter_swift"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ready {
        run_in(&root, &python, &["-m", "pip", "install", "--quiet", "tree-sitter", "tree-sitter-swift"])?;
    }
    let checker = root.join("bindings/swift/check_syntax.py").display().to_string();

    // The checker must fail on a broken file.
    let broken = root.join("target/swift-syntax-venv/broken.swift");
    std::fs::write(&broken, "func broken( {\n    let x =\n}\n").map_err(|e| e.to_string())?;
    let status = std::process::Command::new(&python)
        .args([checker.as_str(), &broken.display().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        return Err("the Swift syntax checker accepted a broken file".into());
    }

    let mut files = vec![root.join("Package.swift")];
    for dir in ["generated/swift", "bindings/swift"] {
        swift_files(&root.join(dir), &mut files);
    }
    if files.len() < 3 {
        return Err(format!("expected Package.swift, the generated and the test sources; found {files:?}"));
    }
    let mut args = vec![checker];
    args.extend(files.iter().map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_in(&root, &python, &args)?;

    if have("swift") {
        cargo(&["build", "--quiet", "-p", "uform-uniffi"])?;
        run_in(&root, "swift", &["build"])?;
        run_in(&root, "swift", &["test"])?;
    } else {
        eprintln!("no `swift` here: syntax checked only; a machine with Swift runs `swift build && swift test`");
    }
    Ok(())
}

fn swift_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == ".build") {
                continue;
            }
            swift_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "swift") {
            out.push(path);
        }
    }
}
