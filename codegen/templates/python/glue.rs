{{ banner }}
//
// The pyo3 side of the `uform` Python package: one function per IDL callable, reading its Python arguments
// into `uform_core` values, calling the core (without the GIL when the call blocks), and writing the result
// through the classes `uform/__init__.py` registers. Included by bindings/python/src/lib.rs.
{%- for part in parts %}

{{ part }}
{%- endfor %}

/// Adds every generated class and function to the native module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
{%- for c in classes %}
    m.add_class::<{{ c }}>()?;
{%- endfor %}
{%- for f in functions %}
    m.add_function(wrap_pyfunction!({{ f }}, m)?)?;
{%- endfor %}
    Ok(())
}
