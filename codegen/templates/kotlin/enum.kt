{{ doc }}enum class {{ name }} {
{%- for v in variants %}
{{ v.doc }}    {{ v.name }},
{%- endfor %}
}
