{{ doc }}#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum {{ name }} {
{%- for v in variants %}
    {{ v }},
{%- endfor %}
}

impl From<{{ name }}> for uform_core::{{ name }} {
    fn from(value: {{ name }}) -> Self {
        match value {
{%- for v in variants %}
            {{ name }}::{{ v }} => uform_core::{{ name }}::{{ v }},
{%- endfor %}
        }
    }
}

impl From<uform_core::{{ name }}> for {{ name }} {
    fn from(value: uform_core::{{ name }}) -> Self {
        match value {
{%- for v in variants %}
            uform_core::{{ name }}::{{ v }} => {{ name }}::{{ v }},
{%- endfor %}
        }
    }
}
