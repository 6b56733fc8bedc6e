//! The hand-written part of the Python native layer: reading Python arguments with validation, writing results
//! through the classes the pure-Python layer registers, and the error scheme. The generated glue
//! (`generated/python/glue.rs`) is a mechanical use of these helpers.
//!
//! Error scheme: `uform/__init__.py` (generated) defines `UFormError` and one subclass per kind, each also
//! deriving from the matching builtin, and hands them to [`init`] with the record and enum classes. A core error
//! becomes an instance of its kind's class; its `code` is a class attribute.
//!
//! Arguments are read strictly: a `bool` or a `float` where an integer is expected, a `str` or an iterator where a
//! list is expected, any object of the wrong type — `TypeError`. A negative or too large integer, a string that
//! is not valid UTF-8 (a lone surrogate, as `os.fsdecode` makes of undecodable bytes) — the invalid-argument error
//! naming the argument and the value. `None` means absent.

#![allow(dead_code)] // helpers for every IDL type, used as the IDL needs them

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyMemoryView, PySequence, PyString};
use std::fmt::Display;

/// The classes `uform/__init__.py` registers by name: records, enums and errors.
static CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// Called once by `uform/__init__.py` with `{name: class}` for every record, enum and error class.
#[pyfunction]
#[pyo3(name = "_init")]
pub fn init(py: Python<'_>, classes: Bound<'_, PyDict>) -> PyResult<()> {
    let _ = CLASSES.set(py, classes.unbind());
    Ok(())
}

/// A registered class by name.
pub fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let classes = CLASSES
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("uform._native used before `import uform` registered its classes"))?;
    classes
        .bind(py)
        .get_item(name)?
        .ok_or_else(|| PyRuntimeError::new_err(format!("uform did not register the class `{name}`")))
}

/// How Python spells the names in a core message: snake_case, and a record parameter's fields as the keyword
/// arguments they are (`config.cpu_class` is `cpu_class`).
const SPELLING: uform_core::path::Spelling =
    uform_core::path::Spelling { camel_case: false, flatten_record_parameters: true };

/// A core error as the Python exception of its kind, its message in Python spelling.
pub fn raise(py: Python<'_>, error: uform_core::Error) -> PyErr {
    let message = error.message_in(&SPELLING);
    match class(py, crate::error_class(error.kind())).and_then(|c| c.call1((message,))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// An invalid-argument error: "`argument` what", `argument` spelled as Python reads it.
pub fn invalid(py: Python<'_>, argument: &str, what: impl Display) -> PyErr {
    raise(py, uform_core::Error::invalid_as_spelled(argument, what))
}

/// Runs a core call, turning a panic into the internal error: a panic never crosses into Python.
#[inline(always)]
pub fn guard<T>(call: impl FnOnce() -> uform_core::Result<T>) -> uform_core::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call))
        .unwrap_or_else(|payload| Err(uform_core::Error::from_panic(payload)))
}

/// Runs a core call that cannot fail, turning a panic into the internal error.
#[inline(always)]
pub fn guard_value<T>(call: impl FnOnce() -> T) -> uform_core::Result<T> {
    guard(|| Ok(call()))
}

fn type_error(argument: &str, expected: &str, value: &Bound<'_, PyAny>) -> PyErr {
    let got = value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!("`{argument}` must be {expected}, got {got}"))
}

/// An integer in `[0, max]`: bools and floats are `TypeError`s, negatives and overflow invalid arguments.
fn unsigned(value: &Bound<'_, PyAny>, argument: &str, max: u64) -> PyResult<u64> {
    if value.is_instance_of::<PyBool>() || value.is_instance_of::<PyFloat>() || !value.is_instance_of::<PyInt>() {
        return Err(type_error(argument, "an int", value));
    }
    let Ok(n) = value.extract::<i128>() else {
        // Beyond 128 bits either way.
        return Err(if value.lt(0)? {
            invalid(value.py(), argument, format!("must not be negative, got {value}"))
        } else {
            invalid(value.py(), argument, format!("must be at most {max}, got {value}"))
        });
    };
    if n < 0 {
        return Err(invalid(value.py(), argument, format!("must not be negative, got {n}")));
    }
    if n > max as i128 {
        return Err(invalid(value.py(), argument, format!("must be at most {max}, got {n}")));
    }
    Ok(n as u64)
}

pub fn arg_u32(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<u32> {
    unsigned(value, argument, u32::MAX as u64).map(|n| n as u32)
}

pub fn arg_u64(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<u64> {
    unsigned(value, argument, u64::MAX)
}

pub fn arg_i32(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<i32> {
    if value.is_instance_of::<PyBool>() || !value.is_instance_of::<PyInt>() {
        return Err(type_error(argument, "an int", value));
    }
    value.extract().map_err(|_| invalid(value.py(), argument, format!("must fit in 32 bits, got {value}")))
}

/// A number enum argument: a plain int, or a member of the `uform` enum `name` (an `IntEnum`). A member of another
/// enum (`GpuVendor.NVIDIA` for a `Mood`) is a `TypeError`, not its number.
pub fn arg_enum_number(value: &Bound<'_, PyAny>, argument: &str, name: &str) -> PyResult<i32> {
    if value.is_instance_of::<PyInt>() && !value.is_exact_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
        let ty = value.get_type();
        let ours = ty.name().is_ok_and(|n| n == name) && ty.module().is_ok_and(|m| m == "uform");
        if !ours {
            return Err(type_error(argument, &format!("a {name} or an int"), value));
        }
    }
    arg_i32(value, argument)
}

/// A float, or anything Python converts with `float()` (an int, a `Decimal`, numpy's scalars); a bool is a
/// `TypeError`. An int too large for a double is an invalid argument, and an error the object's own `__float__`
/// raises passes through; NaN and the infinities are the core's to judge.
pub fn arg_f64(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<f64> {
    if value.is_instance_of::<PyBool>() {
        return Err(type_error(argument, "a float", value));
    }
    value.extract().map_err(|error: PyErr| {
        if value.is_instance_of::<PyInt>() {
            invalid(
                value.py(),
                argument,
                format!("must fit in a float (at most {:e} in magnitude), got {value}", f64::MAX),
            )
        } else if error.is_instance_of::<PyTypeError>(value.py()) {
            type_error(argument, "a float", value)
        } else {
            error
        }
    })
}

pub fn arg_bool(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<bool> {
    if !value.is_instance_of::<PyBool>() {
        return Err(type_error(argument, "a bool", value));
    }
    value.extract()
}

pub fn arg_string(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<String> {
    if !value.is_instance_of::<PyString>() {
        return Err(type_error(argument, "a str", value));
    }
    utf8(value, argument)
}

/// A `str` as UTF-8; one with a lone surrogate (which UTF-8 cannot carry) is an invalid argument showing its repr.
fn utf8(text: &Bound<'_, PyAny>, argument: &str) -> PyResult<String> {
    text.extract::<String>().map_err(|_| {
        let shown = text.repr().map(|r| r.to_string_lossy().into_owned()).unwrap_or_default();
        invalid(text.py(), argument, format!("must be valid UTF-8 (no lone surrogates), got {shown}"))
    })
}

/// An encoded file's bytes: a `bytes` is borrowed as it is (immutable, so the core reads it in place with the GIL
/// released); a `bytearray` or a `memoryview`, which another thread could change while the GIL is released, is
/// copied once into a new `bytes`. Anything else is a `TypeError`.
pub fn arg_bytes<'py>(value: &Bound<'py, PyAny>, argument: &str) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(bytes.clone());
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(PyBytes::new(value.py(), &array.to_vec()));
    }
    if value.is_instance_of::<PyMemoryView>() {
        return Ok(value.call_method0("tobytes")?.cast_into::<PyBytes>()?);
    }
    Err(type_error(argument, "bytes, a bytearray or a memoryview", value))
}

/// A path: `str` or `os.PathLike`, crossing as UTF-8.
pub fn arg_path(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<String> {
    let py = value.py();
    let fspath = py.import("os")?.getattr("fspath")?;
    // `os.fspath` raises `TypeError` for what is not a path; anything else comes from the object's own
    // `__fspath__` and propagates as it is.
    let text = fspath.call1((value,)).map_err(|e| {
        if e.is_instance_of::<PyTypeError>(py) {
            type_error(argument, "a str or os.PathLike", value)
        } else {
            e
        }
    })?;
    if !text.is_instance_of::<PyString>() {
        return Err(type_error(argument, "a str or an os.PathLike of str", value));
    }
    utf8(&text, argument)
}

/// A list or tuple (any sequence but `str`/`bytes`/`bytearray`), each element read by `element` and named
/// `argument[i]`. Iterators, sets and mappings are `TypeError`s, as the stubs' `Sequence` says: an endless
/// iterator would otherwise never return.
pub fn arg_list<'py, T>(
    value: &Bound<'py, PyAny>,
    argument: &str,
    element: impl Fn(&Bound<'py, PyAny>, &str) -> PyResult<T>,
) -> PyResult<Vec<T>> {
    let text_like = value.is_instance_of::<PyString>()
        || value.is_instance_of::<PyBytes>()
        || value.is_instance_of::<PyByteArray>();
    if text_like || !value.is_instance_of::<PySequence>() {
        return Err(type_error(argument, "a list", value));
    }
    let iter = value.try_iter().map_err(|_| type_error(argument, "a list", value))?;
    let mut out = Vec::new();
    for (i, item) in iter.enumerate() {
        out.push(element(&item?, &format!("{argument}[{i}]"))?);
    }
    Ok(out)
}

/// An optional argument: `None` (or not given) is absent.
pub fn opt<'py, T>(
    value: Option<&Bound<'py, PyAny>>,
    argument: &str,
    read: impl Fn(&Bound<'py, PyAny>, &str) -> PyResult<T>,
) -> PyResult<Option<T>> {
    match value {
        Some(v) if !v.is_none() => read(v, argument).map(Some),
        _ => Ok(None),
    }
}

/// Any value with a Python conversion, as a Python object.
pub fn py_value<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> PyResult<Bound<'py, PyAny>> {
    use pyo3::IntoPyObjectExt;
    value.into_bound_py_any(py)
}

/// A required argument: `None` is the invalid-argument error.
pub fn required<'py, T>(
    py: Python<'py>,
    value: Option<&Bound<'py, PyAny>>,
    argument: &str,
    read: impl Fn(&Bound<'py, PyAny>, &str) -> PyResult<T>,
) -> PyResult<T> {
    match value {
        Some(v) if !v.is_none() => read(v, argument),
        _ => Err(invalid(py, argument, "is required")),
    }
}

/// A verb's matrix as a numpy `float32` array of shape (rows, columns). Under the stable ABI (abi3, Python 3.9)
/// an extension cannot export a buffer, so the values are copied once into a `bytearray` that the array then
/// views without another copy (writable, and alive as long as the array).
pub fn f32_matrix_to_py(py: Python<'_>, matrix: uform_core::F32Matrix) -> PyResult<Bound<'_, PyAny>> {
    let (rows, columns) = (matrix.rows as usize, matrix.columns as usize);
    let values = &matrix.data[..rows * columns];
    let bytes = PyByteArray::new_with(py, values.len() * 4, |out| {
        // SAFETY: floats are plain bytes (no padding; any alignment for u8); numpy reads them in native order.
        out.copy_from_slice(unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), values.len() * 4) });
        Ok(())
    })?;
    let numpy = py.import("numpy")?;
    let array = numpy.call_method1("frombuffer", (bytes, numpy.getattr("float32")?))?;
    array.call_method1("reshape", ((rows, columns),))
}
