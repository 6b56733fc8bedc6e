{{ doc }}{{ returns }}{{ name }}({{ params }});
