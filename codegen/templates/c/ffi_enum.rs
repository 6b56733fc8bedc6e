/// The C values of `{{ c_name }}`.
#[allow(dead_code)]
fn {{ snake }}_from_c(value: i32, argument: &str) -> Result<uform_core::{{ core }}, Error> {
    match value {
{%- for (name, number) in variants %}
        {{ number }} => Ok(uform_core::{{ core }}::{{ name }}),
{%- endfor %}
        other => Err(Error::invalid_argument(argument, format!("is {other}, not a `{{ c_name }}` value ({{ accepted }})"))),
    }
}

#[allow(dead_code)]
fn {{ snake }}_to_c(value: uform_core::{{ core }}) -> i32 {
    match value {
{%- for (name, number) in variants %}
        uform_core::{{ core }}::{{ name }} => {{ number }},
{%- endfor %}
    }
}
