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

pub fn bindgen(_root: &Path, outputs: &[Output]) -> Result<Vec<Output>, String> {
    let udl =
        outputs.iter().find(|o| o.path == Path::new(UDL)).ok_or_else(|| format!("the generator produced no {UDL}"))?;
    let stem = "uform";
    let mut out = Vec::new();
    for file in generate(&udl.contents, stem, Language::Kotlin)? {
        out.push(output(Path::new("kotlin").join(&file.path), file.contents));
    }
    for file in generate(&udl.contents, stem, Language::Swift)? {
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

fn output(path: PathBuf, mut contents: String) -> Output {
    if !contents.ends_with('\n') {
        contents.push('\n');
    }
    Output { path, contents }
}
