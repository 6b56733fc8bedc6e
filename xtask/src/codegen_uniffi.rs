//! Runs uniffi-bindgen (through `bindings/uniffi-bindgen`) over the generated UDL, in process, and returns
//! `generated/kotlin/` and `generated/swift/` as outputs, so `cargo xtask codegen --check` covers them like
//! every other generated file. The output depends only on the UDL: no paths, no timestamps.
//!
//! Swift is laid out as SwiftPM wants it (Package.swift at the repository root points here):
//! `swift/Sources/UForm/UForm.swift`, and the FFI header with its module map as the system-library target
//! `swift/Sources/UFormFFI/{UFormFFI.h,module.modulemap}`.

use std::path::{Path, PathBuf};
use uform_codegen::Output;
use uform_uniffi_bindgen::{generate, Language, SWIFT_FFI_MODULE, SWIFT_MODULE};

const UDL: &str = "uniffi/uform.udl";
const CONFIG: &str = "uniffi/uniffi.toml";

pub fn bindgen(_root: &Path, outputs: &[Output]) -> Result<Vec<Output>, String> {
    let udl =
        outputs.iter().find(|o| o.path == Path::new(UDL)).ok_or_else(|| format!("the generator produced no {UDL}"))?;
    let config = outputs
        .iter()
        .find(|o| o.path == Path::new(CONFIG))
        .ok_or_else(|| format!("the generator produced no {CONFIG}"))?;
    let stem = "uform";
    let mut out = Vec::new();
    for file in generate(&udl.contents, &config.contents, stem, Language::Kotlin)? {
        out.push(output(Path::new("kotlin").join(&file.path), guard_lowering(file.contents)?));
    }
    for file in generate(&udl.contents, &config.contents, stem, Language::Swift)? {
        let name = file.path.to_string_lossy().to_string();
        let path = if name == format!("{SWIFT_MODULE}.swift") {
            PathBuf::from(format!("swift/Sources/{SWIFT_MODULE}/{name}"))
        } else if name == format!("{SWIFT_FFI_MODULE}.h") {
            PathBuf::from(format!("swift/Sources/{SWIFT_FFI_MODULE}/{name}"))
        } else if name == format!("{SWIFT_FFI_MODULE}.modulemap") {
            PathBuf::from(format!("swift/Sources/{SWIFT_FFI_MODULE}/module.modulemap"))
        } else {
            return Err(format!("uniffi-bindgen made an unexpected Swift file `{name}`"));
        };
        out.push(output(path, file.contents));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// uniffi 0.32's Kotlin `lower()` clones an object's handle without the destroyed check every method call makes
/// (`callWithHandle`), so passing a closed object as an argument (a closed `Executor` to `Mesh.bootstrap`) clones
/// a freed `Arc` in Rust: a use after free that kills the JVM. Lowering through `callWithHandle` turns it into the
/// `IllegalStateException` a method call on a closed object throws, and holds the object alive while it is cloned.
/// (Cloning in `lower()` came with mozilla/uniffi-rs#1797; the check did not.) An upstream change to these lines
/// fails the generation here rather than silently dropping the guard.
fn guard_lowering(kotlin: String) -> Result<String, String> {
    const UNGUARDED: &str = "        return value.uniffiCloneHandle()\n";
    const GUARDED: &str = "        return value.callWithHandle { it }\n";
    if kotlin.contains("uniffiCloneHandle") && !kotlin.contains(UNGUARDED) {
        return Err("uniffi's Kotlin no longer lowers objects with `return value.uniffiCloneHandle()`: review guard_lowering in xtask/src/codegen_uniffi.rs".into());
    }
    Ok(kotlin.replace(UNGUARDED, GUARDED))
}

fn output(path: PathBuf, mut contents: String) -> Output {
    if !contents.ends_with('\n') {
        contents.push('\n');
    }
    Output { path, contents }
}

#[cfg(test)]
mod tests {
    /// `only:` is exact per language, though Kotlin and Swift come from one UDL: uniffi-bindgen honours the exclusions
    /// of `uniffi.toml` (codegen/tests/fixtures/only_per_language.yaml).
    #[test]
    fn only_lands_in_kotlin_or_swift_alone() {
        let root = crate::util::root();
        let fixture = root.join("codegen/tests/fixtures/only_per_language.yaml");
        let api = uform_codegen::load(&fixture).unwrap_or_else(|d| panic!("{d}"));
        let files = super::bindgen(&root, &uform_codegen::render(&api).unwrap()).unwrap();
        let text = |dir: &str| {
            files.iter().filter(|o| o.path.starts_with(dir)).map(|o| o.contents.clone()).collect::<String>()
        };
        let (kotlin, swift) = (text("kotlin"), text("swift"));
        assert!(kotlin.contains("fun `kotlinOnly`") && !kotlin.contains("swiftOnly"));
        assert!(swift.contains("func swiftOnly(") && !swift.contains("kotlinOnly"));
        assert!(kotlin.contains("spelledEverywhereButC") && swift.contains("spelledEverywhereButC"));
    }
}
