/*
 * The other direction, against generated/c/uform.h: a program whose header is newer than the library, simulated by
 * structs with a field appended past what today's library knows. The library accepts the struct when the bytes it
 * does not know are all zero and refuses it, naming `struct_size`, when one is set; implausible sizes are refused
 * unread. Also: the UFORM_*_INIT macros set `struct_size`, and a zero-initialised struct (struct_size 0) stays valid.
 */
#define _POSIX_C_SOURCE 200809L
#include <uform.h>

#include <stdlib.h>

#include "check.h"

/* uform_executor_for_ram_config_t as a newer header would declare it, with a field appended. */
typedef struct newer_ram_config_t {
    uform_executor_for_ram_config_t known;
    uint64_t appended;
} newer_ram_config_t;

static void test_init_macros_set_struct_size(void) {
    uform_executor_for_ram_config_t ram = UFORM_EXECUTOR_FOR_RAM_CONFIG_INIT;
    uform_mesh_options_t mesh = UFORM_MESH_OPTIONS_INIT;
    uform_encode_text_options_t encode = UFORM_ENCODE_TEXT_OPTIONS_INIT;
    uform_model_load_ram_config_t load = UFORM_MODEL_LOAD_RAM_CONFIG_INIT;
    CHECK(ram.struct_size == sizeof ram && ram.threads == 0 && ram.cpu_class == NULL);
    CHECK(mesh.struct_size == sizeof mesh && mesh.job == NULL);
    CHECK(encode.struct_size == sizeof encode && !encode.normalize && encode.max_tokens == 0);
    CHECK(load.struct_size == sizeof load && load.executor == NULL);
    ram.threads = 1;
    uform_executor_t *e = NULL;
    CHECK_STATUS(uform_executor_for_ram(&ram, &e), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(e), UFORM_STATUS_OK);
    uform_executor_for_ram_config_t zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    zeroed.threads = 1;
    CHECK_STATUS(uform_executor_for_ram(&zeroed, &e), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(e), UFORM_STATUS_OK);
}

static void test_a_newer_struct_with_zero_unknown_bytes_is_read(void) {
    newer_ram_config_t *config = calloc(1, sizeof *config);
    config->known.struct_size = sizeof *config;
    config->known.cpu_class = "no-such-cpu";
    uform_executor_t *e = NULL;
    CHECK_STATUS(uform_executor_for_ram(&config->known, &e), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("no-such-cpu"));
    config->known.cpu_class = NULL;
    config->known.threads = 1;
    CHECK_STATUS(uform_executor_for_ram(&config->known, &e), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(e), UFORM_STATUS_OK);
    free(config);
}

static void test_a_newer_struct_with_a_field_set_is_refused(void) {
    newer_ram_config_t *config = calloc(1, sizeof *config);
    config->known.struct_size = sizeof *config;
    config->known.threads = 1;
    config->appended = 7;
    uform_executor_t *e = NULL;
    CHECK_STATUS(uform_executor_for_ram(&config->known, &e), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("config.struct_size") && says("newer than the library"));
    CHECK(e == NULL);
    free(config);
}

static void test_implausible_sizes_are_refused(void) {
    uform_executor_for_ram_config_t config = UFORM_EXECUTOR_FOR_RAM_CONFIG_INIT;
    uint32_t sizes[3] = {1, 3, 4097};
    for (int i = 0; i < 3; i++) {
        config.struct_size = sizes[i];
        uform_executor_t *e = NULL;
        CHECK_STATUS(uform_executor_for_ram(&config, &e), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("config.struct_size"));
    }
    /* A struct UForm writes: an uninitialised-looking size is refused and the struct left alone. */
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "1", 1);
    uform_mesh_options_t options, before;
    memset(&options, 0xa5, sizeof options);
    memcpy(&before, &options, sizeof before);
    bool found = false;
    CHECK_STATUS(uform_mesh_options_from_environment(&options, &found), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("options.struct_size") && memcmp(&options, &before, sizeof options) == 0 && !found);
    options = (uform_mesh_options_t)UFORM_MESH_OPTIONS_INIT;
    CHECK_STATUS(uform_mesh_options_from_environment(&options, &found), UFORM_STATUS_OK);
    CHECK(found && options.struct_size == sizeof options && options.host_domain_count == 1);
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
}

int main(void) {
    RUN(test_init_macros_set_struct_size);
    RUN(test_a_newer_struct_with_zero_unknown_bytes_is_read);
    RUN(test_a_newer_struct_with_a_field_set_is_refused);
    RUN(test_implausible_sizes_are_refused);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
