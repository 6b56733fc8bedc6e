{{ banner }}
{{ doc }}
{%- for part in parts %}

{{ part }}
{%- endfor %}
