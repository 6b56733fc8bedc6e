/*
 * The C scenario suite (../../../shared/SCENARIOS.md), against generated/c/uform.h and libuform. Tests are numbered
 * after the scenarios. Run as `test_uform` for the suite, or `test_uform peer DIR JOB INDEX COUNT` as one mesh peer.
 * Prints one line per test and closes with "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"

#include <dirent.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char self_path[4096];

/* `Executor.forRam()` with no config, checked. */
static uform_executor_t *default_executor(void) {
    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_ram(NULL, &executor), UFORM_STATUS_OK);
    return executor;
}

/* A default executor and a mesh of one on it (no options), each checked. */
static void mesh_of_one(uform_executor_t **executor, uform_mesh_t **mesh) {
    *executor = default_executor();
    *mesh = NULL;
    CHECK_STATUS(uform_mesh_bootstrap(*executor, NULL, mesh), UFORM_STATUS_OK);
}

/* The options of peer `index` of `count` meeting in `directory` as `job`, waiting at most `timeout_seconds`. */
static uform_mesh_options_t mesh_options(const char *directory, const char *job, uint32_t index, uint32_t count,
                                         uint32_t timeout_seconds) {
    uform_mesh_options_t options;
    memset(&options, 0, sizeof options);
    options.host_domain_index = index;
    options.host_domain_count = count;
    options.directory = directory;
    options.job = job;
    options.timeout_seconds = timeout_seconds;
    return options;
}

/* `Executor.forVram({ devices: [device] })`'s status. */
static uform_status_t for_vram_on(uint32_t device, uform_executor_t **executor) {
    uform_executor_for_vram_config_t config;
    memset(&config, 0, sizeof config);
    config.devices = &device;
    config.devices_count = 1;
    return uform_executor_for_vram(&config, executor);
}

/* 1. Capability strings are non-empty, comma-separated, without spaces. */
static void test_01_capabilities(void) {
    const char *compiled = uform_capabilities_compiled();
    const char *available = uform_capabilities_available();
    CHECK(compiled != NULL && available != NULL);
    CHECK(strlen(compiled) > 0 && strlen(available) > 0);
    CHECK(strchr(compiled, ' ') == NULL && strchr(available, ' ') == NULL);
    CHECK(compiled[0] != ',' && available[strlen(available) - 1] != ',');
    CHECK(uform_capabilities_compiled() == compiled); /* static storage: the same pointer every time */
}

/* 2. Every CPU class available is accepted as cpu_class; an unknown one lists the accepted names. */
static void test_02_cpu_classes(void) {
    char classes[4096];
    snprintf(classes, sizeof classes, "%s", uform_capabilities_available());
    int accepted = 0;
    for (char *name = strtok(classes, ","); name; name = strtok(NULL, ",")) {
        uform_executor_for_ram_config_t config;
        memset(&config, 0, sizeof config);
        config.cpu_class = name;
        config.threads = 1;
        uform_executor_t *executor = NULL;
        uform_status_t status = uform_executor_for_ram(&config, &executor);
        if (strncmp(name, "nvidia-", 7) == 0 || strncmp(name, "amd-cdna", 8) == 0 || strncmp(name, "amd-rdna", 8) == 0) {
            continue; /* GPU classes are not CPU classes */
        }
        CHECK(status == UFORM_STATUS_OK);
        if (status == UFORM_STATUS_OK) accepted++;
        CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
    }
    CHECK(accepted > 0);
    uform_executor_for_ram_config_t bad;
    memset(&bad, 0, sizeof bad);
    bad.cpu_class = "intel-pentium-pro";
    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_ram(&bad, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("intel-pentium-pro") && says("`config.cpu_class`"));
    CHECK(executor == NULL);
}

/* 3. The device list: empty without a GPU driver (not an error), well-formed entries with one. */
static void test_03_gpu_devices_empty(void) {
    const uform_gpu_device_t *devices = (const uform_gpu_device_t *)1;
    size_t count = 99;
    CHECK_STATUS(uform_gpu_devices(&devices, &count), UFORM_STATUS_OK);
    const char *expect = getenv("UFORM_EXPECT_GPUS");
    /* Without a GPU device node no driver can list a GPU; UFORM_EXPECT_GPUS=1 or 0 says what to expect instead. */
    int nodes = access("/dev/nvidiactl", F_OK) == 0 || access("/dev/kfd", F_OK) == 0;
    if (expect != NULL && strcmp(expect, "1") == 0) CHECK(count > 0);
    if ((expect != NULL && strcmp(expect, "0") == 0) || (expect == NULL && !nodes)) CHECK(count == 0);
    CHECK(count < 1024);
    for (size_t i = 0; i < count; ++i) {
        CHECK(devices[i].name != NULL && devices[i].name[0] != '\0');
        CHECK(devices[i].memory_bytes > 0);
        CHECK(devices[i].gpu_class < 0 || uform_gpu_class_name(devices[i].gpu_class) != NULL);
    }
    CHECK_STATUS(uform_gpu_devices(NULL, &count), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("devices"));
    CHECK(uform_gpu_class_name(-1) == NULL);
    CHECK(uform_gpu_class_name(1 << 20) == NULL);
}

/* 4. Enum values. */
static void test_04_enum_values(void) {
    CHECK(UFORM_MULTIMEM_TIER_SWITCH_REDUCED == 0 && UFORM_MULTIMEM_TIER_PEER_READ == 1);
    CHECK(UFORM_GPU_VENDOR_UNKNOWN == 0 && UFORM_GPU_VENDOR_NVIDIA == 1 && UFORM_GPU_VENDOR_AMD == 2 &&
          UFORM_GPU_VENDOR_APPLE == 3);
    CHECK(UFORM_MOOD_PARKED == 0 && UFORM_MOOD_SPINNING == 1);
    CHECK(strcmp(uform_status_name(UFORM_STATUS_INVALID_ARGUMENT), "invalid_argument") == 0);
    CHECK(strcmp(uform_status_name(UFORM_STATUS_FREED_HANDLE), "freed_handle") == 0);
    CHECK(uform_status_name((uform_status_t)99) == NULL);
}

/* 5. for_ram with no config and with every field; drain in every mood. */
static void test_05_executor_for_ram(void) {
    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_ram(NULL, &executor), UFORM_STATUS_OK);
    CHECK(executor != NULL);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_SPINNING), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);

    char own_class[256];
    snprintf(own_class, sizeof own_class, "%s", uform_capabilities_available());
    char *comma = strchr(own_class, ',');
    if (comma) *comma = '\0';
    uint32_t domains[1] = {0};
    uform_executor_for_ram_config_t config;
    memset(&config, 0, sizeof config);
    config.memory_domains = domains;
    config.memory_domains_count = 1;
    config.cpu_class = own_class;
    config.threads = 2;
    config.deferred_limit = 4;
    executor = NULL;
    CHECK_STATUS(uform_executor_for_ram(&config, &executor), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_SPINNING), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 6. free twice is fine; anything else after free is a freed handle. */
static void test_06_free_twice_and_after_free(void) {
    uform_executor_t *executor = default_executor();
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_FREED_HANDLE);
    CHECK(says("executor") && says("freed"));
    uform_mesh_t *mesh = NULL;
    CHECK_STATUS(uform_mesh_bootstrap(executor, NULL, &mesh), UFORM_STATUS_FREED_HANDLE);
    /* A pointer UForm never made is an error, not a crash. */
    CHECK_STATUS(uform_executor_drain((uform_executor_t *)(uintptr_t)0xdead0, UFORM_MOOD_PARKED),
                 UFORM_STATUS_FREED_HANDLE);
    CHECK_STATUS(uform_executor_drain(NULL, UFORM_MOOD_PARKED), UFORM_STATUS_INVALID_ARGUMENT);
}

/* 7. C has no scope guard: explicit free releases the threads (checked in 6 and under valgrind). */
static void test_07_explicit_release(void) {
    for (int i = 0; i < 50; i++) CHECK_STATUS(uform_executor_free(default_executor()), UFORM_STATUS_OK);
}

/* 8. Bad configs. Zero means absent in C, so an explicit zero is not expressible; the rest are. */
static void test_08_bad_configs(void) {
    uform_executor_t *executor = NULL;
    uform_executor_for_ram_config_t config;
    memset(&config, 0, sizeof config);
    uint32_t unknown_node[1] = {4096};
    config.memory_domains = unknown_node;
    config.memory_domains_count = 1;
    CHECK_STATUS(uform_executor_for_ram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("4096"));
    memset(&config, 0, sizeof config);
    config.memory_domains = NULL;
    config.memory_domains_count = 3;
    CHECK_STATUS(uform_executor_for_ram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("memory_domains") && says("NULL"));
    memset(&config, 0, sizeof config);
    config.cpu_class = "\xff\xfe";
    CHECK_STATUS(uform_executor_for_ram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("UTF-8"));
    CHECK_STATUS(uform_executor_for_ram(NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(executor == NULL);
    /* An out-of-range enum value is an error, never undefined behaviour. */
    executor = default_executor();
    CHECK_STATUS(uform_executor_drain(executor, (uform_mood_t)7), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("mood") && says("7"));
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 9. on_pool is unsupported. */
static void test_09_on_pool_unsupported(void) {
    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_on_pool((uintptr_t)0x1000, NULL, &executor), UFORM_STATUS_UNSUPPORTED);
    CHECK(says("ForkUnion"));
    CHECK(executor == NULL);
}

/* 10. for_vram: unavailable without GPUs, an executor on the first one with them; its argument errors either way. */
static void test_10_for_vram_errors(void) {
    const uform_gpu_device_t *listed = NULL;
    size_t gpus = 0;
    CHECK_STATUS(uform_gpu_devices(&listed, &gpus), UFORM_STATUS_OK);
    uform_executor_t *executor = NULL;
    if (gpus == 0) {
        CHECK_STATUS(uform_executor_for_vram(NULL, &executor), UFORM_STATUS_UNAVAILABLE);
        CHECK(says("`gpu_devices()`"));
        CHECK(executor == NULL);
    } else {
        CHECK_STATUS(for_vram_on(0, &executor), UFORM_STATUS_OK);
        CHECK(executor != NULL);
        if (executor != NULL) {
            CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_OK);
            CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
        }
        executor = NULL;
    }
    uform_executor_for_vram_config_t config;
    memset(&config, 0, sizeof config);
    uint32_t devices[2] = {0, 1};
    uintptr_t streams[2] = {0x10, 0x1};
    config.devices = devices;
    config.devices_count = 2;
    config.streams = streams;
    config.streams_count = 1;
    CHECK_STATUS(uform_executor_for_vram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("streams"));
    /* Special handles and one stream for two devices are refused before any driver call. */
    config.streams_count = 2;
    CHECK_STATUS(uform_executor_for_vram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("CU_STREAM_LEGACY"));
    streams[1] = 0x10;
    CHECK_STATUS(uform_executor_for_vram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("positions 0 and 1"));
    memset(&config, 0, sizeof config);
    config.gpu_class = "nvidia-voodoo";
    CHECK_STATUS(uform_executor_for_vram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("nvidia-voodoo"));
    CHECK_STATUS(for_vram_on((uint32_t)gpus + 7, &executor),
                 gpus == 0 ? UFORM_STATUS_UNAVAILABLE : UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(executor == NULL);
}

/* 11. A mesh of one with a RAM executor. */
static void test_11_mesh_of_one(void) {
    uform_executor_t *executor;
    uform_mesh_t *mesh;
    mesh_of_one(&executor, &mesh);
    uform_mesh_description_t description;
    memset(&description, 0xff, sizeof description);
    CHECK_STATUS(uform_mesh_describe(mesh, &description), UFORM_STATUS_OK);
    CHECK(description.host_domain_index == 0 && description.host_domain_count == 1);
    CHECK(description.gpus_count == 0);
    CHECK(description.multimem_tier == UFORM_MULTIMEM_TIER_SWITCH_REDUCED ||
          description.multimem_tier == UFORM_MULTIMEM_TIER_PEER_READ);
    CHECK_STATUS(uform_mesh_describe(mesh, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_mesh_free(mesh), UFORM_STATUS_OK);
    CHECK_STATUS(uform_mesh_free(mesh), UFORM_STATUS_OK);
    CHECK_STATUS(uform_mesh_describe(mesh, &description), UFORM_STATUS_FREED_HANDLE);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 12. With peers: directory and job required; bad job names; index outside the count. */
static void test_12_mesh_invalid_options(void) {
    uform_executor_t *executor = default_executor();
    uform_mesh_t *mesh = NULL;
    uform_mesh_options_t options = mesh_options(NULL, "job", 0, 2, 0);
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("directory"));
    options.directory = scratch_root;
    options.job = NULL;
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("job"));
    const char *bad_jobs[] = {"", "a/b", "..", "."};
    for (size_t i = 0; i < sizeof bad_jobs / sizeof bad_jobs[0]; i++) {
        options.job = bad_jobs[i];
        CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("job"));
    }
    options.job = "index-too-large";
    options.host_domain_index = 2;
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("`options.host_domain_index`"));
    CHECK(mesh == NULL);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 13. A peer that never comes: a timeout naming the missing index; nothing left behind. */
static void test_13_mesh_timeout(void) {
    char dir[1024];
    scratch(dir, sizeof dir, "timeout");
    uform_executor_t *executor = default_executor();
    uform_mesh_t *mesh = NULL;
    uform_mesh_options_t options = mesh_options(dir, "lonely", 0, 2, 1);
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_TIMEOUT);
    CHECK(says("1"));
    CHECK(mesh == NULL);
    CHECK(directory_entries(dir) == 0);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
    rmdir(dir);
}

static int run_peer(const char *dir, const char *job, unsigned index, unsigned count) {
    uform_executor_t *executor = NULL;
    uform_mesh_t *mesh = NULL;
    uform_mesh_description_t description;
    uform_mesh_options_t options = mesh_options(dir, job, index, count, 60);
    if (uform_executor_for_ram(NULL, &executor) != UFORM_STATUS_OK) return 10;
    if (uform_mesh_bootstrap(executor, &options, &mesh) != UFORM_STATUS_OK) {
        fprintf(stderr, "peer %u: %s\n", index, uform_last_error_message());
        return 11;
    }
    if (uform_mesh_describe(mesh, &description) != UFORM_STATUS_OK) return 12;
    if (description.host_domain_index != index || description.host_domain_count != count) return 13;
    if (uform_mesh_free(mesh) != UFORM_STATUS_OK) return 14;
    if (uform_executor_free(executor) != UFORM_STATUS_OK) return 15;
    return 0;
}

/* 14. Four processes meet in one directory; after every free the job directory is gone. */
static void test_14_four_processes(void) {
    char dir[1024];
    scratch(dir, sizeof dir, "four");
    pid_t pids[4];
    for (unsigned i = 0; i < 4; i++) {
        char index[16];
        snprintf(index, sizeof index, "%u", i);
        char *argv[] = {self_path, "peer", dir, "four", index, "4", NULL};
        CHECK(posix_spawn(&pids[i], self_path, NULL, NULL, argv, environ) == 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    char job[1100];
    snprintf(job, sizeof job, "%s/four", dir);
    struct stat info;
    CHECK(stat(job, &info) != 0);
    rmdir(dir);
}

/* 15. Freeing the executor under a live mesh is refused as in use; it works once the mesh is freed. */
static void test_15_executor_under_live_mesh(void) {
    uform_executor_t *executor;
    uform_mesh_t *mesh;
    mesh_of_one(&executor, &mesh);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_IN_USE);
    CHECK(says("mesh") || says("Mesh") || says("borrowed"));
    CHECK_STATUS(uform_executor_drain(executor, UFORM_MOOD_PARKED), UFORM_STATUS_OK);
    CHECK_STATUS(uform_mesh_free(mesh), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 16. Every error has its status and a message naming the argument and the value. */
static void test_16_error_kinds_and_messages(void) {
    uform_executor_t *executor = NULL;
    uform_executor_for_ram_config_t config;
    memset(&config, 0, sizeof config);
    config.cpu_class = "arm-bogus";
    CHECK_STATUS(uform_executor_for_ram(&config, &executor), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("`config.cpu_class`") && says("arm-bogus"));
    CHECK(strcmp(uform_status_name(UFORM_STATUS_INVALID_ARGUMENT), "invalid_argument") == 0);
    CHECK_STATUS(uform_executor_on_pool((uintptr_t)0xabc0, NULL, &executor), UFORM_STATUS_UNSUPPORTED);
    CHECK(says("0xabc0"));
    /* The last message belongs to the thread: a success does not clear it, another failure replaces it. */
    CHECK(uform_capabilities_available() != NULL);
    CHECK(says("0xabc0"));
}

/* 17. Records are plain structs: the description can be copied and compared field by field. */
static void test_17_records_compare(void) {
    uform_executor_t *executor;
    uform_mesh_t *mesh;
    mesh_of_one(&executor, &mesh);
    uform_mesh_description_t a, b;
    CHECK_STATUS(uform_mesh_describe(mesh, &a), UFORM_STATUS_OK);
    CHECK_STATUS(uform_mesh_describe(mesh, &b), UFORM_STATUS_OK);
    CHECK(a.host_domain_index == b.host_domain_index && a.host_domain_count == b.host_domain_count &&
          a.gpus == b.gpus && a.gpus_count == b.gpus_count && a.multimem_tier == b.multimem_tier &&
          a.gpus_per_multimem_domain == b.gpus_per_multimem_domain &&
          a.multimem_domain_count == b.multimem_domain_count);
    CHECK_STATUS(uform_mesh_free(mesh), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 18. A mesh on a shared directory: a job name planted as a symbolic link to another folder is refused as a conflict
 * naming the link and its target, and nothing is written there; an unknown `group` is an invalid argument. */
static void test_18_mesh_planted_link(void) {
    char dir[1024], victim[1024], data[1200], link[1200];
    scratch(dir, sizeof dir, "planted");
    scratch(victim, sizeof victim, "victim");
    snprintf(data, sizeof data, "%s/data.txt", victim);
    snprintf(link, sizeof link, "%s/job1", dir);
    FILE *file = fopen(data, "w");
    CHECK(file != NULL);
    if (file) fclose(file);
    CHECK(symlink(victim, link) == 0);
    uform_executor_t *executor = default_executor();
    uform_mesh_t *mesh = NULL;
    uform_mesh_options_t options = mesh_options(dir, "job1", 0, 2, 5);
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_CONFLICT);
    CHECK(says("symbolic link") && says(victim) && says("nothing was written"));
    CHECK(mesh == NULL);
    CHECK(directory_entries(victim) == 1); /* only data.txt */
    CHECK(directory_entries(dir) == 1);    /* only the link, as it was */
    options.job = "fresh";
    options.group = "uform-no-such-group";
    CHECK_STATUS(uform_mesh_bootstrap(executor, &options, &mesh), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("group"));
    CHECK(directory_entries(dir) == 1);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
    unlink(link);
    unlink(data);
    rmdir(victim);
    rmdir(dir);
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "peer") == 0)
        return run_peer(argv[2], argv[3], (unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]));
    snprintf(self_path, sizeof self_path, "%s", argv[0]);
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    int skip_processes = getenv("UFORM_TEST_NO_PROCESSES") != NULL; /* under valgrind: peers run natively */
    struct test tests[] = {
        {"test_01_capabilities", test_01_capabilities, 0},
        {"test_02_cpu_classes", test_02_cpu_classes, 0},
        {"test_03_gpu_devices_empty", test_03_gpu_devices_empty, 0},
        {"test_04_enum_values", test_04_enum_values, 0},
        {"test_05_executor_for_ram", test_05_executor_for_ram, 0},
        {"test_06_free_twice_and_after_free", test_06_free_twice_and_after_free, 0},
        {"test_07_explicit_release", test_07_explicit_release, 0},
        {"test_08_bad_configs", test_08_bad_configs, 0},
        {"test_09_on_pool_unsupported", test_09_on_pool_unsupported, 0},
        {"test_10_for_vram_errors", test_10_for_vram_errors, 0},
        {"test_11_mesh_of_one", test_11_mesh_of_one, 0},
        {"test_12_mesh_invalid_options", test_12_mesh_invalid_options, 0},
        {"test_13_mesh_timeout", test_13_mesh_timeout, 0},
        {"test_14_four_processes", test_14_four_processes, 1},
        {"test_15_executor_under_live_mesh", test_15_executor_under_live_mesh, 0},
        {"test_16_error_kinds_and_messages", test_16_error_kinds_and_messages, 0},
        {"test_17_records_compare", test_17_records_compare, 0},
        {"test_18_mesh_planted_link", test_18_mesh_planted_link, 0},
    };
    return run_tests(tests, sizeof tests / sizeof tests[0], !skip_processes, NULL);
}
