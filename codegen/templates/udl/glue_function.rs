{{ doc }}{{ indent }}pub fn {{ name }}({{ params }}) -> {{ returns }} {
{{ indent }}    {{ body }}
{{ indent }}}
