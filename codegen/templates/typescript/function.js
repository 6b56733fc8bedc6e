{%- if constant -%}
/** The value of `{{ name }}()`, asked of the native layer on the first call. */
let {{ name }}Value;

{% endif -%}
{{ doc }}function {{ name }}({{ params }}) {
{%- for check in checks %}
    {{ check }}
{%- endfor %}
{%- if constant %}
    if ({{ name }}Value === undefined) {
        try {
            {{ name }}Value = native.{{ name }}();
        } catch (error) {
            throw uformError(error);
        }
    }
    return {{ name }}Value;
{%- else %}
    try {
        return native.{{ name }}({{ params }});
    } catch (error) {
        throw uformError(error);
    }
{%- endif %}
}
