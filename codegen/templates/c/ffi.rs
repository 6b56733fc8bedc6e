{{ banner }}
// The Rust side of generated/c/uform.h; included by bindings/c/src/lib.rs.

/// The handles C holds, one registry per class.
{%- for (name, class) in handles %}
static {{ name }}: Registry<uform_core::{{ class }}> = Registry::new();
{%- endfor %}

/// `uform_status_t`: 0 is success, then one value per error kind.
pub type uform_status_t = i32;

fn status_of(kind: uform_core::ErrorKind) -> uform_status_t {
    match kind {
{%- for (name, status) in errors %}
        uform_core::ErrorKind::{{ name }} => {{ status }},
{%- endfor %}
    }
}
{%- for part in parts %}

{{ part }}
{%- endfor %}
