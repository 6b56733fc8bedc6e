{{ doc }}typedef struct {{ name }} {
{%- for f in fields %}
{{ f.doc }}{{ f.decls }}
{%- endfor %}
} {{ name }};
