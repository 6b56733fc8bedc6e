#[repr(C)]
#[derive(Clone, Copy)]
pub struct {{ c_name }} {
{%- for (name, ty) in fields %}
    pub {{ name }}: {{ ty }},
{%- endfor %}
}
{% if input %}
fn {{ snake }}_from_c(raw: &{{ c_name }}) -> Result<uform_core::{{ core }}, Error> {
    Ok(uform_core::{{ core }} {
{%- for (name, expr) in conversions %}
        {{ name }}: {{ expr }},
{%- endfor %}
    })
}
{%- else %}
fn {{ snake }}_to_c(v: &uform_core::{{ core }}, arena: &mut Arena) -> {{ c_name }} {
    let _ = &arena;
    {{ c_name }} {
{%- for (name, expr) in conversions %}
        {{ name }}: {{ expr }},
{%- endfor %}
{%- for (count, list) in counts %}
        {{ count }}: v.{{ list }}.len(),
{%- endfor %}
    }
}
{%- endif %}
