/** Reads a [{{ name }}] in the layout the native library writes it. */
internal fun Reader.read{{ name }}(): {{ name }} = {{ name }}(
{%- for f in fields %}
    {{ f.name }} = {{ f.read }},
{%- endfor %}
)
