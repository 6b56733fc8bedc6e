//! What `cargo xtask test swift` checks of the packaged Swift library without a Swift compiler, each as one field of
//! `swift: bundle=ok symbols=N/N links=ok manifest=ok`:
//!
//! - `bundle`: info.json parses, declares a `staticLibrary` artifact whose every named file exists, and every file
//!   of the bundle is named by it (the library, or inside a header path); the zip's recorded checksum is its SHA-256.
//! - `symbols`: `nm` on the `.a` defines every function the FFI header declares (N is the header's count).
//! - `links`: every undefined symbol of the `.a` (`nm`, `U`) is defined (`nm -D`) by a library the module map links
//!   or by libc, libpthread, libdl, libgcc_s or the dynamic loader (which libc's linker script links), each
//!   resolved through `ldconfig -p`; where `cc` exists, a C program linked against the whole `.a` with only those
//!   `link` lines runs, and finds the benchmark's matrix in the layout generated/swift/Sources/UForm/F32Matrix.swift
//!   reads.
//! - `manifest`: the manifests have no `unsafeFlags` and no `ProcessInfo`, use tools 6.2, point at the bundle (by
//!   path in the repository and the folder, by URL and a 64-hex checksum equal to the zip's SHA-256 in the released
//!   one), and the consumer depends on the folder by a versioned `file://` URL whose tag exists.

use super::{sha256, Packaged, CHECKSUM_SUFFIX};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The libraries every link of a Swift program on Linux brings without a `link` line. libm is not counted: a C link
/// does not bring it (`cc` needs `-lm`), so when the `.a` uses it (the tokenizer calls `exp`), the module map says
/// `link "m"`.
const IMPLICIT: [&str; 4] = ["c", "pthread", "dl", "gcc_s"];

/// Libraries the module map links whenever the `.a` uses them, besides those the build scripts asked for.
const SYSTEM: [&str; 1] = ["m"];

/// One check's verdict: `ok`, or what is wrong.
pub type Verdict = Result<(), String>;

pub struct Summary {
    pub bundle: Verdict,
    pub symbols: (usize, usize, Vec<String>),
    pub links: Verdict,
    pub manifest: Verdict,
}

impl Summary {
    pub fn line(&self) -> String {
        let word = |v: &Verdict| if v.is_ok() { "ok" } else { "FAILED" };
        let (found, total, _) = &self.symbols;
        format!(
            "swift: bundle={} symbols={found}/{total} links={} manifest={}",
            word(&self.bundle),
            word(&self.links),
            word(&self.manifest)
        )
    }

    /// Every failure, one per line; empty when all passed.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, v) in [("bundle", &self.bundle), ("links", &self.links), ("manifest", &self.manifest)] {
            if let Err(e) = v {
                out.push(format!("{name}: {e}"));
            }
        }
        let (found, total, missing) = &self.symbols;
        if found != total || *total == 0 {
            out.push(format!("symbols: {found} of {total} header functions in the .a; missing {missing:?}"));
        }
        out
    }
}

pub fn all(root: &Path, packaged: &Packaged, folder: Option<&Path>) -> Summary {
    let info = bundle(packaged);
    let variants = info.clone().unwrap_or_default();
    let symbols = symbols(&variants);
    let links = if variants.is_empty() {
        Err("no variant to check".into())
    } else {
        let swift = std::fs::read_to_string(root.join("generated/swift/Sources/UForm/UForm.swift")).unwrap_or_default();
        let checksums = swift_checksums(&swift);
        variants.iter().try_for_each(|v| links(&v.library, &v.modulemap).and_then(|()| link_program(v, &checksums)))
    };
    Summary { bundle: info.map(drop), symbols, links, manifest: manifests(root, packaged, folder) }
}

#[derive(Clone, Default)]
pub struct Variant {
    library: PathBuf,
    headers: Vec<PathBuf>,
    modulemap: PathBuf,
}

fn bundle(packaged: &Packaged) -> Result<Vec<Variant>, String> {
    let dir = &packaged.bundle;
    let text = std::fs::read_to_string(dir.join("info.json")).map_err(|e| format!("info.json: {e}"))?;
    let info: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("info.json does not parse: {e}"))?;
    if info["schemaVersion"] != "1.0" {
        return Err(format!("info.json schemaVersion is {}, not \"1.0\"", info["schemaVersion"]));
    }
    let artifacts = info["artifacts"].as_object().ok_or("info.json has no artifacts object")?;
    let mut variants = Vec::new();
    let mut named = BTreeSet::new();
    let existing = |rel: &str| -> Result<PathBuf, String> {
        let path = dir.join(rel);
        if path.exists() {
            Ok(path)
        } else {
            Err(format!("info.json names {rel}, which does not exist"))
        }
    };
    for (name, artifact) in artifacts {
        if artifact["type"] != "staticLibrary" {
            return Err(format!("artifact {name} is of type {}, not staticLibrary", artifact["type"]));
        }
        for v in artifact["variants"].as_array().ok_or(format!("artifact {name} has no variants"))? {
            let path = v["path"].as_str().ok_or("a variant has no path")?;
            let library = existing(path)?;
            named.insert(library.clone());
            if v["supportedTriples"].as_array().is_none_or(|t| t.is_empty()) {
                return Err(format!("variant {path} names no supportedTriples"));
            }
            let meta = &v["staticLibraryMetadata"];
            let mut headers = Vec::new();
            for h in meta["headerPaths"].as_array().ok_or(format!("variant {path} has no headerPaths"))? {
                let header_dir = existing(h.as_str().ok_or("a header path is not a string")?)?;
                for entry in std::fs::read_dir(&header_dir).map_err(|e| e.to_string())?.flatten() {
                    named.insert(entry.path());
                    headers.push(entry.path());
                }
            }
            let modulemap =
                existing(meta["moduleMapPath"].as_str().ok_or(format!("variant {path} has no moduleMapPath"))?)?;
            named.insert(modulemap.clone());
            variants.push(Variant { library, headers, modulemap });
        }
    }
    let mut files = Vec::new();
    list(dir, &mut files);
    for file in files {
        if file != dir.join("info.json") && !named.contains(&file) {
            return Err(format!("{} is in the bundle but info.json does not name it", file.display()));
        }
    }
    if variants.is_empty() {
        return Err("info.json declares no variant".into());
    }
    let zip = std::fs::read(&packaged.zip).map_err(|e| format!("{}: {e}", packaged.zip.display()))?;
    let recorded = std::fs::read_to_string(format!("{}{CHECKSUM_SUFFIX}", packaged.zip.display())).unwrap_or_default();
    if recorded.trim() != sha256::hex(&zip) || packaged.checksum != recorded.trim() {
        return Err(format!("the zip's recorded checksum {recorded:?} is not its SHA-256"));
    }
    Ok(variants)
}

fn list(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().is_dir() {
            list(&entry.path(), out);
        } else {
            out.push(entry.path());
        }
    }
}

/// The functions a C header declares: lines that start with a return type and name a function, not a typedef.
pub fn header_functions(header: &str) -> Vec<String> {
    header
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && !l.starts_with("typedef"))
        .filter_map(|l| {
            let before = l.split('(').next().filter(|_| l.contains('('))?;
            let name = before.rsplit([' ', '*']).next()?;
            (before.contains(' ') && !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .then(|| name.to_string())
        })
        .collect()
}

fn symbols(variants: &[Variant]) -> (usize, usize, Vec<String>) {
    let (mut found, mut total, mut missing) = (0, 0, Vec::new());
    for v in variants {
        let defined = match nm(&["-g", "--defined-only"], &v.library) {
            Ok(d) => d,
            Err(e) => return (0, 0, vec![e]),
        };
        for header in v.headers.iter().filter(|h| h.file_name().is_some_and(|n| n == "UFormFFI.h")) {
            let functions = header_functions(&std::fs::read_to_string(header).unwrap_or_default());
            total += functions.len();
            for f in functions {
                if defined.contains(&f) {
                    found += 1;
                } else {
                    missing.push(f);
                }
            }
        }
    }
    (found, total, missing)
}

/// Runs `nm` with `args` on `file` and returns the symbol names it lists (versions like `@@GLIBC_2.2.5` dropped);
/// with `-u`-style filtering done by the caller through the flags.
fn nm(args: &[&str], file: &Path) -> Result<BTreeSet<String>, String> {
    let out = Command::new("nm").args(args).arg(file).output().map_err(|e| format!("cannot run nm: {e}"))?;
    if !out.status.success() {
        return Err(format!("nm {args:?} {} failed: {}", file.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.ends_with(':') && !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().last())
        .map(|s| s.split('@').next().unwrap_or(s).to_string())
        .collect())
}

/// The symbols the `.a` uses but no member of it defines (strong `U` only: weak references may stay unresolved).
fn undefined(library: &Path) -> Result<BTreeSet<String>, String> {
    let out = Command::new("nm").args(["-g"]).arg(library).output().map_err(|e| format!("cannot run nm: {e}"))?;
    let (mut used, mut defined) = (BTreeSet::new(), BTreeSet::new());
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["U", name] => drop(used.insert(name.to_string())),
            [_, kind, name] if !matches!(*kind, "U" | "w" | "v") => drop(defined.insert(name.to_string())),
            _ => {}
        }
    }
    Ok(used.difference(&defined).cloned().collect())
}

/// The file `-l<name>` finds at run time, through `ldconfig -p` (`libhwloc.so.15` for `hwloc`).
fn resolve(name: &str) -> Option<PathBuf> {
    let out = Command::new("ldconfig").arg("-p").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let prefix = format!("lib{name}.so");
    text.lines().filter_map(|l| l.trim().split_once(" => ")).find_map(|(left, path)| {
        let soname = left.split_whitespace().next()?;
        let native = !left.contains("x32") && (!left.contains("(libc6)") || !cfg!(target_pointer_width = "64"));
        (native && (soname == prefix || soname.starts_with(&format!("{prefix}.")))).then(|| PathBuf::from(path))
    })
}

/// The dynamic loader, which libc's linker script (`libc.so`) always adds: `__tls_get_addr` and friends live there.
fn loader() -> Option<PathBuf> {
    let out = Command::new("ldconfig").arg("-p").output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().split_once(" => "))
        .find_map(|(left, path)| (left.starts_with("ld-linux") && !left.contains("x32")).then(|| PathBuf::from(path)))
}

fn implicitly_defined() -> Result<BTreeSet<String>, String> {
    let mut defined = BTreeSet::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    for name in IMPLICIT {
        paths.push(resolve(name).ok_or(format!("ldconfig -p knows no lib{name}.so"))?);
    }
    paths.extend(loader());
    for path in paths {
        defined.extend(nm(&["-D", "--defined-only"], &path)?);
    }
    Ok(defined)
}

/// Which of `candidates` the `.a` needs (each defines a symbol it uses that no implicit library defines), and the
/// symbols none of them defines.
pub fn needed_libraries(library: &Path, candidates: &[String]) -> Result<(Vec<String>, BTreeSet<String>), String> {
    let implicit = implicitly_defined()?;
    let mut needed: BTreeSet<String> = undefined(library)?.difference(&implicit).cloned().collect();
    let mut links = Vec::new();
    let system = SYSTEM.iter().map(|s| s.to_string());
    for name in candidates.iter().cloned().chain(system).filter(|c| !IMPLICIT.contains(&c.as_str())) {
        if links.contains(&name) {
            continue;
        }
        let Some(path) = resolve(&name) else { continue };
        let defined = nm(&["-D", "--defined-only"], &path)?;
        if needed.iter().any(|s| defined.contains(s)) {
            needed.retain(|s| !defined.contains(s));
            links.push(name);
        }
    }
    Ok((links, needed))
}

fn links(library: &Path, modulemap: &Path) -> Verdict {
    let map = std::fs::read_to_string(modulemap).map_err(|e| e.to_string())?;
    let mut remaining: BTreeSet<String> = undefined(library)?.difference(&implicitly_defined()?).cloned().collect();
    for line in map.lines() {
        let Some(name) = line.trim().strip_prefix("link \"").and_then(|r| r.strip_suffix('"')) else { continue };
        let path = resolve(name).ok_or(format!("the module map links {name}, which ldconfig -p does not know"))?;
        let defined = nm(&["-D", "--defined-only"], &path)?;
        remaining.retain(|s| !defined.contains(s));
    }
    if remaining.is_empty() {
        Ok(())
    } else {
        Err(format!("{} undefined symbols no linked library defines: {remaining:?}", remaining.len()))
    }
}

/// The checks uniffi's Swift makes when the module initializes (`if (uniffi_uform_uniffi_checksum_X() != N)`): each
/// function and the value the Swift expects. A library whose checksums differ is refused by the Swift at its first call.
pub fn swift_checksums(swift: &str) -> Vec<(String, u16)> {
    swift
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("if (")?;
            let (name, rest) = rest.split_once("() != ")?;
            let value = rest.strip_suffix(") {")?;
            if !name.contains("_checksum_") {
                return None;
            }
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// Where a C compiler exists, links a program against the whole `.a` with only the module map's `link` lines (what
/// SwiftPM passes) and runs it: it calls into the library through the FFI header and the benchmark's no-op, checks
/// the benchmark's matrix has the layout generated/swift/Sources/UForm/F32Matrix.swift reads, and that every checksum
/// the generated Swift checks at initialization (`checksums`, at least one) is the library's.
fn link_program(v: &Variant, checksums: &[(String, u16)]) -> Verdict {
    if !crate::util::have("cc") {
        return Ok(());
    }
    if checksums.is_empty() {
        return Err(
            "the generated Swift checks no checksum: generated/swift/Sources/UForm/UForm.swift changed shape".into()
        );
    }
    let compared: String = checksums.iter().map(|(name, value)| format!(" && {name}() == {value}")).collect();
    let program = PROGRAM.replace("return 1 /* checksums */;", &format!("return 1{compared};"));
    const PROGRAM: &str = r#"#include "UFormFFI.h"
#include "UFormBench.h"
#include <string.h>

/* A 2 x 3 matrix as Swift receives it: a big-endian length, then rows, columns and floats in native order. */
static int matrix_ok(void) {
    RustBuffer m = uform_bench_f32_matrix(2, 3);
    uint32_t shape[2];
    float floats[6];
    int ok = m.len == 36 && m.data[0] == 0 && m.data[1] == 0 && m.data[2] == 0 && m.data[3] == 32;
    if (ok) {
        memcpy(shape, m.data + 4, sizeof shape);
        memcpy(floats, m.data + 12, sizeof floats);
        ok = shape[0] == 2 && shape[1] == 3 && floats[0] == 0.0f && floats[5] == 5.0f;
    }
    RustCallStatus status = {0};
    ffi_uform_uniffi_rustbuffer_free(m, &status);
    return ok && status.code == 0;
}

/* Every checksum the generated Swift compares at initialization, against the value it expects. */
static int checksums_ok(void) {
    return 1 /* checksums */;
}

int main(void) {
    uform_bench_noop();
    return ffi_uform_uniffi_uniffi_contract_version() == 0 || !matrix_ok() || !checksums_ok();
}
"#;
    let bundle = v.library.parent().and_then(Path::parent).ok_or("the library is not inside a bundle")?;
    let dir = bundle.parent().ok_or("the bundle has no folder")?.join("link-check");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    super::write(&dir.join("main.c"), &program)?;
    let include = v.modulemap.parent().ok_or("the module map has no folder")?;
    let map = std::fs::read_to_string(&v.modulemap).map_err(|e| e.to_string())?;
    let mut cmd = Command::new("cc");
    // GCC does not know clang's nullability qualifiers, which uniffi's header uses.
    cmd.args(["-D_Nullable=", "-D_Nonnull=", "-I"]).arg(include).arg(dir.join("main.c"));
    cmd.arg("-Wl,--whole-archive").arg(&v.library).arg("-Wl,--no-whole-archive");
    for line in map.lines() {
        if let Some(name) = line.trim().strip_prefix("link \"").and_then(|r| r.strip_suffix('"')) {
            cmd.arg(format!("-l{name}"));
        }
    }
    cmd.arg("-o").arg(dir.join("main"));
    let out = cmd.output().map_err(|e| format!("cannot run cc: {e}"))?;
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "linking the whole .a with the module map's libraries failed: {}",
            &text[..text.len().min(2000)]
        ));
    }
    let ran = Command::new(dir.join("main")).status().map_err(|e| format!("cannot run the linked program: {e}"))?;
    if ran.success() {
        Ok(())
    } else {
        Err(format!("the program linked against the .a failed with {ran}"))
    }
}

/// No unsafe flags and no environment: what lets SwiftPM take the package as a versioned dependency.
fn plain_manifest(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    for banned in ["unsafeFlags", "ProcessInfo"] {
        if text.contains(banned) {
            return Err(format!("{} uses {banned}", path.display()));
        }
    }
    if !text.starts_with("// swift-tools-version:6.2") {
        return Err(format!("{} does not start with `// swift-tools-version:6.2`", path.display()));
    }
    Ok(text)
}

fn manifests(root: &Path, packaged: &Packaged, folder: Option<&Path>) -> Verdict {
    let repo = plain_manifest(&root.join("Package.swift"))?;
    let expected = format!("path: \"{}/{}\"", super::REPO_BUNDLE_DIR, super::BUNDLE);
    if !repo.contains(".binaryTarget(name: \"UFormFFI\"") || !repo.contains(&expected) {
        return Err(format!("Package.swift has no binaryTarget UFormFFI at {expected}"));
    }
    let released = plain_manifest(&packaged.released_manifest)?;
    let url = quoted_after(&released, "url: ").ok_or("the released manifest names no url")?;
    let checksum = quoted_after(&released, "checksum: ").ok_or("the released manifest names no checksum")?;
    if !url.starts_with("https://") || !url.ends_with(".zip") {
        return Err(format!("the released manifest's url {url} is not an https URL of a zip"));
    }
    let zip = std::fs::read(&packaged.zip).map_err(|e| e.to_string())?;
    if checksum.len() != 64 || !checksum.chars().all(|c| c.is_ascii_hexdigit()) || checksum != sha256::hex(&zip) {
        return Err(format!("the released manifest's checksum {checksum} is not the zip's SHA-256"));
    }
    if crate::util::have("swift") {
        let out = Command::new("swift").args(["package", "compute-checksum"]).arg(&packaged.zip).output();
        let swift = out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
        if swift != checksum {
            return Err(format!("swift package compute-checksum says {swift}, the manifest {checksum}"));
        }
    }
    if let Some(dir) = folder {
        let manifest = plain_manifest(&dir.join("Package.swift"))?;
        if !manifest.contains(&format!("path: \"{}\"", super::BUNDLE))
            || !dir.join(super::BUNDLE).join("info.json").exists()
        {
            return Err(format!("{}/Package.swift does not point at its bundle", dir.display()));
        }
        let consumer = plain_manifest(&dir.join("Consumer/Package.swift"))?;
        let dependency = format!(".package(url: \"file://{}\", from: \"{}\")", dir.display(), packaged.version);
        if !consumer.contains(&dependency) {
            return Err(format!("the consumer does not depend on {dependency}"));
        }
        let tags = Command::new("git").arg("-C").arg(dir).args(["tag", "--list", &packaged.version]).output();
        if !tags.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == packaged.version) {
            return Err(format!("{} has no git tag {}", dir.display(), packaged.version));
        }
    }
    Ok(())
}

fn quoted_after(text: &str, key: &str) -> Option<String> {
    let rest = &text[text.find(key)? + key.len()..];
    let rest = rest.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_swift_checksums_are_read_from_its_initialization_checks() {
        let swift = std::fs::read_to_string(crate::util::root().join("generated/swift/Sources/UForm/UForm.swift"))
            .expect("the generated Swift");
        let checksums = super::swift_checksums(&swift);
        assert_eq!(checksums.len(), swift.matches("uniffi_uform_uniffi_checksum_").count(), "one per check");
        assert!(checksums.iter().any(|(name, _)| name == "uniffi_uform_uniffi_checksum_method_executor_drain"));
    }

    #[test]
    fn header_functions_are_the_declarations_not_the_typedefs_or_fields() {
        let header = "typedef void (*Callback)(uint64_t\n    );\ntypedef struct S {\n    uint64_t handle;\n} S;\n\
                      RustBuffer uniffi_x_fn_func_a(RustCallStatus *_Nonnull out_status\n);\n\
                      void*_Nonnull uniffi_x_fn_b(void\n);\nuint32_t ffi_x_uniffi_contract_version(void\n);\n#define A(x) x\n";
        assert_eq!(
            super::header_functions(header),
            ["uniffi_x_fn_func_a", "uniffi_x_fn_b", "ffi_x_uniffi_contract_version"]
        );
    }
}
