//! `cargo xtask test swift`. These machines have no Swift compiler, so this
//!
//! 1. packages the library as Swift users get it (`cargo xtask package swift --out target/swift-package`: the
//!    static-library artifact bundle, its zip and checksum, the released manifest, the self-contained folder) and
//!    checks it without Swift (`crate::package::checks`), printing
//!    `swift: bundle=ok symbols=N/N links=ok manifest=ok` and failing when any is not ok;
//! 2. checks every Swift file of that folder (its generated sources, the hand-written tests and bench, both
//!    manifests and the consumer) and the repository's Package.swift with bindings/swift/check/check.py:
//!    tree-sitter-swift from PyPI, in a virtual environment under `target/`, for the syntax and the rules of the
//!    language the syntax tree decides (an `await` inside an XCTAssert's arguments, among others; the script lists
//!    them). It first checks the checker on its fixtures, each of which must fail where it says (and one must pass),
//!    so a broken setup cannot pass silently.
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

    let python = checker_python(&root)?;
    let checker = root.join("bindings/swift/check/check.py").display().to_string();
    let fixtures = root.join("bindings/swift/check/fixtures").display().to_string();
    run_in(&root, &python, &[checker.as_str(), "--fixtures", fixtures.as_str()])?;

    let mut files = vec![root.join("Package.swift")];
    swift_files(&folder, &mut files);
    for part in ["Sources/UForm/", "Sources/UFormBench/", "Tests/UFormTests/", "Consumer/", "Package.released.swift"] {
        if !files.iter().any(|f| f.strip_prefix(&folder).is_ok_and(|p| p.starts_with(part))) {
            return Err(format!("no Swift file under {} in {}: the check would miss it", part, folder.display()));
        }
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
            "no `swift` here: packaged and checked; a machine with Swift runs, in {}, \
             `swift build && swift test && (cd Consumer && swift run)`",
            folder.display()
        );
    }
    Ok(())
}

/// The Python of `target/swift-syntax-venv`, with tree-sitter and its Swift grammar installed (pinned: the fixtures'
/// positions and the masked gap are the grammar's).
fn checker_python(root: &Path) -> Result<String, String> {
    let venv = root.join("target/swift-syntax-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        crate::util::make_venv(&venv)?;
    }
    let probe = "import tree_sitter, tree_sitter_swift, importlib.metadata as m; \
                 assert m.version('tree-sitter-swift') == '0.7.4'";
    let ready = std::process::Command::new(&python).args(["-c", probe]).output().is_ok_and(|o| o.status.success());
    if !ready {
        crate::util::pip_install(&python, &["tree-sitter==0.26.1", "tree-sitter-swift==0.7.4"])?;
    }
    Ok(python.display().to_string())
}

/// Every `.swift` file under `dir`, sorted, leaving out build folders and the untracked test model.
fn swift_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == ".build" || n == "TestModel") {
                continue;
            }
            swift_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "swift") {
            out.push(path);
        }
    }
}
