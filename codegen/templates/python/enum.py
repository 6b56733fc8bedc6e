class {{ name }}({{ bases }}):
    """{{ doc }}"""
{% for v in variants %}
    {{ v.name }} = {{ v.value }}
    """{{ v.doc }}"""
{%- endfor %}
