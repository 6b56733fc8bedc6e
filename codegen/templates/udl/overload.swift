{%- if let Some(class) = class -%}
extension {{ class }} {
    /// `{{ target }}` with {{ defaults }}: the UDL cannot default an enum's parameter, so the default is here.
    {{ declaration }} {
        {{ call }}
    }
}
{%- else -%}
/// `{{ target }}` with {{ defaults }}: the UDL cannot default an enum's parameter, so the default is here.
{{ declaration }} {
    {{ call }}
}
{%- endif %}
