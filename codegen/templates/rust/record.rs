{{ doc }}#[derive({{ derives }})]
pub struct {{ name }} {
{%- for f in fields %}
{{ f.doc }}    pub {{ f.name }}: {{ f.ty }},
{%- endfor %}
}
{%- if !constants.is_empty() %}

impl {{ name }} {
{%- for c in constants %}
    /// What an absent `{{ c.field }}` means.
    pub const {{ c.name }}: {{ c.ty }} = {{ c.value }};
{%- endfor %}
}
{%- endif %}
{%- if let Some(defaults) = defaults %}

impl Default for {{ name }} {
    fn default() -> Self {
        {{ name }} {
{%- for (field, value) in defaults %}
            {{ field }}: {{ value }},
{%- endfor %}
        }
    }
}
{%- endif %}
