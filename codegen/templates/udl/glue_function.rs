{{ doc }}{{ indent }}pub {{ qualifier }}fn {{ name }}({{ params }}) -> {{ returns }} {
{{ indent }}    {{ body }}
{{ indent }}}
