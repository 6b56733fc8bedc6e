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

    /// Leaving a `with` block frees it, as `{{ free }}()` does; exceptions propagate. When the block is left by an
    /// exception, that exception stays the one raised: a free that fails then (a model still borrowing an executor)
    /// only adds a note to it (Python 3.11's `add_note`; older Pythons drop the note) and leaves this one unfreed.
    #[pyo3(signature = (*exc))]
    fn __exit__(&self, py: Python<'_>, exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        let raised = exc.get_item(1).ok().filter(|value| !value.is_none());
        match (self.{{ free }}(py), raised) {
            (Err(error), Some(raised)) => {
                let note = format!("leaving the `with` block could not free the {{ py_name }}: {}", error.value(py));
                let _ = raised.call_method1("add_note", (note,));
                Ok(false)
            }
            (freed, _) => freed.map(|()| false),
        }
    }
{%- endif %}
}
