//! Runs uniffi-bindgen (through `bindings/uniffi-bindgen`) over the generated UDL, in process, and returns
//! `generated/swift/` and the library's scaffolding `generated/uniffi/uform.uniffi.rs` as outputs (Kotlin has its own JNI binding, rendered by the generator itself), so `cargo xtask codegen --check` covers them like
//! every other generated file. The output depends only on the UDL: no paths, no timestamps.
//!
//! Swift is laid out as SwiftPM wants it (Package.swift at the repository root points here):
//! `swift/Sources/UForm/UForm.swift`, and the FFI header with its module map as the system-library target
//! `swift/Sources/UFormFFI/{UFormFFI.h,module.modulemap}`.

use std::path::{Path, PathBuf};
use uform_codegen::Output;
use uform_uniffi_bindgen::{generate, scaffolding, Language, SWIFT_FFI_MODULE, SWIFT_MODULE};

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
    // The library's scaffolding, included by bindings/uniffi/src/lib.rs.
    out.push(output(PathBuf::from(format!("uniffi/{stem}.uniffi.rs")), scaffolding(&udl.contents, stem)?));
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn output(path: PathBuf, mut contents: String) -> Output {
    if !contents.ends_with('\n') {
        contents.push('\n');
    }
    Output { path, contents }
}

#[cfg(test)]
mod tests {
    /// uniffi's Swift leaves the matrix to the generator's converter (swift/Sources/UForm/F32Matrix.swift): it emits
    /// none of its own, reads no float sequence, and calls that converter's lift and initialization; the converter
    /// calls only FFI functions the header declares.
    /// The generator's outputs for the real IDL, and uniffi's Swift and FFI header from them.
    fn rendered_swift() -> (Vec<uform_codegen::Output>, String, String) {
        let root = crate::util::root();
        let api = uform_codegen::load(&root.join("idl/uform.yaml")).unwrap_or_else(|d| panic!("{d}"));
        let rendered = uform_codegen::render(&api).unwrap();
        let files = super::bindgen(&root, &rendered).unwrap();
        let file = |name: &str| files.iter().find(|o| o.path.ends_with(name)).map(|o| o.contents.clone()).expect(name);
        let (swift, header) = (file("UForm.swift"), file("UFormFFI.h"));
        (rendered, swift, header)
    }

    #[test]
    fn matrices_reach_swift_through_the_bulk_converter() {
        let (rendered, swift, header) = rendered_swift();
        assert!(!swift.contains("struct FfiConverterTypeF32Matrix") && !swift.contains("struct F32Matrix"));
        assert!(!swift.contains("FfiConverterSequenceFloat"), "a float sequence still crosses element by element");
        assert!(swift.contains("liftFunc: FfiConverterTypeF32Matrix_lift"));
        assert!(swift.contains("uniffiEnsureUformBulkInitialized()"));
        let converter = &rendered
            .iter()
            .find(|o| o.path.ends_with("swift/Sources/UForm/F32Matrix.swift"))
            .expect("the generator's matrix converter")
            .contents;
        let called: Vec<&str> = converter
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|word| word.starts_with("ffi_"))
            .collect();
        assert!(!called.is_empty());
        for name in called {
            assert!(header.contains(&format!(" {name}(")), "{name} is not in UFormFFI.h");
        }
    }

    /// uniffi's Swift leaves every enum to the generator (swift/Sources/UForm/Enums.swift): it emits no enum or buffer
    /// converter of its own, passes `drain`'s mood as the Int32 the generator's converter lowers it to, and the FFI
    /// header takes it by value; the no-argument `drain()` is the generator's overload.
    #[test]
    fn enums_cross_swift_by_value() {
        let (rendered, swift, header) = rendered_swift();
        let enums = &rendered
            .iter()
            .find(|o| o.path.ends_with("swift/Sources/UForm/Enums.swift"))
            .expect("the generator's enums")
            .contents;
        for name in ["Mood", "GpuVendor", "MultimemTier", "Residency"] {
            assert!(!swift.contains(&format!("enum {name}")), "uniffi still emits {name}");
            assert!(!swift.contains(&format!("struct FfiConverterType{name}")), "uniffi still converts {name}");
            assert!(enums.contains(&format!("public enum {name}: Equatable, Hashable {{")), "{name}");
            assert!(enums.contains(&format!("public func FfiConverterType{name}_lower(_ value: {name}) -> Int32")));
        }
        assert!(swift.contains("FfiConverterTypeMood_lower(mood),uniffiCallStatus"));
        assert!(header.contains("uniffi_uform_uniffi_fn_method_executor_drain(uint64_t ptr, int32_t mood,"));
        assert!(enums.contains("extension Executor {") && enums.contains("public func drain() throws {"));
        assert!(enums.contains("try drain(mood: .parked)"));
    }

    /// `only:` is exact per language: a Kotlin-only call lands in the JNI binding's Kotlin alone, a Swift-only one in
    /// uniffi's Swift alone (codegen/tests/fixtures/only_per_language.yaml).
    #[test]
    fn only_lands_in_kotlin_or_swift_alone() {
        let root = crate::util::root();
        let fixture = root.join("codegen/tests/fixtures/only_per_language.yaml");
        let api = uform_codegen::load(&fixture).unwrap_or_else(|d| panic!("{d}"));
        let rendered = uform_codegen::render(&api).unwrap();
        let swift: String = super::bindgen(&root, &rendered).unwrap().into_iter().map(|o| o.contents).collect();
        let kotlin: String =
            rendered.iter().filter(|o| o.path.starts_with("kotlin")).map(|o| o.contents.clone()).collect();
        assert!(kotlin.contains("fun kotlinOnly(") && !kotlin.contains("swiftOnly"));
        assert!(swift.contains("func swiftOnly(") && !swift.contains("kotlinOnly"));
        assert!(kotlin.contains("spelledEverywhereButC") && swift.contains("spelledEverywhereButC"));
    }
}
