class {{ base }}(Exception):
    """{{ doc }}"""

    code: str = ""
    """{{ codes }}"""
{%- for k in kinds %}


class {{ k.name }}({{ base }}, _builtins.{{ k.builtin }}):
    """{{ k.doc }}"""

    code = "{{ k.code }}"
{%- endfor %}
