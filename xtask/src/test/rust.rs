//! `cargo xtask test rust`: the Rust tests of the core (unit tests and the multi-process mesh tests), the code
//! generator (snapshots, the broken-IDL table, the fuzz corpus replay and a 20 s mutation run, the C header and strict
//! TypeScript checks) and the C ABI crate.
//! The binding crates are tested from their own languages. Installs the Debian packages hwlocality needs.

use crate::util::{apt_install, cargo};

pub fn run() -> Result<(), String> {
    apt_install(&["libhwloc-dev", "libudev-dev", "pkg-config", "gcc", "g++"])?;
    cargo(&["test", "-p", "uform-core", "-p", "uform-codegen", "-p", "uform-c"])
}
