//! `cargo xtask test lint`, the whole run's first step: `cargo fmt --all --check`, `cargo xtask codegen --check`
//! (generated/ is what the IDL makes) and `cargo clippy --workspace --all-targets -- -D warnings`. It installs the
//! Debian packages the workspace needs to build first (hwlocality's `libhwloc-dev` and `libudev-dev`, the gloo shim's
//! `libgloo-dev` and `g++`), so clippy also works on a fresh machine.

use crate::util::{apt_install, cargo, CORE_BUILD};

pub fn run() -> Result<(), String> {
    apt_install(&[&CORE_BUILD[..], &["pkg-config", "gcc"]].concat())?;
    cargo(&["fmt", "--all", "--check"])?;
    crate::codegen::run(&["--check".to_string()])?;
    cargo(&["clippy", "--workspace", "--all-targets", "--quiet", "--", "-D", "warnings"])
}
