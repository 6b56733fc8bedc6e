/*
 * The C suites' shared harness (test_uform.c, test_model.c, test_encode.c, test_families.c, test_images.c,
 * test_train.c; each is its own program, so everything here is static): CHECK and CHECK_STATUS count the checks of
 * the running test, `says` reads the last error message, `run_tests` runs a table and prints one line per test and
 * "N passed, N failed"; and the helpers more than one suite needs.
 */
#ifndef UFORM_TEST_SUITE_H
#define UFORM_TEST_SUITE_H

#include <uform.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;
static int checks_in_test = 0;
static int failed_in_test = 0;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        checks_in_test++;                                                                                              \
        if (!(cond)) {                                                                                                 \
            failed_in_test++;                                                                                          \
            fprintf(stderr, "    %s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond,                \
                    uform_last_error_message());                                                                       \
        }                                                                                                              \
    } while (0)

#define CHECK_STATUS(call, expected) CHECK((call) == (expected))

/* The last message mentions `needle`. */
static inline int says(const char *needle) { return strstr(uform_last_error_message(), needle) != NULL; }

/* One test of a suite: `needs` marks a test that needs what the suite may lack (the test model, child processes). */
struct test {
    const char *name;
    void (*run)(void);
    int needs;
};

/* Seconds on the monotonic clock. */
static inline double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/*
 * Runs the table. A test that `needs` what is not there (`met` false) fails naming `unmet` without running, or is
 * left out of the count when `unmet` is NULL (the processes valgrind runs natively). A test passes when it made at
 * least one check and none failed; each line says how long its test took (where a suite's time goes, in CI's log).
 * Returns the process's exit status.
 */
static inline int run_tests(const struct test *tests, size_t count, int met, const char *unmet) {
    int passed = 0, ran = 0;
    for (size_t i = 0; i < count; i++) {
        if (tests[i].needs && !met) {
            if (unmet == NULL) continue;
            ran++;
            failures++;
            printf("FAIL %s: %s\n", tests[i].name, unmet);
            continue;
        }
        ran++;
        checks_in_test = failed_in_test = 0;
        double started = seconds_now();
        tests[i].run();
        double took = seconds_now() - started;
        if (failed_in_test == 0 && checks_in_test > 0) {
            passed++;
            printf("ok   %s (%d checks, %.1f s)\n", tests[i].name, checks_in_test, took);
        } else {
            failures++;
            printf("FAIL %s (%d of %d checks failed, %.1f s)\n", tests[i].name, failed_in_test, checks_in_test, took);
        }
    }
    printf("%d passed, %d failed\n", passed, ran - passed);
    return failures == 0 ? 0 : 1;
}

/* `run_tests` over a suite's table `tests` (an array) whose tests need `variables`, which `cargo xtask test c` sets;
 * an unmet test fails saying so. */
#define RUN_TESTS_NEEDING(tests, met, variables)                                                                       \
    run_tests(tests, sizeof tests / sizeof tests[0], met,                                                              \
              variables " are not set or unreadable; run the suite through `cargo xtask test c`")

/* Where tests make their files: `UFORM_TEST_DIR`, else /tmp (each suite's `main` sets it). */
static const char *scratch_root = "/tmp";

/* A fresh folder `scratch_root/NAME-PID` for a test's files. */
static inline void scratch(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s-%ld", scratch_root, name, (long)getpid());
    mkdir(out, 0755);
}

/* How many entries a directory holds (-1 when it cannot be read). */
static inline int directory_entries(const char *path) {
    DIR *dir = opendir(path);
    if (!dir) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) count++;
    closedir(dir);
    return count;
}

/* A file's bytes, NUL-terminated (`*length` without the NUL); exits when it cannot be read. */
static inline char *read_file(const char *path, size_t *length) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = malloc((size_t)size + 1);
    size_t got = fread(bytes, 1, (size_t)size, f);
    fclose(f);
    bytes[got] = '\0';
    if (length) *length = got;
    return bytes;
}

/* A line `key` of /proc/self/status (VmHWM:, VmRSS:), in KiB; -1 when it is not there. */
static inline long status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long value = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) value = atol(line + strlen(key));
    if (f) fclose(f);
    return value;
}

/* Writes `length` bytes to `path`, or exits. */
static inline void write_bytes(const char *path, const void *bytes, size_t length) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fwrite(bytes, 1, length, f);
    fclose(f);
}

/* A two-thread RAM executor, or exits. */
static inline uform_executor_t *ram_executor(void) {
    uform_executor_for_ram_config_t config;
    memset(&config, 0, sizeof config);
    config.threads = 2;
    uform_executor_t *executor = NULL;
    if (uform_executor_for_ram(&config, &executor) != UFORM_STATUS_OK) {
        fprintf(stderr, "forRam failed: %s\n", uform_last_error_message());
        exit(2);
    }
    return executor;
}

/* `Model.loadRam(path, { executor })`. */
static inline uform_status_t load_ram(const char *path, uform_executor_t *executor, uform_model_t **model) {
    uform_model_load_ram_config_t config;
    memset(&config, 0, sizeof config);
    config.executor = executor;
    return uform_model_load_ram(path, &config, model);
}

/* `Model.loadRam(path, { executor, precision })`, from UFORM_MODEL_LOAD_RAM_CONFIG_INIT. */
static inline uform_status_t load_ram_as(const char *path, uform_executor_t *executor, uform_precision_t precision,
                                         uform_model_t **model) {
    uform_model_load_ram_config_t config = UFORM_MODEL_LOAD_RAM_CONFIG_INIT;
    config.executor = executor;
    config.precision = precision;
    return uform_model_load_ram(path, &config, model);
}

/* The model at `path` loaded (checked) on a fresh `ram_executor()`, which goes to `*executor`; `close_model` frees
 * both. */
static inline uform_model_t *open_model(const char *path, uform_executor_t **executor) {
    *executor = ram_executor();
    uform_model_t *model = NULL;
    CHECK_STATUS(load_ram(path, *executor, &model), UFORM_STATUS_OK);
    return model;
}

/* Frees `model`, then the executor it was loaded on, checking each. */
static inline void close_model(uform_model_t *model, uform_executor_t *executor) {
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* One hexadecimal digit's value (the flattened fixtures write floats as hex). */
static inline int hex_value(char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; }

/* A flattened text: its bytes in hexadecimal ("-" when empty), decoded into a fresh NUL-terminated string. */
static inline char *unhex(const char *hex) {
    size_t n = strcmp(hex, "-") == 0 ? 0 : strlen(hex) / 2;
    char *text = calloc(n + 1, 1);
    for (size_t i = 0; i < n; i++) text[i] = (char)(hex_value(hex[2 * i]) * 16 + hex_value(hex[2 * i + 1]));
    return text;
}

/* One flattened entry `model.key` (tests/c/flatten_families.py, flatten_images.py): `rows` strings (columns 0) or a
 * rows x columns matrix. */
struct entry {
    char name[64];
    size_t rows, columns;
    char **texts;
    float *values;
};

/* Reads at most `capacity` entries from the flattened file at `path` into `entries`, counting them in `*count`
 * (an entry read in part counts too, for `free_entries`); 0 when the file cannot be opened or a row is cut short. */
static inline int read_entries(const char *path, struct entry *entries, size_t capacity, size_t *count) {
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return 0;
    static char hex[1 << 16];
    int ok = 1;
    while (ok && *count < capacity) {
        struct entry *e = &entries[*count];
        if (fscanf(f, "%63s %zu %zu", e->name, &e->rows, &e->columns) != 3) break;
        (*count)++;
        if (e->columns == 0) e->texts = calloc(e->rows, sizeof *e->texts);
        else e->values = calloc(e->rows * e->columns, sizeof *e->values);
        for (size_t r = 0; ok && r < e->rows && e->columns == 0; r++) {
            if (fscanf(f, "%65535s", hex) != 1) ok = 0;
            e->texts[r] = unhex(ok ? hex : "-");
        }
        for (size_t i = 0; ok && i < e->rows * e->columns; i++)
            if (fscanf(f, "%f", &e->values[i]) != 1) ok = 0;
    }
    fclose(f);
    return ok;
}

static inline void free_entries(struct entry *entries, size_t *count) {
    for (size_t e = 0; e < *count; e++) {
        for (size_t r = 0; entries[e].texts && r < entries[e].rows; r++) free(entries[e].texts[r]);
        free(entries[e].texts);
        free(entries[e].values);
    }
    *count = 0;
}

/* The entry `model.key` of `entries`, or NULL, naming it and `file` (the variable that names the flattened file). */
static inline const struct entry *find_entry(const struct entry *entries, size_t count, const char *model,
                                             const char *key, const char *file) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s", model, key);
    for (size_t e = 0; e < count; e++)
        if (strcmp(entries[e].name, name) == 0) return &entries[e];
    fprintf(stderr, "    no %s in %s\n", name, file);
    return NULL;
}

/* Whether `name` is one of the comma-separated capabilities available. */
static inline int available(const char *name) {
    char list[4096];
    snprintf(list, sizeof list, "%s", uform_capabilities_available());
    for (char *c = strtok(list, ","); c; c = strtok(NULL, ","))
        if (strcmp(c, name) == 0) return 1;
    return 0;
}

/* The largest |a[i] - b[i]| over `n` floats. */
static inline float max_difference(const float *a, const float *b, size_t n) {
    float worst = 0;
    for (size_t i = 0; i < n; i++) worst = fabsf(a[i] - b[i]) > worst ? fabsf(a[i] - b[i]) : worst;
    return worst;
}

/* The cosine of the angle between `a` and `b`, `n` floats each, in double precision. */
static inline double cosine(const float *a, const float *b, size_t n) {
    double dot = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        dot += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return dot / sqrt(aa * bb);
}

#endif
