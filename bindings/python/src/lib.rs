//! `uform-python`: the native module `uform._native` of the `uform` wheel. Everything but the helpers in
//! [`runtime`] is generated into `generated/python/glue.rs` by `cargo xtask codegen` and included here; the
//! pure-Python package around it (`generated/python/uform/`) is generated too.

#![allow(clippy::needless_lifetimes, clippy::too_many_arguments, clippy::redundant_closure)]

mod runtime;

use pyo3::prelude::*;
use runtime::*;

// generated/python/glue.rs in the repository, glue.rs at the root of the sdist: build.rs names the one there is.
include!(env!("UFORM_PYTHON_GLUE"));

/// A bare pyo3 call that does nothing: the benchmark's baseline for the cost of crossing into the module.
#[pyfunction]
fn _noop() {}

/// The same no-op taking one optional argument, as `drain(mood=None)` does: in the stable ABI for Python 3.9 a
/// function with arguments is called with a tuple and a dict (METH_VARARGS | METH_KEYWORDS; METH_FASTCALL joined
/// the limited API only in 3.10), which costs more than the bare no-op's METH_NOARGS. The benchmark prints both.
#[pyfunction]
#[pyo3(signature = (_mood=None))]
fn _noop_with_argument(_mood: Option<Bound<'_, PyAny>>) {}

/// Nanoseconds per call of a core function called from Rust, without Python: the benchmark's measure of what
/// the core itself costs, so that the binding's share of a call can be told apart. Not part of the API.
#[pyfunction]
fn _core_ns(py: Python<'_>, which: &str, iterations: u32) -> PyResult<f64> {
    let iterations = iterations.max(1);
    let started = std::time::Instant::now();
    match which {
        "capabilities_compiled" => {
            for _ in 0..iterations {
                std::hint::black_box(uform_core::capabilities_compiled());
            }
        }
        "drain" => {
            let executor = uform_core::Executor::for_ram(uform_core::ExecutorForRamConfig {
                threads: Some(1),
                ..Default::default()
            })
            .map_err(|e| raise(py, e))?;
            let started = std::time::Instant::now();
            for _ in 0..iterations {
                std::hint::black_box(executor.drain(uform_core::Mood::Parked)).map_err(|e| raise(py, e))?;
            }
            let elapsed = started.elapsed();
            executor.free().map_err(|e| raise(py, e))?;
            return Ok(elapsed.as_nanos() as f64 / f64::from(iterations));
        }
        other => return Err(pyo3::exceptions::PyValueError::new_err(format!("no core benchmark {other:?}"))),
    }
    Ok(started.elapsed().as_nanos() as f64 / f64::from(iterations))
}

/// A `rows × columns` matrix of a constant handed back the way `encode_text` hands back its result: the overhead
/// benchmark's measure of what returning an embedding matrix costs. Not part of the API.
#[pyfunction]
fn _matrix(py: Python<'_>, rows: u32, columns: u32) -> PyResult<Bound<'_, PyAny>> {
    let data = vec![0.5f32; rows as usize * columns as usize];
    f32_matrix_to_py(py, uform_core::F32Matrix { data, rows, columns })
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register(m)?;
    m.add_function(wrap_pyfunction!(init, m)?)?;
    m.add_function(wrap_pyfunction!(_noop, m)?)?;
    m.add_function(wrap_pyfunction!(_noop_with_argument, m)?)?;
    m.add_function(wrap_pyfunction!(_core_ns, m)?)?;
    m.add_function(wrap_pyfunction!(_matrix, m)?)?;
    Ok(())
}
