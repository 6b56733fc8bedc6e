/// The error every throwing call returns: one case per shared kind, carrying the core's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum {{ name }} {
{%- for k in kinds %}
    {{ k }}(String),
{%- endfor %}
}

impl std::fmt::Display for {{ name }} {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
{%- for k in kinds %}
            {{ name }}::{{ k }}(message) => f.write_str(message),
{%- endfor %}
        }
    }
}

impl std::error::Error for {{ name }} {}

impl From<uform_core::Error> for {{ name }} {
    fn from(error: uform_core::Error) -> Self {
        let message = error.message().to_string();
        match error.kind() {
{%- for k in kinds %}
            uform_core::ErrorKind::{{ k }} => {{ name }}::{{ k }}(message),
{%- endfor %}
        }
    }
}
