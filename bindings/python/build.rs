//! Rebuilds the module after maturin has patched it.
//!
//! To bundle libhwloc and libudev into the wheel, maturin's repair rewrites the module's DT_NEEDED and RPATH in
//! place — in `target/maturin/lib_native.so`, which shares its inode with cargo's own artifact in
//! `target/<profile>/deps`. Cargo then finds that artifact fresh and hands the patched copy to the next
//! `maturin build`, whose repair cannot find the renamed `libhwloc-<hash>.so.15` and fails. Watching the staged
//! copy tells cargo that the artifact changed after the build, so the next build links a clean one.
//!
//! Before the first maturin build an empty placeholder stands in for the staged copy: a missing watched file would
//! make cargo rebuild the crate on every `cargo build`.
//!
//! It also finds the generated glue the crate includes: generated/python/glue.rs in the repository, glue.rs at the
//! root of the sdist (maturin lays the workspace out below the pyproject.toml that sits beside it).

use std::path::{Path, PathBuf};

fn main() {
    glue();
    rebuild_after_repair();
}

fn glue() {
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let candidates = [Path::new("../../generated/python/glue.rs"), Path::new("../../glue.rs")];
    let glue = candidates
        .iter()
        .map(|c| crate_dir.join(c))
        .find(|p| p.is_file())
        .expect("no generated/python/glue.rs (run `cargo xtask codegen`) and no glue.rs at the sdist's root");
    println!("cargo:rerun-if-changed={}", glue.display());
    println!("cargo:rustc-env=UFORM_PYTHON_GLUE={}", glue.display());
}

fn rebuild_after_repair() {
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    // OUT_DIR is <target>[/<triple>]/<profile>/build/<crate>-<hash>/out; cargo marks <target> with CACHEDIR.TAG.
    let Some(target) = out_dir.ancestors().find(|dir| dir.join("CACHEDIR.TAG").is_file()) else { return };
    let staged =
        target.join("maturin").join(if cfg!(target_os = "macos") { "lib_native.dylib" } else { "lib_native.so" });
    if !staged.exists() {
        let _ = std::fs::create_dir_all(target.join("maturin"));
        let _ = std::fs::write(&staged, b"");
    }
    println!("cargo:rerun-if-changed={}", staged.display());
    println!("cargo:rerun-if-changed=build.rs");
}
