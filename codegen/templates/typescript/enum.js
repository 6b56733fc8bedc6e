{{ doc }}const {{ name }} = Object.freeze({
{%- for v in variants %}
{{ v.doc }}    {{ v.name }}: {{ v.value }},
{%- endfor %}
{%- for v in reverse %}
    {{ v.value }}: {{ v.name }},
{%- endfor %}
});
