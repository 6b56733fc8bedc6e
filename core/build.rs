//! Builds the gloo shim (`gloo/shim.cc`) into a shared library that core embeds and loads at run time, so that
//! linking core never needs libgloo: only a trainer across processes does, when it starts. Without a C++ compiler or
//! gloo's headers (Debian: `libgloo-dev`) the build still succeeds, and such a trainer fails as unavailable, naming
//! what the build lacked.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=gloo/shim.cc");
    println!("cargo::rerun-if-env-changed=CXX");
    println!("cargo::rustc-check-cfg=cfg(uform_gloo_missing)");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let library = out.join("libuform_gloo.so");
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let built = Command::new(&compiler)
        .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-o"])
        .arg(&library)
        .arg("gloo/shim.cc")
        .args(["-lgloo", "-Wl,--no-undefined"])
        .output();
    let why = match built {
        Ok(o) if o.status.success() => return,
        Ok(o) => String::from_utf8_lossy(&o.stderr).lines().take(3).collect::<Vec<_>>().join(" / "),
        Err(e) => format!("`{compiler}` could not run: {e}"),
    };
    println!("cargo::warning=built without the gloo shim, so no trainer can train across processes: {why}");
    println!("cargo::rustc-cfg=uform_gloo_missing");
    std::fs::write(out.join("gloo-missing.txt"), why).expect("OUT_DIR is writable");
}
