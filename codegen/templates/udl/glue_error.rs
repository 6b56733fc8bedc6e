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
        // Kotlin and Swift spell a core message's names in camelCase, under their record parameter.
        let spelling = uform_core::path::Spelling { camel_case: true, flatten_record_parameters: false };
        let message = error.message_in(&spelling);
        match error.kind() {
{%- for k in kinds %}
            uform_core::ErrorKind::{{ k }} => {{ name }}::{{ k }}(message),
{%- endfor %}
        }
    }
}
