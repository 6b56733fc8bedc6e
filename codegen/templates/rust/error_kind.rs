{{ banner }}
// The error kinds of the IDL's `errors:` list, included by core/src/error.rs.

/// The kinds of failure every binding reports. The order is the C status order (`UFORM_STATUS_…`, 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
{%- for k in kinds %}
{{ k.doc }}    {{ k.name }},
{%- endfor %}
}

impl ErrorKind {
    /// Every kind, in C status order.
    pub const ALL: [ErrorKind; {{ kinds.len() }}] = [
{%- for k in kinds %}
        ErrorKind::{{ k.name }},
{%- endfor %}
    ];

    /// The code string every binding exposes (`UFormError.code`, `exc.code`).
    pub fn code(self) -> &'static str {
        match self {
{%- for k in kinds %}
            ErrorKind::{{ k.name }} => "{{ k.code }}",
{%- endfor %}
        }
    }

    /// The C status value: 0 is success, kinds count from 1 in [`ErrorKind::ALL`] order.
    pub fn status(self) -> i32 {
        match self {
{%- for k in kinds %}
            ErrorKind::{{ k.name }} => {{ k.status }},
{%- endfor %}
        }
    }
}
