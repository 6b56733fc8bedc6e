/// Reads a `{{ py_name }}` (or its {% if is_string %}string{% else %}number{% endif %}) into `{{ core }}`.
#[allow(dead_code)]
fn {{ snake }}_from_py(value: &Bound<'_, PyAny>, argument: &str) -> PyResult<{{ core }}> {
{%- if is_string %}
    let raw = arg_string(value, argument)?;
    match raw.as_str() {
{%- for v in variants %}
        {{ v.value }} => Ok({{ core }}::{{ v.rust }}),
{%- endfor %}
        other => Err(invalid(value.py(), argument, format!("must be one of {{ accepted }}, got {other:?}"))),
    }
{%- else %}
    let raw = arg_enum_number(value, argument, "{{ py_name }}")?;
    match raw {
{%- for v in variants %}
        {{ v.value }} => Ok({{ core }}::{{ v.rust }}),
{%- endfor %}
        other => Err(invalid(value.py(), argument, format!("must be one of {{ accepted }}, got {other}"))),
    }
{%- endif %}
}

/// Writes `{{ core }}` as a `{{ py_name }}` member.
#[allow(dead_code)]
fn {{ snake }}_to_py<'py>(py: Python<'py>, value: {{ core }}) -> PyResult<Bound<'py, PyAny>> {
    let raw = match value {
{%- for v in variants %}
        {{ core }}::{{ v.rust }} => {{ v.value }},
{%- endfor %}
    };
    class(py, "{{ py_name }}")?.call1((raw,))
}
