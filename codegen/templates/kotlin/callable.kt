{{ doc }}{{ indent }}{% if throws %}@Throws(UFormException::class)
{{ indent }}{% endif %}fun {{ name }}({{ params }}){{ returns }} {
{%- for line in lines %}
{{ indent }}    {{ line }}
{%- endfor %}
{{ indent }}}
