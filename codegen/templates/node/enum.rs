impl FromJs for {{ core }} {
    fn from_js(value: Js, argument: &str) -> Result<Self> {
{%- if string %}
        match enum_string(value, argument, &[{% for v in variants %}{{ v.js_value }}, {% endfor %}], {{ js_name_lit }})? {
{%- else %}
        match enum_number(value, argument, &[{% for v in variants %}({{ v.number }}, {{ v.js_name_lit }}), {% endfor %}], {{ js_name_lit }})? {
{%- endif %}
{%- for v in variants %}
            {% if string %}{{ loop.index0 }}{% else %}{{ v.number }}{% endif %} => Ok({{ core }}::{{ v.core }}),
{%- endfor %}
            _ => Err(invalid(argument, format!("names no {}", {{ js_name_lit }}))),
        }
    }
}

impl ToJs for {{ core }} {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        match self {
{%- for v in variants %}
            {{ core }}::{{ v.core }} => {{ v.js_value }}.to_js(env),
{%- endfor %}
        }
    }
}
