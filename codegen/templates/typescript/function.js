{{ doc }}function {{ name }}({{ params }}) {
{%- for check in checks %}
    {{ check }}
{%- endfor %}
    try {
        return native.{{ name }}({{ params }});
    } catch (error) {
        throw uformError(error);
    }
}
