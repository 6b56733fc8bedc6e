{%- if input %}
class {{ name }}(TypedDict, total=False):
    """{{ doc }}"""
{% for f in fields %}
    {{ f.name }}: {{ f.ty }}
    """{{ f.doc }}"""
{%- endfor %}
{%- else %}
@_dataclasses.dataclass(frozen=True)
class {{ name }}:
    """{{ doc }}"""
{% for f in fields %}
    {{ f.name }}: {{ f.ty }}
    """{{ f.doc }}"""
{%- endfor %}
{%- endif %}
