{{ doc }}data class {{ name }}(
{%- for f in fields %}
{{ f.doc }}    var {{ f.declaration }},
{%- endfor %}
){% if !contents.is_empty() %} {
    override fun equals(other: Any?): Boolean =
        this === other || (
            other is {{ name }}
{%- for c in contents %} &&
                {{ c.equals }}
{%- endfor %}
        )

    override fun hashCode(): Int {
        var hash = 0
{%- for c in contents %}
        hash = 31 * hash + {{ c.hash }}
{%- endfor %}
        return hash
    }
}{% endif %}
