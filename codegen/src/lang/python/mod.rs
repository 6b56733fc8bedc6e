//! Python: the pure-Python package `generated/python/uform/` (records, enums, the exception hierarchy, and the
//! native classes and functions re-exported), its complete stubs (`__init__.pyi`, `py.typed`), the pyo3 glue
//! `generated/python/glue.rs` that implements it over `uform-core` (included by `bindings/python`), and the
//! Python reference page. One template per concept for each; every spelling decision is in [`format::Py`].

pub mod docs;
pub mod format;
mod glue;
mod package;
mod pyproject;

use crate::model::*;
use crate::render::Rendered;
use crate::Output;
use format::Py;

/// What the pyo3 glue can emit: a matrix result is moved into its array, never optional.
pub const SUPPORTS: crate::lang::shapes::Shapes = crate::lang::shapes::Shapes::except(&[
    crate::lang::shapes::Shape::OptionalMatrixResult,
    // Python spreads a record parameter's fields into keyword arguments beside the other parameters.
    crate::lang::shapes::Shape::FieldNamedLikeParameter,
]);

const PY: Py = Py;
/// The base class of every error.
const ERROR_BASE: &str = "UFormError";

fn offered(c: &Callable) -> bool {
    c.offered_in(Language::Python)
}

pub fn render(api: &Api) -> Rendered<Vec<Output>> {
    let mut out = vec![
        Output { path: "python/glue.rs".into(), contents: glue::glue_file(api)? },
        Output { path: "python/pyproject.toml".into(), contents: pyproject::pyproject(api)? },
        Output { path: "python/uform/__init__.py".into(), contents: package::init_py(api)? },
        Output { path: "python/uform/__init__.pyi".into(), contents: package::init_pyi(api)? },
        // PEP 561: the package ships its own complete types.
        Output { path: "python/uform/py.typed".into(), contents: String::new() },
    ];
    out.extend(crate::lang::docs::render(&docs::PythonDocs, api)?);
    Ok(out)
}
