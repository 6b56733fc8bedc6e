{{ doc }}data class {{ name }}(
{%- for f in fields %}
{{ f.doc }}    var {{ f.declaration }},
{%- endfor %}
)
