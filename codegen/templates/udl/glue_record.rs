{{ doc }}{% if !handles %}#[derive(Clone, Debug, PartialEq)]
{% endif %}pub struct {{ name }} {
{%- for f in fields %}
    pub {{ f.name }}: {{ f.ty }},
{%- endfor %}
}

impl From<{{ name }}> for uform_core::{{ name }} {
    fn from(value: {{ name }}) -> Self {
        uform_core::{{ name }} {
{%- for f in fields %}
            {{ f.name }}: {{ f.to_core }},
{%- endfor %}
        }
    }
}

{%- if !handles %}
impl From<uform_core::{{ name }}> for {{ name }} {
    fn from(value: uform_core::{{ name }}) -> Self {
        {{ name }} {
{%- for f in fields %}
            {{ f.name }}: {{ f.from_core }},
{%- endfor %}
        }
    }
}
{%- endif %}
