/*
 * A program built against an older uform.h (tests/c/abi/older/uform.h: three input structs one field shorter)
 * runs against today's libuform. The library reads only the `struct_size` bytes each struct declares, takes the
 * field the program's header lacks as absent, and writes no further than `struct_size` either. Every struct lives
 * in a heap block of exactly its size, so valgrind (`cargo xtask test c` runs this under it) reports any access
 * past it; the poisoned-tail cases catch the same natively. Needs UFORM_TEST_MODEL_DIR (`cargo xtask test c`; under
 * valgrind the tiny model, whose rows are 32 wide).
 */
#define _POSIX_C_SOURCE 200809L
#include <uform.h>

#include <math.h>
#include <stdlib.h>

#include "check.h"

#ifndef UFORM_OLDER_FIXTURE
#error "compile against tests/c/abi/older/uform.h"
#endif

static const char *model_dir = NULL;

/* A heap block of exactly `size` bytes, zeroed, so valgrind sees any access past the struct. */
static void *exact(size_t size) { return calloc(1, size); }

static uform_executor_t *executor(void) {
    uform_executor_for_ram_config_t *config = exact(sizeof *config);
    config->struct_size = sizeof *config;
    config->threads = 2;
    uform_executor_t *out = NULL;
    CHECK_STATUS(uform_executor_for_ram(config, &out), UFORM_STATUS_OK);
    free(config);
    return out;
}

static uform_model_t *model(uform_executor_t *executor) {
    uform_model_load_ram_config_t *config = exact(sizeof *config);
    config->struct_size = sizeof *config;
    config->executor = executor;
    uform_model_t *out = NULL;
    CHECK_STATUS(uform_model_load_ram(model_dir, config, &out), UFORM_STATUS_OK);
    free(config);
    return out;
}

static const char *const text[1] = {"a sentence long enough that keeping only two of its tokens changes what it means"};

/* The model's width: 384 for MiniLM, 32 for the tiny model valgrind's run loads; set by the first encode. */
static size_t dims = 0;

/* Encodes `text` with these options, copying the first row into `row` (384 floats at most); returns the status. */
static uform_status_t encode(uform_model_t *m, const uform_encode_text_options_t *options, float *row) {
    uform_f32_matrix_t matrix;
    memset(&matrix, 0, sizeof matrix);
    uform_status_t s = uform_model_encode_text(m, text, 1, options, &matrix);
    if (s == UFORM_STATUS_OK) {
        if (dims == 0) dims = matrix.columns;
        int fits = matrix.rows == 1 && matrix.columns == dims && dims > 0 && dims <= 384;
        CHECK(fits);
        if (fits) memcpy(row, matrix.data, dims * sizeof(float));
    }
    uform_f32_matrix_free(&matrix);
    return s;
}

static double max_diff(const float *a, const float *b) {
    double worst = 0;
    for (size_t i = 0; i < dims; i++)
        if (fabs((double)a[i] - (double)b[i]) > worst) worst = fabs((double)a[i] - (double)b[i]);
    return worst;
}

/* The encode options lack `max_tokens`: the library keeps the model's maximum, whatever lies past the struct. */
static void test_encode_options_without_max_tokens(void) {
    uform_executor_t *e = executor();
    uform_model_t *m = model(e);
    static float absent[384], exact_row[384], poisoned_row[384], overreach_row[384];
    CHECK_STATUS(encode(m, NULL, absent), UFORM_STATUS_OK);

    uform_encode_text_options_t *options = exact(sizeof *options);
    options->struct_size = sizeof *options;
    options->normalize = true;
    CHECK_STATUS(encode(m, options, exact_row), UFORM_STATUS_OK);
    CHECK(max_diff(exact_row, absent) <= 1e-6);
    free(options);

    /* The struct followed by bytes that, read as any later uint32_t field, say 1 (max_tokens 1 keeps two tokens). */
    uint32_t tail[16];
    for (int i = 0; i < 16; i++) tail[i] = 1;
    uform_encode_text_options_t *poisoned = (uform_encode_text_options_t *)(void *)tail;
    memset(poisoned, 0, sizeof *poisoned);
    poisoned->struct_size = sizeof *poisoned;
    poisoned->normalize = true;
    CHECK_STATUS(encode(m, poisoned, poisoned_row), UFORM_STATUS_OK);
    CHECK(max_diff(poisoned_row, absent) <= 1e-6);

    /* The control: a struct_size that claims the library's next field reads the poison, and the row changes. */
    poisoned->struct_size = (uint32_t)(sizeof *poisoned + sizeof(uint32_t));
    CHECK_STATUS(encode(m, poisoned, overreach_row), UFORM_STATUS_OK);
    CHECK(max_diff(overreach_row, absent) > 1e-3);

    CHECK_STATUS(uform_model_free(m), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(e), UFORM_STATUS_OK);
}

/* The RAM config lacks `deferred_limit`: its own fields are read where this header put them. */
static void test_ram_config_without_deferred_limit(void) {
    uform_executor_for_ram_config_t *config = exact(sizeof *config);
    config->struct_size = sizeof *config;
    config->cpu_class = "no-such-cpu";
    uform_executor_t *e = NULL;
    CHECK_STATUS(uform_executor_for_ram(config, &e), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("no-such-cpu"));
    CHECK(e == NULL);
    config->cpu_class = NULL;
    config->threads = 1;
    CHECK_STATUS(uform_executor_for_ram(config, &e), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(e), UFORM_STATUS_OK);
    free(config);
}

/* The mesh options lack `group`: the library fills in what the header declares and writes nothing past it. */
static void test_mesh_options_written_within_the_struct(void) {
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    setenv("TORCHELASTIC_RUN_ID", "abi", 1);
    uform_mesh_options_t *options = exact(sizeof *options);
    options->struct_size = sizeof *options;
    bool found = false;
    CHECK_STATUS(uform_mesh_options_from_environment(options, &found), UFORM_STATUS_OK);
    CHECK(found);
    CHECK(options->struct_size == sizeof *options);
    CHECK(options->host_domain_index == 1 && options->host_domain_count == 2);
    CHECK(options->job != NULL && strcmp(options->job, "torchrun-abi") == 0);
    CHECK(options->directory == NULL && options->timeout_seconds == 0);
    free(options);

    /* Natively too: a canary right after the struct survives. */
    unsigned char block[sizeof(uform_mesh_options_t) + 32];
    memset(block, 0x5a, sizeof block);
    uform_mesh_options_t *in_block = (uform_mesh_options_t *)(void *)block;
    in_block->struct_size = sizeof *in_block;
    found = false;
    CHECK_STATUS(uform_mesh_options_from_environment(in_block, &found), UFORM_STATUS_OK);
    CHECK(found && in_block->host_domain_count == 2);
    int canary = 1;
    for (size_t i = sizeof *in_block; i < sizeof block; i++) canary &= block[i] == 0x5a;
    CHECK(canary);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("TORCHELASTIC_RUN_ID");
}

int main(void) {
    model_dir = getenv("UFORM_TEST_MODEL_DIR");
    if (!model_dir) {
        printf("FAIL: UFORM_TEST_MODEL_DIR is not set; run through `cargo xtask test c`\n");
        return 1;
    }
    RUN(test_encode_options_without_max_tokens);
    RUN(test_ram_config_without_deferred_limit);
    RUN(test_mesh_options_written_within_the_struct);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
