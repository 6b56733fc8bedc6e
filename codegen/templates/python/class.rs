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

    /// Entering a `with` block on a freed {{ py_name }} fails as freed, as a closed file does.
    fn __enter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, Self>> {
        if slf.get().core.is_freed() {
            return Err(raise(slf.py(), uform_core::Error::freed("{{ py_name }}", "__enter__")));
        }
        Ok(slf.clone())
    }

    /// Leaving a `with` block frees it, as `{{ free }}()` does; exceptions propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.{{ free }}(py)?;
        Ok(false)
    }
{%- endif %}
}
