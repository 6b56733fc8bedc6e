//! `cargo xtask test lint`, the whole run's first step: `cargo fmt --all --check`, `cargo xtask codegen --check`
//! (generated/ is what the IDL makes) and `cargo clippy --workspace --all-targets -- -D warnings`. It installs the
//! Debian packages the workspace needs to build first (hwlocality's `libhwloc-dev` and `libudev-dev`, the gloo shim's
//! `libgloo-dev` and `g++`), so clippy also works on a fresh machine.
//!
//! When the `rust` step follows in the same run, clippy lints inside that run's dev builds instead: `cargo clippy`
//! compiles every dependency a second time (as metadata only: the lint step took 232–258 s here) for what the dev
//! builds compile anyway, so the lint step hands clippy's driver to them ([`CLIPPY_IN_DEV_BUILDS`]) and the rust
//! step also builds the members no test builds. A lint then fails the build that meets it, with clippy's message.

use crate::util::{apt_install, cargo, CLIPPY_IN_DEV_BUILDS, CORE_BUILD};
use std::process::Command;

pub fn run(rust_follows: bool) -> Result<(), String> {
    apt_install(&[&CORE_BUILD[..], &["pkg-config", "gcc"]].concat())?;
    cargo(&["fmt", "--all", "--check"])?;
    crate::codegen::run(&["--check".to_string()])?;
    if rust_follows {
        return leave_clippy_to_builds();
    }
    cargo(&["clippy", "--workspace", "--all-targets", "--quiet", "--", "-D", "warnings"])
}

/// Finds clippy's driver (the toolchain's, beside the cargo that runs xtask) and sets it for this run's dev builds.
fn leave_clippy_to_builds() -> Result<(), String> {
    let out = Command::new("rustup").args(["which", "clippy-driver"]).output();
    let driver = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => "clippy-driver".to_string(),
    };
    let answers = Command::new(&driver).arg("--version").output().is_ok_and(|o| o.status.success());
    if !answers {
        return Err(format!("clippy's driver `{driver}` does not run: `rustup component add clippy`"));
    }
    eprintln!("clippy: lints the workspace inside this run's dev builds (the rust step), through {driver}");
    CLIPPY_IN_DEV_BUILDS.set(driver.into()).map_err(|_| "clippy was already left to the dev builds".to_string())
}
