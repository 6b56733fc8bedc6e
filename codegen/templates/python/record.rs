{%- if input %}
/// Reads the keyword arguments of `{{ py_name }}` into `{{ core }}`.
#[allow(clippy::too_many_arguments)]
fn {{ snake }}_from_kwargs(
    py: Python<'_>,
{%- for f in fields %}
    {{ f.name }}: Option<&Bound<'_, PyAny>>,
{%- endfor %}
) -> PyResult<{{ core }}> {
    let _ = py;
    Ok({{ core }} {
{%- for f in fields %}
        {{ f.name }}: {{ f.read }},
{%- endfor %}
    })
}

/// Reads a mapping with the keys of `{{ py_name }}` into `{{ core }}`.
#[allow(dead_code)]
fn {{ snake }}_from_py(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<{{ core }}> {
    let Ok(map) = value.cast::<pyo3::types::PyDict>() else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!("`{argument}` must be a dict")));
    };
{%- for f in fields %}
    let {{ f.name }} = map.get_item("{{ f.name }}")?;
{%- endfor %}
    {{ snake }}_from_kwargs(
        value.py(),
{%- for f in fields %}
        {{ f.name }}.as_ref(),
{%- endfor %}
    )
}
{%- endif %}

/// Writes `{{ core }}` as {% if input %}a `{{ py_name }}` dict with the fields that are present{% else %}a `{{ py_name }}`{% endif %}.
#[allow(dead_code)]
fn {{ snake }}_to_py<'py>(py: Python<'py>, value: &{{ core }}) -> PyResult<Bound<'py, PyAny>> {
    let fields = pyo3::types::PyDict::new(py);
{%- for f in fields %}
    {{ f.write }}
{%- endfor %}
{%- if input %}
    py_value(py, fields)
{%- else %}
    class(py, "{{ py_name }}")?.call((), Some(&fields))
{%- endif %}
}
