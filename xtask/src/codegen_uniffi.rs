//! Runs uniffi-bindgen over the generated UDL to produce `generated/swift/` and `generated/kotlin/`.
//! (Filled in by the uniffi work; until then it adds nothing.)

use std::path::Path;
use uform_codegen::Output;

pub fn bindgen(_root: &Path, _outputs: &[Output]) -> Result<Vec<Output>, String> {
    Ok(Vec::new())
}
