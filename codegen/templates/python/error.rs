/// The class `uform/__init__.py` registers for each error kind.
fn error_class(kind: uform_core::ErrorKind) -> &'static str {
    match kind {
{%- for (kind, class) in kinds %}
        uform_core::ErrorKind::{{ kind }} => "{{ class }}",
{%- endfor %}
    }
}
