//! `cargo xtask test swift`. These machines have no Swift compiler, so this
//!
//! 1. packages the library as Swift users get it (`cargo xtask package swift --out target/swift-package`: the
//!    static-library artifact bundle, its zip and checksum, the released manifest, the self-contained folder) and
//!    checks it without Swift (`crate::package::checks`), printing
//!    `swift: bundle=ok symbols=N/N links=ok manifest=ok` and failing when any is not ok;
//! 2. syntax-checks every generated and hand-written Swift file (Package.swift, the folder's manifests and the
//!    consumer included) with tree-sitter-swift from PyPI, in a virtual environment under `target/`, and fails on
//!    any ERROR or MISSING node (bindings/swift/check_syntax.py; it masks only uniffi's
//!    `@_documentation(visibility: private)` attribute, a known gap of the grammar). It first checks that the
//!    checker rejects a broken file, so a broken setup cannot pass silently.
//!
//! Where `swift` exists it also runs the folder's three commands:
//! `swift build && swift test && (cd Consumer && swift run)`.

use crate::package;
use crate::util::{have, root, run_in};
use std::path::{Path, PathBuf};

pub fn run() -> Result<(), String> {
    let root = root();
    let folder = root.join("target/swift-package");
    let packaged = package::swift(None)?;
    package::write_folder(&folder, &packaged)?;
    let summary = package::checks::all(&root, &packaged, Some(&folder));
    println!("{}", summary.line());
    let failures = summary.failures();
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }

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
    files.push(packaged.released_manifest.clone());
    for name in
        ["Package.swift", "Package.released.swift", "Consumer/Package.swift", "Consumer/Sources/Consumer/main.swift"]
    {
        files.push(folder.join(name));
    }
    if files.len() < 3 {
        return Err(format!("expected Package.swift, the generated and the test sources; found {files:?}"));
    }
    let mut args = vec![checker];
    args.extend(files.iter().map(|f| f.strip_prefix(&root).unwrap_or(f).display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_in(&root, &python, &args)?;

    if have("swift") {
        run_in(&folder, "swift", &["build"])?;
        run_in(&folder, "swift", &["test"])?;
        run_in(&folder.join("Consumer"), "swift", &["run"])?;
    } else {
        eprintln!(
            "no `swift` here: packaged, checked and syntax-checked; a machine with Swift runs, in {}, \
             `swift build && swift test && (cd Consumer && swift run)`",
            folder.display()
        );
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
