{{ doc }}#[pyclass(module = "uform", name = "{{ py_name }}", frozen)]
pub struct {{ name }} {
    core: {{ core }},
    /// The objects this one was made from, kept alive as long as it lives (a mesh keeps its executor).
    _borrowed: Vec<Py<PyAny>>,
}

#[pymethods]
impl {{ name }} {
{%- for m in members %}
{{ m }}
{%- endfor %}

    /// {{ compiled_doc }} In Python the object itself is that handle.
    #[getter]
    fn compiled<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.clone()
    }
{%- if let Some(free) = free %}

    fn __enter__<'py>(slf: &Bound<'py, Self>) -> Bound<'py, Self> {
        slf.clone()
    }

    /// Leaving a `with` block frees it, as `{{ free }}()` does; exceptions propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.{{ free }}(py)?;
        Ok(false)
    }
{%- endif %}
}
