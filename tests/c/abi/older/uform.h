/*
 * A hand-picked older uform.h, for tests/c/abi/test_older_header.c: the declarations that test uses, as a header
 * one field shorter would have declared them. Three input structs lack the field generated/c/uform.h appends last
 * (`uform_encode_text_options_t.max_tokens`, `uform_executor_for_ram_config_t.deferred_limit`,
 * `uform_mesh_options_t.group`), so a program built against this header runs against a library that knows more
 * fields than the program's structs hold. Not generated; everything else it declares must keep today's ABI (the
 * test fails to link or run otherwise, as any program built against an older header would).
 */
#ifndef UFORM_H
#define UFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UFORM_VERSION "older"
#define UFORM_OLDER_FIXTURE 1

typedef enum uform_status_t {
    UFORM_STATUS_OK = 0,
    UFORM_STATUS_INVALID_ARGUMENT = 1,
} uform_status_t;

const char *uform_last_error_message(void);

typedef struct uform_mesh_t uform_mesh_t;
typedef struct uform_executor_t uform_executor_t;
typedef struct uform_model_t uform_model_t;

typedef struct uform_mesh_options_t {
    uint32_t struct_size;
    uint32_t host_domain_index;
    uint32_t host_domain_count;
    uint32_t gpus_per_multimem_domain;
    const char *directory;
    const char *job;
    uint32_t timeout_seconds;
} uform_mesh_options_t;

typedef struct uform_executor_for_ram_config_t {
    uint32_t struct_size;
    const uint32_t *memory_domains;
    size_t memory_domains_count;
    const char *cpu_class;
    uint32_t threads;
} uform_executor_for_ram_config_t;

typedef struct uform_model_load_ram_config_t {
    uint32_t struct_size;
    uform_executor_t *executor;
    const uint32_t *memory_domains;
    size_t memory_domains_count;
} uform_model_load_ram_config_t;

typedef struct uform_encode_text_options_t {
    uint32_t struct_size;
    bool normalize;
} uform_encode_text_options_t;

typedef struct uform_f32_matrix_t {
    const float *data;
    size_t rows;
    size_t columns;
} uform_f32_matrix_t;

void uform_f32_matrix_free(uform_f32_matrix_t *matrix);
uform_status_t uform_executor_for_ram(const uform_executor_for_ram_config_t *config, uform_executor_t **executor);
uform_status_t uform_executor_free(uform_executor_t *executor);
uform_status_t uform_model_load_ram(const char *path, const uform_model_load_ram_config_t *config, uform_model_t **model);
uform_status_t uform_model_encode_text(uform_model_t *model, const char *const *texts, size_t texts_count, const uform_encode_text_options_t *options, uform_f32_matrix_t *matrix);
uform_status_t uform_model_free(uform_model_t *model);
uform_status_t uform_mesh_options_from_environment(uform_mesh_options_t *options, bool *found);

#endif /* UFORM_H */
