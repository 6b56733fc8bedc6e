{{ banner }}
"""{{ doc }}"""

import builtins
import dataclasses
import enum
import os
from types import TracebackType
from typing import List, Optional, Sequence, Tuple, Type, TypedDict, Union, final

import numpy as np
import numpy.typing as npt
from typing_extensions import Required

__version__: str
{%- for part in parts %}


{{ part }}
{%- endfor %}
