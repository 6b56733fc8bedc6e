//! `cargo xtask gpu-kit`: the device check's binaries, built here in release mode and copied into
//! `target/gpu-kit/`, so `scripts/gpu-check.sh` runs them on a GPU machine that has no Rust toolchain.

use crate::util;

/// The examples the kit holds (core/examples/*.rs), in the order the script runs them.
const EXAMPLES: [&str; 4] = ["list_devices", "gpu_check", "vram_check", "model_vram_check"];

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("`gpu-kit` takes no arguments, got `{extra}`"));
    }
    let mut build = vec!["build", "--release", "-p", "uform-core"];
    for name in EXAMPLES {
        build.extend(["--example", name]);
    }
    util::cargo(&build)?;
    let root = util::root();
    let kit = root.join("target/gpu-kit");
    std::fs::create_dir_all(&kit).map_err(|e| format!("cannot create {}: {e}", kit.display()))?;
    for name in EXAMPLES {
        let from = root.join("target/release/examples").join(name);
        let to = kit.join(name);
        // Copy over a temporary name, then rename: a kit another shell is running keeps its open binaries.
        let staged = kit.join(format!(".{name}.new"));
        std::fs::copy(&from, &staged).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
        std::fs::rename(&staged, &to).map_err(|e| format!("cannot place {}: {e}", to.display()))?;
    }
    let bytes: u64 = EXAMPLES.iter().filter_map(|n| std::fs::metadata(kit.join(n)).ok()).map(|m| m.len()).sum();
    eprintln!(
        "gpu-kit: {} binaries, {:.1} MiB, in {}; run scripts/gpu-check.sh (it finds the kit there)",
        EXAMPLES.len(),
        bytes as f64 / 1048576.0,
        kit.display()
    );
    Ok(())
}
