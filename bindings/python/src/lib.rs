//! `uform-python`: the native module `uform._native` of the `uform` wheel. Everything but the helpers in
//! [`runtime`] is generated into `generated/python/glue.rs` by `cargo xtask codegen` and included here; the
//! pure-Python package around it (`generated/python/uform/`) is generated too.

#![allow(clippy::needless_lifetimes, clippy::too_many_arguments, clippy::redundant_closure)]

mod runtime;

use pyo3::prelude::*;
use runtime::*;

include!("../../../generated/python/glue.rs");

/// A bare pyo3 call that does nothing: the benchmark's baseline for the cost of crossing into the module.
#[pyfunction]
fn _noop() {}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register(m)?;
    m.add_function(wrap_pyfunction!(init, m)?)?;
    m.add_function(wrap_pyfunction!(_noop, m)?)?;
    Ok(())
}
