{{ doc }}{% for a in attributes %}{{ indent }}{{ a }}
{% endfor %}{{ indent }}fn {{ name }}({{ params }}) -> PyResult<{{ returns }}> {
{%- for line in body %}
{{ indent }}    {{ line }}
{%- endfor %}
{{ indent }}}
