{%- if input %}
class {{ name }}(TypedDict, total=False):
    """{{ doc }}"""
{% for f in fields %}
    {{ f.name }}: {{ f.ty }}
{%- endfor %}
{%- else %}
@final
@dataclasses.dataclass(frozen=True)
class {{ name }}:
    """{{ doc }}"""
{% for f in fields %}
    {{ f.name }}: {{ f.ty }}
{%- endfor %}
{%- endif %}
