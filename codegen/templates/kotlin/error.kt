{{ doc }}sealed class UFormException(message: String, val code: String) : Exception(message) {
{%- for k in kinds %}
{{ k.doc }}    class {{ k.name }}(message: String) : UFormException(message, "{{ k.code }}")
{%- endfor %}
}
