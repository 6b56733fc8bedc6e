//! `cargo xtask test rust`: the workspace's Rust tests (core, codegen snapshots and broken-IDL table, C header and
//! TypeScript checks). Installs the Debian packages hwlocality needs when they are missing.

use crate::util::{apt_install, cargo};

pub fn run() -> Result<(), String> {
    apt_install(&["libhwloc-dev", "libudev-dev", "pkg-config"])?;
    cargo(&["test", "--workspace", "--exclude", "uform-bench"])
}
