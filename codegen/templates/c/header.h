{{ banner }}
{{ doc }}
#ifndef UFORM_H
#define UFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UFORM_VERSION "{{ version }}"
{%- for part in parts %}

{{ part }}
{%- endfor %}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* UFORM_H */
