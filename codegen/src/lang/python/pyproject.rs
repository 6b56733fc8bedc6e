//! `generated/python/pyproject.toml`: the maturin build of the native module.

use crate::lang::banner;
use crate::model::Api;
use crate::render::{template, Named, Rendered};

template! {
    "python/pyproject.toml"
    struct Pyproject {
        banner: String,
        package: String,
        version: String,
        description: String,
        manifest: &'static str,
        /// A verb returns a matrix, which Python receives as a numpy array.
        numpy: bool,
    }
}

pub(super) fn pyproject(api: &Api) -> Rendered {
    Pyproject {
        numpy: api.returns_matrix(),
        banner: banner("#"),
        package: api.package.clone(),
        version: api.version.clone(),
        description: "UForm for Python: a pyo3 module over the UForm Rust runtime, with complete type stubs.".into(),
        manifest: "../../bindings/python/Cargo.toml",
    }
    .rendered("python/pyproject.toml")
}
