/*
 * The C encodeText scenarios 22–25 (../../../shared/SCENARIOS.md), against generated/c/uform.h and libuform, and
 * issue 29's: batches within the scratch limit (26), the model file changed after loading (27), a text without
 * tokens (28); and issue 33's bf16 models (29).
 * Needs UFORM_TEST_MODEL_DIR (the all-MiniLM-L6-v2 folder) and UFORM_TEST_REFERENCE (the reference embeddings,
 * flattened by tests/c/flatten_reference.py); `cargo xtask test c` sets both. UFORM_TEST_ENCODE_ROWS caps how many
 * reference texts are encoded (valgrind runs a few). Prints one line per test and closes with "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *model_dir = NULL;

/* The reference embeddings, as tests/c/flatten_reference.py writes them. */
static size_t ref_rows = 0, ref_dims = 0, ref_long = 0;
static char **ref_texts = NULL;
static float *ref_embeddings = NULL;

static int read_reference(void) {
    const char *path = getenv("UFORM_TEST_REFERENCE");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return 0;
    if (fscanf(f, "%zu %zu %zu", &ref_rows, &ref_dims, &ref_long) != 3) return fclose(f), 0;
    ref_texts = calloc(ref_rows, sizeof *ref_texts);
    ref_embeddings = calloc(ref_rows * ref_dims, sizeof *ref_embeddings);
    static char hex[1 << 16];
    for (size_t r = 0; r < ref_rows; r++) {
        if (fscanf(f, "%65535s", hex) != 1) return fclose(f), 0;
        ref_texts[r] = unhex(hex);
        for (size_t c = 0; c < ref_dims; c++)
            if (fscanf(f, "%f", &ref_embeddings[r * ref_dims + c]) != 1) return fclose(f), 0;
    }
    fclose(f);
    return 1;
}

/* The reference texts a test encodes: all of them, or UFORM_TEST_ENCODE_ROWS under valgrind. */
static size_t reference_rows(void) {
    const char *cap = getenv("UFORM_TEST_ENCODE_ROWS");
    return cap && (size_t)atoi(cap) < ref_rows ? (size_t)atoi(cap) : ref_rows;
}

/* 22. encodeText reproduces the reference: cosine >= 0.9999 and max abs diff <= 1e-4 per text, 384 columns. */
static void test_22_reference_embeddings(void) {
    size_t rows = reference_rows();
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    uform_f32_matrix_t m;
    memset(&m, 0, sizeof m);
    CHECK_STATUS(uform_model_encode_text(model, (const char *const *)ref_texts, rows, NULL, &m), UFORM_STATUS_OK);
    CHECK(m.rows == rows && m.columns == 384 && ref_dims == 384);
    for (size_t r = 0; m.data && r < m.rows && m.columns == ref_dims; r++) {
        const float *got = m.data + r * m.columns, *want = ref_embeddings + r * ref_dims;
        double similar = cosine(got, want, ref_dims), worst = max_difference(got, want, ref_dims);
        if (similar < 0.9999 || worst > 1e-4) fprintf(stderr, "    row %zu: cosine %.6f, max diff %.2e\n", r, similar, worst);
        CHECK(similar >= 0.9999 && worst <= 1e-4);
    }
    uform_f32_matrix_free(&m);
    close_model(model, executor);
}

/* 23. Edge inputs: empty list, empty string, over-long text, non-ASCII, invalid UTF-8, NULL elements. */
static void test_23_edge_inputs(void) {
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    uform_f32_matrix_t m;
    memset(&m, 0, sizeof m);
    CHECK_STATUS(uform_model_encode_text(model, NULL, 0, NULL, &m), UFORM_STATUS_OK);
    CHECK(m.rows == 0);
    uform_f32_matrix_free(&m);
    /* The reference's over-long text (a short one under valgrind) and the empty string, each as the reference has it. */
    size_t first = getenv("UFORM_TEST_ENCODE_ROWS") ? 0 : ref_long;
    const char *pair[3] = {ref_texts[first], "", "Gr\xc3\xb6\xc3\x9f""ere Stra\xc3\x9f""enbahnen \xe2\x80\x94 \xe6\x9d\xb1\xe4\xba\xac \xf0\x9f\x8d\x95"};
    CHECK_STATUS(uform_model_encode_text(model, pair, 3, NULL, &m), UFORM_STATUS_OK);
    CHECK(m.rows == 3 && m.columns == 384);
    size_t empty_row = ref_rows;
    for (size_t r = 0; r < ref_rows; r++)
        if (ref_texts[r][0] == '\0') empty_row = r;
    CHECK(empty_row < ref_rows);
    for (size_t k = 0; m.data && m.rows == 3 && k < 2; k++) {
        const float *want = ref_embeddings + (k == 0 ? first : empty_row) * ref_dims;
        double worst = 0;
        for (size_t c = 0; c < ref_dims; c++)
            if (fabs((double)m.data[k * 384 + c] - want[c]) > worst) worst = fabs((double)m.data[k * 384 + c] - want[c]);
        CHECK(worst <= 1e-4);
    }
    double norm = 0;
    for (size_t c = 0; m.data && m.rows == 3 && c < 384; c++) norm += (double)m.data[2 * 384 + c] * m.data[2 * 384 + c];
    CHECK(fabs(norm - 1.0) < 1e-4); /* normalised by the model's own pipeline */
    uform_f32_matrix_free(&m);
    const char *bad[2] = {"fine", "caf\xc3"};
    CHECK_STATUS(uform_model_encode_text(model, bad, 2, NULL, &m), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("texts[1]"));
    CHECK(m.data == NULL);
    const char *null_text[2] = {"fine", NULL};
    CHECK_STATUS(uform_model_encode_text(model, null_text, 2, NULL, &m), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_model_encode_text(model, NULL, 2, NULL, &m), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_model_encode_text(model, bad, 1, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    uform_encode_text_options_t options;
    memset(&options, 0, sizeof options);
    options.max_tokens = 4;
    CHECK_STATUS(uform_model_encode_text(model, pair, 1, &options, &m), UFORM_STATUS_OK);
    CHECK(m.rows == 1 && m.columns == 384);
    uform_f32_matrix_free(&m);
    close_model(model, executor);
}

/* 24. The matrix is the caller's: valid after the model and executor are freed; freeing it twice is harmless. */
static void test_24_matrix_outlives_model(void) {
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    const char *texts[2] = {ref_texts[0], ref_texts[1]};
    uform_f32_matrix_t m;
    memset(&m, 0, sizeof m);
    CHECK_STATUS(uform_model_encode_text(model, texts, 2, NULL, &m), UFORM_STATUS_OK);
    close_model(model, executor);
    CHECK(m.rows == 2 && m.columns == 384 && m.data != NULL);
    double worst = 0;
    for (size_t i = 0; m.data && m.rows == 2 && i < 2 * 384; i++)
        if (fabs((double)m.data[i] - ref_embeddings[i]) > worst) worst = fabs((double)m.data[i] - ref_embeddings[i]);
    CHECK(worst <= 1e-4);
    uform_f32_matrix_free(&m);
    CHECK(m.data == NULL && m.rows == 0);
    uform_f32_matrix_free(&m);
    uform_f32_matrix_free(NULL);
}

/* 25. C has no asynchronous form; free of a model waits for calls in flight (core/tests covers the race). */

/* The model a scenario that checks memory rather than MiniLM's numbers loads: under valgrind the tiny model of
 * UFORM_TEST_TINY_MODEL_DIR where it is set (MiniLM's code paths at a hundredth of the work), else the test model. */
static const char *memory_model_dir(void) {
    const char *tiny = getenv("UFORM_TEST_TINY_MODEL_DIR");
    return getenv("UFORM_TEST_ENCODE_ROWS") && tiny ? tiny : model_dir;
}

/* The width of the rows the model in `dir` gives: MiniLM's 384, or the tiny model's 32. */
static size_t width_of(const char *dir) { return dir == model_dir ? 384 : 32; }

/* A two-thread RAM executor dispatching as `cpu_class` (NULL: the CPU's own) whose scratch may grow to
 * `scratch_limit` bytes (0: the default limit), checked. */
static uform_executor_t *two_thread_executor(const char *cpu_class, uint64_t scratch_limit) {
    uform_executor_for_ram_config_t config = UFORM_EXECUTOR_FOR_RAM_CONFIG_INIT;
    config.threads = 2;
    config.cpu_class = cpu_class;
    config.scratch_limit = scratch_limit;
    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_ram(&config, &executor), UFORM_STATUS_OK);
    return executor;
}

/* 26. One call of many texts runs in batches within the executor's scratch limit: 20,000 texts under 64 MiB keep
 * the peak resident size within the limit plus the result and 16 MiB (natively; under valgrind 24 texts under
 * 64 KiB, several batches, on the tiny model of UFORM_TEST_TINY_MODEL_DIR: on MiniLM 200 took 21 minutes under it),
 * with rows equal to calls of `window_rows` texts (32; 8 under valgrind) on an executor with the default limit. A
 * text that cannot fit is out of memory naming it; a zero limit is an invalid argument. */
static void test_26_batches_within_the_scratch_limit(void) {
    int grind = getenv("UFORM_TEST_ENCODE_ROWS") != NULL;
    size_t count = grind ? 24 : 20000, window_rows = grind ? 8 : 32;
    const char *tiny_dir = memory_model_dir();
    size_t want_dims = width_of(tiny_dir);
    /* Under valgrind a limit that still splits 24 texts into several batches of the model in use. */
    uint64_t limit = !grind ? (uint64_t)64 << 20 : tiny_dir == model_dir ? (uint64_t)1 << 20 : (uint64_t)64 << 10;
    static const char *words[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
    char **texts = calloc(count, sizeof *texts);
    for (size_t i = 0; i < count; i++) {
        texts[i] = malloc(64);
        size_t at = 0;
        for (size_t w = 0; w <= i % 5; w++) at += (size_t)snprintf(texts[i] + at, 64 - at, "%s ", words[w]);
        snprintf(texts[i] + at, 64 - at, "%zu", i);
    }
    uform_executor_t *small = two_thread_executor(NULL, limit), *plain = ram_executor();
    uform_model_t *bounded = NULL, *model = NULL;
    CHECK_STATUS(load_ram(tiny_dir, small, &bounded), UFORM_STATUS_OK);
    CHECK_STATUS(load_ram(tiny_dir, plain, &model), UFORM_STATUS_OK);
    uform_f32_matrix_t all, window;
    memset(&all, 0, sizeof all);
    memset(&window, 0, sizeof window);
    CHECK_STATUS(uform_model_encode_text(bounded, (const char *const *)texts, window_rows, NULL, &all),
                 UFORM_STATUS_OK);
    uform_f32_matrix_free(&all); /* the encoder is prepared */
    long before = status_kib("VmRSS:");
    write_bytes("/proc/self/clear_refs", "5", 1); /* VmHWM, the peak resident size, starts again from now */
    CHECK_STATUS(uform_model_encode_text(bounded, (const char *const *)texts, count, NULL, &all), UFORM_STATUS_OK);
    size_t dims = all.columns;
    long grown = status_kib("VmHWM:") - before, result_kib = (long)(count * dims * sizeof(float) / 1024);
    printf("     %zu texts under a %llu-byte scratch limit: RSS +%ld KiB at peak (result %ld KiB)\n", count,
           (unsigned long long)limit, grown, result_kib);
    if (!grind) CHECK(grown <= (long)(limit / 1024) + result_kib + 16 * 1024);
    CHECK(all.rows == count && all.columns == want_dims);
    for (size_t start = 0; all.data && all.rows == count; start += window_rows * 31) {
        size_t first = start + window_rows <= count ? start : count - window_rows;
        CHECK_STATUS(uform_model_encode_text(model, (const char *const *)texts + first, window_rows, NULL, &window),
                     UFORM_STATUS_OK);
        float worst = window.data ? max_difference(window.data, all.data + first * dims, window_rows * dims) : 1;
        if (worst > 1e-6f)
            fprintf(stderr, "    texts %zu..%zu: max abs difference %g\n", first, first + window_rows, worst);
        CHECK(worst <= 1e-6f);
        uform_f32_matrix_free(&window);
        if (first != start) break;
    }
    uform_f32_matrix_free(&all);
    const char *pair[2] = {"short", ref_texts[ref_long]};
    uform_executor_t *tiny = two_thread_executor(NULL, (uint64_t)1 << 20);
    uform_model_t *cramped = NULL;
    CHECK_STATUS(load_ram(model_dir, tiny, &cramped), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_encode_text(cramped, pair, 2, NULL, &all), UFORM_STATUS_OUT_OF_MEMORY);
    CHECK(says("`texts[1]`") && says("scratch_limit") && all.data == NULL);
    CHECK_STATUS(uform_model_free(cramped), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(tiny), UFORM_STATUS_OK);
    uform_executor_for_ram_config_t zero = UFORM_EXECUTOR_FOR_RAM_CONFIG_INIT;
    zero.scratch_limit = 0; /* zero means absent in C: the default limit */
    uform_executor_t *defaulted = NULL;
    CHECK_STATUS(uform_executor_for_ram(&zero, &defaulted), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(defaulted), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(bounded), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(small), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(plain), UFORM_STATUS_OK);
    for (size_t i = 0; i < count; i++) free(texts[i]);
    free(texts);
}

/* A folder under the scratch root holding a symbolic link to every entry of the model folder `from_dir` but
 * `except`. */
static void linked_model(char *out, size_t size, const char *name, const char *from_dir, const char *except) {
    scratch(out, size, name);
    DIR *dir = opendir(from_dir);
    struct dirent *entry;
    char from[4096], to[4096];
    while (dir && (entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.' || strcmp(entry->d_name, except) == 0) continue;
        snprintf(from, sizeof from, "%s/%s", from_dir, entry->d_name);
        snprintf(to, sizeof to, "%s/%s", out, entry->d_name);
        unlink(to);
        if (symlink(from, to) != 0) fprintf(stderr, "cannot link %s\n", to);
    }
    if (dir) closedir(dir);
}

static void remove_linked_model(const char *folder) {
    DIR *dir = opendir(folder);
    struct dirent *entry;
    char path[4096];
    while (dir && (entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", folder, entry->d_name);
        unlink(path);
    }
    if (dir) closedir(dir);
    rmdir(folder);
}

/* 27. After loading, the model file truncated and then rewritten in place, before the first encode and between
 * encodes: the embeddings stay the intact file's, and nothing faults (the weights were read, never mapped). Under
 * valgrind on the tiny model of UFORM_TEST_TINY_MODEL_DIR: preparing MiniLM twice took 45 s of its 50 there. */
static void test_27_the_model_file_changes_after_loading(void) {
    const char *dir = memory_model_dir();
    char folder[4096], weights[4200], source[4200];
    linked_model(folder, sizeof folder, "changed", dir, "model.safetensors");
    snprintf(weights, sizeof weights, "%s/model.safetensors", folder);
    snprintf(source, sizeof source, "%s/model.safetensors", dir);
    size_t size = 0;
    char *bytes = read_file(source, &size);
    write_bytes(weights, bytes, size);
    const char *texts[2] = {ref_texts[0], ref_texts[1]};
    uform_executor_t *executor;
    uform_model_t *intact = open_model(dir, &executor), *model = NULL;
    uform_f32_matrix_t want, got;
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    CHECK_STATUS(uform_model_encode_text(intact, texts, 2, NULL, &want), UFORM_STATUS_OK);
    CHECK(want.rows == 2 && want.columns == width_of(dir));
    size_t values = want.rows * want.columns;
    CHECK_STATUS(load_ram(folder, executor, &model), UFORM_STATUS_OK);
    CHECK(truncate(weights, 0) == 0);
    CHECK_STATUS(uform_model_encode_text(model, texts, 2, NULL, &got), UFORM_STATUS_OK);
    CHECK(got.data && want.data && got.rows * got.columns == values);
    CHECK(got.data && want.data && max_difference(got.data, want.data, values) == 0);
    uform_f32_matrix_free(&got);
    memset(bytes, 0x3f, size);
    write_bytes(weights, bytes, size);
    CHECK_STATUS(uform_model_encode_text(model, texts, 2, NULL, &got), UFORM_STATUS_OK);
    CHECK(got.data && want.data && got.rows * got.columns == values);
    CHECK(got.data && want.data && max_difference(got.data, want.data, values) == 0);
    uform_f32_matrix_free(&got);
    uform_f32_matrix_free(&want);
    free(bytes);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    close_model(intact, executor);
    remove_linked_model(folder);
}

/* The test model's tokenizer.json with "post_processor" replaced by null (brace-matched; no JSON library). */
static char *without_post_processor(const char *json) {
    const char *key = strstr(json, "\"post_processor\":");
    if (!key) return NULL;
    const char *open = key + strlen("\"post_processor\":"), *p;
    while (*open == ' ') open++;
    int depth = 0, in_string = 0;
    for (p = open; *p; p++) {
        if (in_string) {
            if (*p == '\\') p++;
            else if (*p == '"') in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '{') {
            depth++;
        } else if (*p == '}' && --depth == 0) {
            break;
        }
    }
    if (*open != '{' || *p != '}') return NULL;
    size_t head = (size_t)(open - json), tail = strlen(p + 1);
    char *out = malloc(head + 4 + tail + 1);
    memcpy(out, json, head);
    memcpy(out + head, "null", 4);
    memcpy(out + head + 4, p + 1, tail + 1);
    return out;
}

/* 28. A text the tokenizer gives no tokens (an empty text, with a tokenizer that adds no special tokens) is a row of
 * zeros; the texts beside it embed as they do alone. */
static void test_28_a_text_without_tokens_is_zeros(void) {
    char folder[4096], path[4200], source[4200];
    linked_model(folder, sizeof folder, "no-tokens", model_dir, "tokenizer.json");
    snprintf(source, sizeof source, "%s/tokenizer.json", model_dir);
    snprintf(path, sizeof path, "%s/tokenizer.json", folder);
    char *json = read_file(source, NULL), *edited = without_post_processor(json);
    CHECK(edited != NULL);
    if (edited) write_bytes(path, edited, strlen(edited));
    uform_executor_t *executor;
    uform_model_t *model = open_model(folder, &executor);
    const char *texts[3] = {"", "hello world", ""};
    uform_f32_matrix_t m, alone;
    memset(&m, 0, sizeof m);
    memset(&alone, 0, sizeof alone);
    CHECK_STATUS(uform_model_encode_text(model, texts, 3, NULL, &m), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_encode_text(model, texts + 1, 1, NULL, &alone), UFORM_STATUS_OK);
    CHECK(m.rows == 3 && m.data && alone.data);
    for (size_t c = 0; m.data && c < 384; c++) CHECK(m.data[c] == 0 && m.data[768 + c] == 0);
    CHECK(m.data && alone.data && max_difference(m.data + 384, alone.data, 384) == 0);
    uform_f32_matrix_free(&m);
    uform_f32_matrix_free(&alone);
    close_model(model, executor);
    free(json);
    free(edited);
    unlink(path);
    remove_linked_model(folder);
}

/* `Model.loadRam(model_dir, { executor, precision: bf16 })`. */
static uform_status_t load_bf16(uform_executor_t *executor, uform_model_t **model) {
    return load_ram_as(model_dir, executor, UFORM_PRECISION_BF16, model);
}

/* 29. A bf16 model, on each runnable class with AVX512_BF16, reports bf16 and its weight bytes (two a matrix value,
 * four a vector value, where f32 takes four each), embeds the reference texts at cosine >= 0.999 each without
 * giving f32's floats, and a trainer refuses it; intel-icelake (and a CPU without bf16 at all) refuses bf16 at
 * load. Under valgrind, which offers no AVX-512, the native class's refusal is what is checked. */
static void test_29_bf16_models(void) {
    static const char *bf16_classes[2] = {"amd-genoa", "intel-sapphirerapids"};
    uform_model_t *model = NULL;
    if (available("intel-icelake")) {
        uform_executor_t *icelake = two_thread_executor("intel-icelake", 0);
        CHECK_STATUS(load_bf16(icelake, &model), UFORM_STATUS_UNSUPPORTED);
        CHECK(says("intel-icelake") && says("AVX512_BF16"));
        CHECK_STATUS(uform_executor_free(icelake), UFORM_STATUS_OK);
    }
    if (!available(bf16_classes[0]) && !available(bf16_classes[1])) {
        uform_executor_t *native = two_thread_executor(NULL, 0); /* no bf16 instructions: the native class refuses bf16 */
        CHECK_STATUS(load_bf16(native, &model), UFORM_STATUS_UNSUPPORTED);
        CHECK_STATUS(uform_executor_free(native), UFORM_STATUS_OK);
        return;
    }
    size_t rows = reference_rows();
    uform_executor_t *plain;
    uform_model_t *f32_model = open_model(model_dir, &plain);
    uform_model_description_t f32_d;
    memset(&f32_d, 0, sizeof f32_d);
    CHECK_STATUS(uform_model_describe(f32_model, &f32_d), UFORM_STATUS_OK);
    CHECK(f32_d.precision == UFORM_PRECISION_F32);
    uform_f32_matrix_t exact, got;
    memset(&exact, 0, sizeof exact);
    memset(&got, 0, sizeof got);
    CHECK_STATUS(uform_model_encode_text(f32_model, (const char *const *)ref_texts, rows, NULL, &exact), UFORM_STATUS_OK);
    for (size_t k = 0; k < 2; k++) {
        if (!available(bf16_classes[k])) continue;
        uform_executor_t *executor = two_thread_executor(bf16_classes[k], 0);
        CHECK_STATUS(load_bf16(executor, &model), UFORM_STATUS_OK);
        uform_model_description_t d;
        memset(&d, 0, sizeof d);
        CHECK_STATUS(uform_model_describe(model, &d), UFORM_STATUS_OK);
        CHECK(d.precision == UFORM_PRECISION_BF16);
        uint64_t matrices = 0, vectors = 0;
        for (size_t i = 0; i < d.tensors_count; i++) {
            const uform_tensor_description_t *t = &d.tensors[i];
            uint64_t values = 1;
            for (size_t s = 0; s < t->shape_count; s++) values *= t->shape[s];
            if (strcmp(t->dtype, "F32") != 0) continue;
            if (t->shape_count >= 2) matrices += values;
            else vectors += values;
        }
        CHECK(matrices > 0 && d.weight_bytes == 2 * matrices + 4 * vectors);
        CHECK(f32_d.weight_bytes == 4 * (matrices + vectors) && d.weight_bytes < f32_d.weight_bytes);
        CHECK_STATUS(uform_model_encode_text(model, (const char *const *)ref_texts, rows, NULL, &got), UFORM_STATUS_OK);
        CHECK(got.rows == rows && got.columns == ref_dims && exact.rows == rows);
        for (size_t r = 0; got.data && got.rows == rows && got.columns == ref_dims && r < rows; r++) {
            double similar = cosine(got.data + r * ref_dims, ref_embeddings + r * ref_dims, ref_dims);
            if (similar < 0.999) fprintf(stderr, "    %s row %zu: cosine %.6f\n", bf16_classes[k], r, similar);
            CHECK(similar >= 0.999);
        }
        /* Not f32's floats: the products really are bf16's. */
        CHECK(got.data && exact.data && got.rows == rows && max_difference(got.data, exact.data, rows * ref_dims) > 1e-5f);
        uform_f32_matrix_free(&got);
        uform_trainer_t *trainer = NULL;
        CHECK_STATUS(uform_trainer_contrastive(model, NULL, &trainer), UFORM_STATUS_UNSUPPORTED);
        CHECK(says("precision f32") && trainer == NULL);
        close_model(model, executor);
    }
    uform_f32_matrix_free(&exact);
    close_model(f32_model, plain);
}
int main(void) {
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    model_dir = getenv("UFORM_TEST_MODEL_DIR");
    int have_model = model_dir != NULL && read_reference();
    struct test tests[] = {
        {"test_22_reference_embeddings", test_22_reference_embeddings, 1},
        {"test_23_edge_inputs", test_23_edge_inputs, 1},
        {"test_24_matrix_outlives_model", test_24_matrix_outlives_model, 1},
        {"test_26_batches_within_the_scratch_limit", test_26_batches_within_the_scratch_limit, 1},
        {"test_27_the_model_file_changes_after_loading", test_27_the_model_file_changes_after_loading, 1},
        {"test_28_a_text_without_tokens_is_zeros", test_28_a_text_without_tokens_is_zeros, 1},
        {"test_29_bf16_models", test_29_bf16_models, 1},
    };
    int status = RUN_TESTS_NEEDING(tests, have_model, "UFORM_TEST_MODEL_DIR and UFORM_TEST_REFERENCE");
    for (size_t r = 0; r < ref_rows && ref_texts; r++) free(ref_texts[r]);
    free(ref_texts);
    free(ref_embeddings);
    return status;
}
