//! `cargo xtask bench load`: `Model.loadRam` plus a full read of every tensor against the Python `safetensors`
//! package and a plain sequential read, cold and warm (bench/src/bin/load.rs says how). Makes (once) a virtual
//! environment under target/bench-load-venv with `safetensors` and `numpy` from PyPI for the Python peer.

use crate::util::{cargo, root, status};
use std::process::Command;

pub fn run(args: &[String]) -> Result<(), String> {
    let venv = root().join("target/bench-load-venv");
    let python = venv.join("bin/python");
    let ready = |p: &std::path::Path| {
        Command::new(p).args(["-c", "import safetensors, numpy"]).output().is_ok_and(|o| o.status.success())
    };
    if !ready(&python) {
        let _ = std::fs::remove_dir_all(&venv);
        let mut make = Command::new("python3");
        make.args(["-m", "venv"]).arg(&venv);
        status(make, "python3 -m venv (install python3-venv)")?;
        let mut pip = Command::new(&python);
        pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "safetensors", "numpy"]);
        status(pip, "pip install safetensors numpy")?;
    }
    let python = python.display().to_string();
    let mut cargo_args = vec!["run", "--release", "--quiet", "-p", "uform-bench", "--bin", "load", "--", "--python"];
    cargo_args.push(&python);
    cargo_args.extend(args.iter().map(String::as_str));
    cargo(&cargo_args)
}
