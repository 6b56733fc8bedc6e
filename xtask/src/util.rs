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
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed with {status}", args.join(" ")))
    }
}

/// Runs cargo (the one that runs xtask) in the repository root.
pub fn cargo(args: &[&str]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run_in(&root(), &cargo, args)
}

/// Whether `program` answers `--version`.
pub fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Runs a prepared command, failing with `what` when it fails.
pub fn status(mut cmd: Command, what: &str) -> Result<(), String> {
    eprintln!("+ {cmd:?}");
    let s = cmd.status().map_err(|e| format!("cannot run {what}: {e}"))?;
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
