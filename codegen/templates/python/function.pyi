{% for d in decorators %}{{ indent }}{{ d }}
{% endfor %}{{ indent }}def {{ name }}({{ params }}) -> {{ returns }}:
{{ indent }}    """{{ doc }}"""
