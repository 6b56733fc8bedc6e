/// The native layer's {{ name }}: the core handle behind the wrapper's `{{ name }}`.
#[napi]
pub struct {{ compiled }} {
    inner: uform_core::{{ core }},
}

#[napi]
impl {{ compiled }} {
{%- for m in members %}
{{ m }}
{%- endfor %}
}
