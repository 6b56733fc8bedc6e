{{ banner }}
// The ES module face of the package: the same objects as `index.js`, re-exported by name.
import uform from './index.js';

export const {
{%- for name in exports %}
    {{ name }},
{%- endfor %}
} = uform;
