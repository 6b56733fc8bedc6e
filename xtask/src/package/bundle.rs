//! `UFormNative.artifactbundle`: SE-0482's static-library artifact bundle, one variant for the host's triple.
//!
//! ```text
//! UFormNative.artifactbundle/
//!   info.json
//!   <triple>/libuform_uniffi.a
//!   <triple>/include/{UFormFFI.h, UFormBench.h, module.modulemap}
//! ```
//!
//! hwloc stays a shared library: Debian's `libhwloc.a` needs libudev, so linking it in would not leave the `.a`
//! needing only libc, libm, libpthread and libdl (and hwlocality's vendored build downloads hwloc, which these
//! machines cannot). The module map's `link` lines name every library outside that set whose symbols the `.a`
//! uses, found by `nm` ([`super::checks::needed_libraries`]); on Linux that is `link "hwloc"`, so a Swift machine
//! needs hwloc's development package (`libhwloc-dev`).

use super::checks;
use super::{copy, write, BUNDLE};
use std::path::{Path, PathBuf};

/// The artifact's name in info.json, the binary target's name and the C module's name.
pub const MODULE: &str = "UFormFFI";
const LIBRARY: &str = "libuform_uniffi.a";

/// What the overhead benchmark calls through the module besides the API (defined in bindings/uniffi/src/lib.rs).
const BENCH_HEADER: &str =
    "// The overhead benchmark's peers, exported by the same library (bindings/uniffi/src/lib.rs). Not part of the API.

#pragma once

#include \"UFormFFI.h\"

// A bare no-op.
void uform_bench_noop(void);

// A rows x columns matrix (the i-th float is i) lowered as a verb's result is; the caller owns the buffer.
RustBuffer uform_bench_f32_matrix(uint32_t rows, uint32_t columns);
";

pub fn write_bundle(root: &Path, out: &Path, version: &str) -> Result<PathBuf, String> {
    let bundle = out.join(BUNDLE);
    if bundle.exists() {
        std::fs::remove_dir_all(&bundle).map_err(|e| format!("cannot remove {}: {e}", bundle.display()))?;
    }
    let triple = swift_triple(&host_triple()?);
    let variant = bundle.join(&triple);
    let library = variant.join(LIBRARY);
    copy(&root.join("target/release").join(LIBRARY), &library)?;
    drop_bitcode(&library)?;
    let include = variant.join("include");
    copy(&root.join("generated/swift/Sources/UFormFFI/UFormFFI.h"), &include.join("UFormFFI.h"))?;
    write(&include.join("UFormBench.h"), BENCH_HEADER)?;
    let (links, unresolved) = checks::needed_libraries(&library, &candidate_libraries(root))?;
    if !unresolved.is_empty() {
        eprintln!(
            "warning: no library found for {} symbols the .a needs: {}",
            unresolved.len(),
            unresolved.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut modulemap =
        format!("module {MODULE} {{\n    header \"UFormFFI.h\"\n    header \"UFormBench.h\"\n    export *\n");
    for link in &links {
        modulemap.push_str(&format!("    link \"{link}\"\n"));
    }
    modulemap.push_str("}\n");
    write(&include.join("module.modulemap"), &modulemap)?;
    let info = format!(
        r#"{{
  "schemaVersion": "1.0",
  "artifacts": {{
    "{MODULE}": {{
      "version": "{version}",
      "type": "staticLibrary",
      "variants": [
        {{
          "path": "{triple}/{LIBRARY}",
          "supportedTriples": ["{triple}"],
          "staticLibraryMetadata": {{
            "headerPaths": ["{triple}/include"],
            "moduleMapPath": "{triple}/include/module.modulemap"
          }}
        }}
      ]
    }}
  }}
}}
"#
    );
    write(&bundle.join("info.json"), &info)?;
    Ok(bundle)
}

/// Removes the LLVM bitcode rustc embeds next to the machine code (`.llvmbc`, `.llvmcmd`: the release profile's
/// LTO asks for it). No linker needs it, and a linker or `nm` with an older LLVM plugin (binutils' LLVMgold, a Swift
/// toolchain's) fails to read rustc's newer bitcode and then treats the object as having no symbols at all.
fn drop_bitcode(library: &Path) -> Result<(), String> {
    if cfg!(target_os = "macos") {
        return Ok(()); // Mach-O keeps bitcode in __LLVM segments that ld64 ignores
    }
    let status = std::process::Command::new("objcopy")
        .args(["--remove-section=.llvmbc", "--remove-section=.llvmcmd"])
        .arg(library)
        .status()
        .map_err(|e| format!("cannot run objcopy (binutils): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("objcopy on {} failed with {status}", library.display()))
    }
}

/// rustc's host triple (`x86_64-unknown-linux-gnu`).
fn host_triple() -> Result<String, String> {
    let out = std::process::Command::new("rustc").arg("-vV").output().map_err(|e| format!("cannot run rustc: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV printed no host triple".into())
}

/// The triple as Swift spells it (Apple's `arm64-apple-macosx` for Rust's `aarch64-apple-darwin`).
fn swift_triple(rust: &str) -> String {
    match rust {
        "aarch64-apple-darwin" => "arm64-apple-macosx".into(),
        "x86_64-apple-darwin" => "x86_64-apple-macosx".into(),
        other => other.into(),
    }
}

/// The native libraries the release build's build scripts asked to link (`cargo:rustc-link-lib=…`), hwloc's
/// among them: the candidates for the module map's `link` lines.
fn candidate_libraries(root: &Path) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(root.join("target/release/build")) else { return Vec::new() };
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("output")) else { continue };
        for line in text.lines() {
            let Some(spec) =
                line.strip_prefix("cargo:rustc-link-lib=").or_else(|| line.strip_prefix("cargo::rustc-link-lib="))
            else {
                continue;
            };
            let (kind, name) = spec.split_once('=').unwrap_or(("dylib", spec));
            if kind != "static" {
                names.insert(name.split(':').next().unwrap_or(name).to_string());
            }
        }
    }
    names.into_iter().collect()
}
