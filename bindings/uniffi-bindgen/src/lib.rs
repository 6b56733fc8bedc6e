//! Runs uniffi-bindgen over UDL text and hands back the Swift sources as in-memory files, so
//! `cargo xtask codegen` can write and `--check` them like every other generated file.
//!
//! uniffi-bindgen works on files inside a crate, so each call lays out a throw-away crate in a private temporary
//! directory (a `Cargo.toml` naming `uform-uniffi`, the UDL under `src/`, a global config) and reads the results
//! back. Nothing in the output depends on that directory: no absolute paths, no timestamps.

use camino::{Utf8Path, Utf8PathBuf};
use std::path::PathBuf;
use uniffi_bindgen::bindings::{generate_with_bindgen_paths, GenerateOptions, TargetLanguage};
use uniffi_bindgen::{BindgenPaths, BindgenPathsLayer};

/// The crate whose cdylib the bindings load (`libuform_uniffi.so`, `uform_uniffi.dll`).
pub const CRATE: &str = "uform-uniffi";

/// What the Swift bindings are called; kept in one place so Package.swift and the generated sources agree. (Kotlin has
/// its own JNI binding, which uform-codegen renders.)
pub const SWIFT_MODULE: &str = "UForm";
pub const SWIFT_FFI_MODULE: &str = "UFormFFI";

/// The bindings' settings, as uniffi's global config file spells them.
fn config() -> String {
    format!(
        "[defaults.bindings.swift]\n\
         module_name = \"{SWIFT_MODULE}\"\n\
         ffi_module_name = \"{SWIFT_FFI_MODULE}\"\n\
         ffi_module_filename = \"{SWIFT_FFI_MODULE}\"\n\
         generate_module_map = true\n"
    )
}

/// One generated file, its path relative to the language folder (`UForm.swift`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub path: PathBuf,
    pub contents: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Swift,
}

/// Generates one language's bindings from UDL text whose file stem is `stem` (`uform` for `uform.udl`).
/// `crate_config` is the crate's `uniffi.toml` (per-language `exclude` and `rename`, generated with the UDL), read
/// over the settings above.
pub fn generate(udl: &str, crate_config: &str, stem: &str, language: Language) -> Result<Vec<File>, String> {
    let scratch = Scratch::new()?;
    let root = scratch.path.clone();
    let crate_dir = root.join("crate");
    let src = crate_dir.join("src");
    let out = root.join("out");
    let write =
        |path: &Utf8Path, text: &str| std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"));
    std::fs::create_dir_all(&src).map_err(|e| format!("cannot create {src}: {e}"))?;
    write(&crate_dir.join("Cargo.toml"), &format!("[package]\nname = \"{CRATE}\"\nversion = \"0.0.0\"\n"))?;
    let udl_path = src.join(format!("{stem}.udl"));
    write(&udl_path, udl)?;
    write(&crate_dir.join("uniffi.toml"), crate_config)?;
    let config_path = root.join("uniffi.toml");
    write(&config_path, &config())?;
    let options = GenerateOptions {
        languages: vec![match language {
            Language::Swift => TargetLanguage::Swift,
        }],
        source: udl_path,
        out_dir: out.clone(),
        config_override: Some(config_path),
        format: false,
        crate_filter: None,
        metadata_no_deps: true,
    };
    let mut paths = BindgenPaths::default();
    paths.add_layer(CrateRoot(crate_dir.clone()));
    generate_with_bindgen_paths(options, paths).map_err(|e| format!("uniffi-bindgen: {e:#}"))?;
    let mut files = Vec::new();
    collect(out.as_std_path(), out.as_std_path(), &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The Rust scaffolding of `uform-uniffi` (uniffi's `extern "C"` functions, records and converters) from UDL text
/// whose file stem is `stem`: what uniffi's build feature would write into `OUT_DIR` at every build, made once by
/// `cargo xtask codegen` and committed (`generated/uniffi/uform.uniffi.rs`), so building the library does not build
/// uniffi-bindgen.
pub fn scaffolding(udl: &str, stem: &str) -> Result<String, String> {
    let scratch = Scratch::new()?;
    let udl_path = scratch.path.join(format!("{stem}.udl"));
    std::fs::write(&udl_path, udl).map_err(|e| format!("cannot write {udl_path}: {e}"))?;
    let library = CRATE.replace('-', "_");
    uniffi_bindgen::generate_component_scaffolding_for_crate(&udl_path, &library, Some(&scratch.path), false)
        .map_err(|e| format!("uniffi-bindgen scaffolding: {e:#}"))?;
    let made = scratch.path.join(format!("{stem}.uniffi.rs"));
    std::fs::read_to_string(&made).map_err(|e| format!("cannot read {made}: {e}"))
}

fn collect(base: &std::path::Path, dir: &std::path::Path, out: &mut Vec<File>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            collect(base, &path, out)?;
        } else {
            let contents =
                std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            out.push(File { path: path.strip_prefix(base).expect("under base").to_path_buf(), contents });
        }
    }
    Ok(())
}

/// Points uniffi-bindgen at the throw-away crate, so it reads the crate's `uniffi.toml` there.
struct CrateRoot(Utf8PathBuf);

impl BindgenPathsLayer for CrateRoot {
    fn get_crate_root(&self, _crate_name: &str) -> Option<Utf8PathBuf> {
        Some(self.0.clone())
    }
}

/// A private temporary directory, removed on drop.
struct Scratch {
    path: Utf8PathBuf,
}

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("uform-uniffi-bindgen-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path =
            Utf8PathBuf::from_path_buf(dir).map_err(|p| format!("temporary directory {} is not UTF-8", p.display()))?;
        Ok(Scratch { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
