{{ indent }}#[napi({% if factory %}factory, {% endif %}js_name = {{ js_name_lit }})]
{{ indent }}pub fn {{ rust_name }}({{ params }}) -> Result<{{ returns }}> {
{%- for line in body %}
{{ indent }}    {{ line }}
{%- endfor %}
{{ indent }}}
