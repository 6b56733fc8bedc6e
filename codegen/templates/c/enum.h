{{ doc }}typedef enum {{ name }} {
{%- for v in variants %}
{{ v.doc }}    {{ v.name }} = {{ v.value }},
{%- endfor %}
} {{ name }};
