{{ doc }}#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum {{ name }} {
{%- for v in variants %}
{{ v.doc }}{% if loop.first %}    #[default]
{% endif %}    {{ v.name }}{% if !strings %} = {{ v.value }}{% endif %},
{%- endfor %}
}

impl {{ name }} {
    /// Every value, in IDL order.
    pub const ALL: [{{ name }}; {{ variants.len() }}] = [{% for v in variants %}{% if !loop.first %}, {% endif %}{{ name }}::{{ v.name }}{% endfor %}];
{%- if strings %}

    /// The string every binding spells this value as.
    pub fn as_str(self) -> &'static str {
        match self {
{%- for v in variants %}
            {{ name }}::{{ v.name }} => {{ v.value }},
{%- endfor %}
        }
    }

    /// The value spelled `text`, `None` for any other string.
    pub fn parse(text: &str) -> Option<{{ name }}> {
        match text {
{%- for v in variants %}
            {{ v.value }} => Some({{ name }}::{{ v.name }}),
{%- endfor %}
            _ => None,
        }
    }
{%- else %}

    /// The number every binding passes for this value.
    pub fn number(self) -> i64 {
        self as i64
    }

    /// The value numbered `number`, `None` for any other number.
    pub fn from_number(number: i64) -> Option<{{ name }}> {
        match number {
{%- for v in variants %}
            {{ v.value }} => Some({{ name }}::{{ v.name }}),
{%- endfor %}
            _ => None,
        }
    }
{%- endif %}
}
{%- if strings %}

impl std::fmt::Display for {{ name }} {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
{%- endif %}
