class {{ base }}(Exception):
    """{{ doc }}"""

    code: str
{%- for k in kinds %}


class {{ k.name }}({{ base }}, builtins.{{ k.builtin }}):
    """{{ k.doc }}"""
{%- endfor %}
