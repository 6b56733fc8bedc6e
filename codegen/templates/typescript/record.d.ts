{{ doc }}export interface {{ name }}{% if let Some(base) = extends %} extends {{ base }}{% endif %} {
{%- for f in fields %}
{{ f.doc }}    {{ f.name }}{{ f.mark }}: {{ f.ty }};
{%- endfor %}
}
