//! `cargo xtask package swift [--out DIR] [--url BASE]`: the Swift package as Swift users get it.
//!
//! Always writes, under `target/swift/`: `UFormNative.artifactbundle` (the static library `libuform_uniffi.a` of a
//! release build, the FFI header, a module map whose `link` lines name the system libraries the `.a` needs, and
//! `info.json`, SE-0482's static-library artifact bundle), its zip with the SwiftPM checksum next to it, and
//! `Package.released.swift`, the manifest a release publishes (the bundle by URL and checksum). The repository's
//! `Package.swift` points at that bundle. With `--out DIR`, also a self-contained package folder ([`folder`]).

mod bundle;
pub mod checks;
mod folder;

pub use folder::write_folder;
mod manifests;
mod sha256;

use crate::util::{cargo, root};
use std::path::{Path, PathBuf};

/// The bundle's name, and the folder the repository's Package.swift expects it in.
pub const BUNDLE: &str = "UFormNative.artifactbundle";
pub const REPO_BUNDLE_DIR: &str = "target/swift";
/// Where the checksum of the zip is written, next to it.
pub const CHECKSUM_SUFFIX: &str = ".sha256";

const USAGE: &str = "usage: cargo xtask package swift [--out DIR] [--url BASE]
  --out DIR   also write a self-contained Swift package folder DIR (a git repository tagged with the version)
  --url BASE  where a release publishes the bundle's zip (default: the repository's GitHub release of the version)";

/// What one packaging run produced, for the checks.
pub struct Packaged {
    pub bundle: PathBuf,
    pub zip: PathBuf,
    pub checksum: String,
    pub released_manifest: PathBuf,
    pub version: String,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let (Some("swift"), rest) = (args.first().map(String::as_str), args.get(1..).unwrap_or_default()) else {
        return Err(USAGE.into());
    };
    let mut out = None;
    let mut url = None;
    let mut rest = rest.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--out" => out = Some(PathBuf::from(rest.next().ok_or(USAGE)?)),
            "--url" => url = Some(rest.next().ok_or(USAGE)?.clone()),
            _ => return Err(USAGE.into()),
        }
    }
    let packaged = swift(url.as_deref())?;
    if let Some(out) = out {
        let out = absolute(&out)?;
        write_folder(&out, &packaged)?;
        eprintln!("wrote the Swift package folder {}", out.display());
    }
    Ok(())
}

/// Builds the release library and writes the bundle, the zip, its checksum and the released manifest.
pub fn swift(url: Option<&str>) -> Result<Packaged, String> {
    let root = root();
    let version = version(&root)?;
    // The bundle holds the static library alone. Asking for that crate type only (the manifest also lists `cdylib`
    // and `lib`) lets cargo build the dependencies as bitcode for LTO, exactly as for the Node and Python modules, so
    // the three share one release build of core instead of a second whose objects an rlib would need.
    cargo(&["rustc", "--quiet", "--release", "-p", "uform-uniffi", "--lib", "--crate-type", "staticlib"])?;
    let out = root.join(REPO_BUNDLE_DIR);
    let bundle = bundle::write_bundle(&root, &out, &version)?;
    let zip = out.join(format!("{BUNDLE}.zip"));
    zip_dir(&bundle, &zip)?;
    let bytes = std::fs::read(&zip).map_err(|e| format!("cannot read {}: {e}", zip.display()))?;
    let checksum = sha256::hex(&bytes);
    write(&PathBuf::from(format!("{}{CHECKSUM_SUFFIX}", zip.display())), &format!("{checksum}\n"))?;
    let url = match url {
        Some(base) => format!("{}/{BUNDLE}.zip", base.trim_end_matches('/')),
        None => format!("{}/releases/download/{version}/{BUNDLE}.zip", repository(&root)?),
    };
    let released_manifest = out.join("Package.released.swift");
    write(&released_manifest, &manifests::released(&url, &checksum))?;
    eprintln!("wrote {} ({} bytes, checksum {checksum})", zip.display(), bytes.len());
    Ok(Packaged { bundle, zip, checksum, released_manifest, version })
}

/// The IDL's version: the tag the folder's git repository gets, and the bundle's version.
fn version(root: &Path) -> Result<String, String> {
    let api = uform_codegen::load(&root.join("idl/uform.yaml")).map_err(|d| d.to_string())?;
    Ok(api.version.clone())
}

/// The workspace's `repository = "…"` (Cargo.toml), where releases are published.
fn repository(root: &Path) -> Result<String, String> {
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    toml.lines()
        .find_map(|l| l.trim().strip_prefix("repository = \"")?.strip_suffix('"').map(str::to_string))
        .ok_or_else(|| "Cargo.toml names no `repository`: pass --url".into())
}

/// A deterministic zip of `dir` (the folder itself as the top entry, fixed timestamps and modes), as SwiftPM wants
/// a binary target's archive: the same bundle always has the same checksum.
fn zip_dir(dir: &Path, zip: &Path) -> Result<(), String> {
    const SCRIPT: &str = "import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
base = os.path.dirname(src)
with zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as z:
    for dirpath, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            info = zipfile.ZipInfo(os.path.relpath(path, base), date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, 'rb') as f:
                z.writestr(info, f.read())
";
    let _ = std::fs::remove_file(zip);
    let status = std::process::Command::new("python3")
        .args(["-c", SCRIPT, &dir.display().to_string(), &zip.display().to_string()])
        .status()
        .map_err(|e| format!("cannot run python3 to zip the bundle: {e}"))?;
    if !status.success() {
        return Err(format!("zipping {} failed with {status}", dir.display()));
    }
    Ok(())
}

pub fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub fn copy(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::copy(from, to).map(drop).map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    Ok(cwd.join(path))
}
