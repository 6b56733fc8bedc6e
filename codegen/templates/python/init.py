{{ banner }}
"""{{ doc }}"""

from __future__ import annotations

import builtins as _builtins
import dataclasses as _dataclasses
import enum as _enum
import os
from typing import List, Optional, Sequence, Tuple, TypedDict, Union

from . import _native

__version__ = "{{ version }}"

__all__ = [
{%- for name in exported %}
    "{{ name }}",
{%- endfor %}
]
{%- for part in parts %}


{{ part }}
{%- endfor %}

# The native classes and functions, as the stubs declare them.
{% for name in native -%}
{{ name }} = _native.{{ name }}
{% endfor %}
# Hands the native module the classes it builds records, enum members and errors with.
_native._init({
{%- for name in registered %}
    "{{ name }}": {{ name }},
{%- endfor %}
})
