/*
 * The C Model scenarios 18–21 (../../../shared/SCENARIOS.md), against generated/c/uform.h and libuform: loading
 * without a GPU, `describe` exactly, bad files, borrowing. They make their own small safetensors files and need no
 * test model; the encodeText scenarios are in test_encode.c. Prints one line per test and closes with "N passed,
 * N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* A safetensors file: the 8-byte little-endian header length, `header`, then `data_len` bytes of pattern. */
static void write_safetensors(const char *path, const char *header, size_t data_len) {
    size_t header_len = strlen(header);
    size_t total = 8 + header_len + data_len;
    unsigned char *buffer = malloc(total);
    for (int i = 0; i < 8; i++) buffer[i] = (unsigned char)((uint64_t)header_len >> (8 * i));
    memcpy(buffer + 8, header, header_len);
    for (size_t i = 0; i < data_len; i++) buffer[8 + header_len + i] = (unsigned char)(i * 31 + 7);
    write_bytes(path, buffer, total);
    free(buffer);
}

/* 18. The opening example without a GPU: forVram and loadVram are unavailable, with readable messages. */
static void test_18_vram_without_gpu(void) {
    const uform_gpu_device_t *gpus = NULL;
    size_t gpu_count = 0;
    if (uform_gpu_devices(&gpus, &gpu_count) == UFORM_STATUS_OK && gpu_count > 0) {
        printf("skip test_18_vram_without_gpu: a GPU is present (scripts/gpu-check.sh covers loadVram)\n");
        CHECK(1);
        return;
    }
    uint32_t devices[2] = {0, 1};
    uform_executor_for_vram_config_t vram;
    memset(&vram, 0, sizeof vram);
    vram.devices = devices;
    vram.devices_count = 2;
    uform_executor_t *gpu_executor = NULL;
    CHECK_STATUS(uform_executor_for_vram(&vram, &gpu_executor), UFORM_STATUS_UNAVAILABLE);
    CHECK(gpu_executor == NULL);
    CHECK(says("`for_vram`") && says("GPU"));
    char dir[1024], file[1100];
    scratch(dir, sizeof dir, "vram");
    snprintf(file, sizeof file, "%s/model.safetensors", dir);
    write_safetensors(file, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8);
    uform_executor_t *executor = ram_executor();
    uform_model_load_vram_config_t config;
    memset(&config, 0, sizeof config);
    config.executor = executor;
    config.devices = devices;
    config.devices_count = 2;
    uform_model_t *model = NULL;
    CHECK_STATUS(uform_model_load_vram(file, &config, &model), UFORM_STATUS_UNAVAILABLE);
    CHECK(model == NULL);
    CHECK(says("no GPU driver") && says("`Model.load_ram`"));
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK); /* the failed load left no borrow */
}

/* The tensors of test 19, in file order: name, dtype, header shape text, shape, bytes. */
struct tensor_case {
    const char *name, *dtype, *shape_json;
    uint64_t shape[3];
    size_t rank, bytes;
};
static const struct tensor_case tensors19[] = {
    {"encoder.weight", "F32", "[2,3]", {2, 3, 0}, 2, 24}, {"embeddings", "BF16", "[4]", {4, 0, 0}, 1, 8},
    {"position_ids", "I64", "[1,3]", {1, 3, 0}, 2, 24},   {"empty", "U8", "[0]", {0, 0, 0}, 1, 0},
    {"norm.bias", "F16", "[2,2]", {2, 2, 0}, 2, 8},       {"mask", "BOOL", "[3]", {3, 0, 0}, 1, 3},
    {"scale", "F64", "[]", {0, 0, 0}, 0, 8},
};
#define TENSORS19 (sizeof tensors19 / sizeof tensors19[0])

/* Writes tensors19[first..last) as one safetensors file; returns its data length. */
static void write_tensors(const char *path, size_t first, size_t last) {
    char header[4096] = "{\"__metadata__\":{\"format\":\"pt\"}";
    size_t offset = 0;
    for (size_t i = first; i < last; i++) {
        const struct tensor_case *t = &tensors19[i];
        size_t used = strlen(header);
        snprintf(header + used, sizeof header - used, ",\"%s\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[%zu,%zu]}",
                 t->name, t->dtype, t->shape_json, offset, offset + t->bytes);
        offset += t->bytes;
    }
    strcat(header, "}");
    while (strlen(header) % 8 != 0) strcat(header, " ");
    write_safetensors(path, header, offset);
}

static void check_description(uform_model_t *model, const char *path, const char *architecture) {
    uform_model_description_t d;
    memset(&d, 0, sizeof d);
    CHECK_STATUS(uform_model_describe(model, &d), UFORM_STATUS_OK);
    CHECK(d.path && strcmp(d.path, path) == 0);
    CHECK(d.format && strcmp(d.format, "safetensors") == 0);
    CHECK(architecture ? (d.architecture && strcmp(d.architecture, architecture) == 0) : d.architecture == NULL);
    CHECK(d.residency == UFORM_RESIDENCY_RAM);
    CHECK(d.devices_count == 0);
    CHECK(d.tensors_count == TENSORS19);
    uint64_t total = 0;
    for (size_t i = 0; i < d.tensors_count && i < TENSORS19; i++) {
        const uform_tensor_description_t *t = &d.tensors[i];
        CHECK(strcmp(t->name, tensors19[i].name) == 0);
        CHECK(strcmp(t->dtype, tensors19[i].dtype) == 0);
        CHECK(t->shape_count == tensors19[i].rank);
        for (size_t k = 0; k < t->shape_count && k < 3; k++) CHECK(t->shape[k] == tensors19[i].shape[k]);
        CHECK(t->bytes == tensors19[i].bytes);
        total += t->bytes;
    }
    CHECK(d.bytes == total && total == 75);
}

/* 19. A file, its directory, and a sharded pair with its index describe every tensor exactly, in file order. */
static void test_19_describe_exactly(void) {
    char dir[1024], file[1100], config[1100], sharded[1024], first[1100], second[1100], index[1100];
    scratch(dir, sizeof dir, "single");
    snprintf(file, sizeof file, "%s/model.safetensors", dir);
    snprintf(config, sizeof config, "%s/config.json", dir);
    write_tensors(file, 0, TENSORS19);
    write_bytes(config, "{\"model_type\": \"bert\"}", 22);
    uform_executor_t *executor = ram_executor();
    const char *paths[2] = {file, dir};
    for (int i = 0; i < 2; i++) {
        uform_model_t *model = NULL;
        CHECK_STATUS(load_ram(paths[i], executor, &model), UFORM_STATUS_OK);
        if (model) check_description(model, paths[i], "bert");
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    remove(config);
    uform_model_t *model = NULL;
    CHECK_STATUS(load_ram(file, executor, &model), UFORM_STATUS_OK);
    if (model) check_description(model, file, NULL); /* no config.json: no architecture */
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);

    scratch(sharded, sizeof sharded, "sharded");
    snprintf(first, sizeof first, "%s/model-00001-of-00002.safetensors", sharded);
    snprintf(second, sizeof second, "%s/model-00002-of-00002.safetensors", sharded);
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", sharded);
    write_tensors(first, 0, 3);
    write_tensors(second, 3, TENSORS19);
    char map[2048] = "{\"metadata\": {\"total_size\": 75}, \"weight_map\": {";
    for (size_t i = 0; i < TENSORS19; i++) {
        size_t used = strlen(map);
        snprintf(map + used, sizeof map - used, "%s\"%s\": \"model-0000%d-of-00002.safetensors\"", i ? ", " : "",
                 tensors19[i].name, i < 3 ? 1 : 2);
    }
    strcat(map, "}}");
    write_bytes(index, map, strlen(map));
    const char *sharded_paths[2] = {index, sharded};
    for (int i = 0; i < 2; i++) {
        model = NULL;
        CHECK_STATUS(load_ram(sharded_paths[i], executor, &model), UFORM_STATUS_OK);
        if (model) check_description(model, sharded_paths[i], NULL);
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 20. Bad files: each the documented status, the message naming the file (and the tensor where there is one). */
static void test_20_bad_files(void) {
    char dir[1024], path[1200], empty_dir[1024], missing[1200];
    scratch(dir, sizeof dir, "bad");
    uform_executor_t *executor = ram_executor();
    struct {
        const char *name, *header; /* header NULL: write `raw` bytes as they are */
        const char *raw;
        size_t raw_len, data_len;
        const char *needle;
    } cases[] = {
        {"truncated.safetensors", NULL, "\x01\x02\x03", 3, 0, "fewer than the 8-byte header length"},
        {"past.safetensors", NULL, "\x00\x10\x00\x00\x00\x00\x00\x00{}", 10, 0, "runs past the end of the file"},
        {"malformed.safetensors", "{\"a\": {", NULL, 0, 0, "not a JSON object of tensors"},
        {"dtype.safetensors", "{\"w\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", NULL, 0, 4,
         "dtype `F33` is not a safetensors dtype"},
        {"shape.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", NULL, 0, 8,
         "tensor `w`"},
        {"overlap.safetensors",
         "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         NULL, 0, 8, "overlaps tensor `a`"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
        if (cases[i].header)
            write_safetensors(path, cases[i].header, cases[i].data_len);
        else
            write_bytes(path, cases[i].raw, cases[i].raw_len);
        uform_model_t *model = NULL;
        CHECK_STATUS(load_ram(path, executor, &model), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(model == NULL);
        CHECK(says(path));
        if (!says(cases[i].needle)) fprintf(stderr, "    %s: message lacks \"%s\"\n", cases[i].name, cases[i].needle);
        CHECK(says(cases[i].needle));
    }
    /* An index naming a shard that is not there. */
    snprintf(path, sizeof path, "%s/s1.safetensors", dir);
    write_safetensors(path, "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2);
    snprintf(path, sizeof path, "%s/missing.index.json", dir);
    const char *index = "{\"weight_map\": {\"a\": \"s1.safetensors\", \"b\": \"s9.safetensors\"}}";
    write_bytes(path, index, strlen(index));
    uform_model_t *model = NULL;
    CHECK_STATUS(load_ram(path, executor, &model), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("s9.safetensors") && says("does not exist") && says(path));
    /* A directory without weights, and one that does not exist. */
    scratch(empty_dir, sizeof empty_dir, "empty");
    CHECK_STATUS(load_ram(empty_dir, executor, &model), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says(empty_dir) && says("without weights"));
    snprintf(missing, sizeof missing, "%s/not-there", dir);
    CHECK_STATUS(load_ram(missing, executor, &model), UFORM_STATUS_IO);
    CHECK(says(missing));
    CHECK(model == NULL);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK); /* no failed load kept a borrow */
}

/* 21. Borrowing: the executor is in use under a live model; calls on a freed model; NULL arguments; a load naming
 * no executor takes the default one. */
static void test_21_borrowing(void) {
    char dir[1024], file[1100];
    scratch(dir, sizeof dir, "borrow");
    snprintf(file, sizeof file, "%s/m.safetensors", dir);
    write_tensors(file, 0, TENSORS19);
    uform_executor_t *executor = ram_executor();
    uform_model_t *model = NULL;
    /* No config, or one naming no executor: both load on the default executor, freed with the last of them. */
    uform_model_t *defaulted = NULL, *zeroed = NULL;
    CHECK_STATUS(uform_model_load_ram(file, NULL, &defaulted), UFORM_STATUS_OK);
    uform_model_load_ram_config_t no_executor;
    memset(&no_executor, 0, sizeof no_executor);
    CHECK_STATUS(uform_model_load_ram(file, &no_executor, &zeroed), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(defaulted), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(zeroed), UFORM_STATUS_OK);
    CHECK_STATUS(load_ram(NULL, executor, &model), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(load_ram(file, executor, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(model == NULL);
    CHECK_STATUS(load_ram(file, executor, &model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_IN_USE);
    CHECK(says("still borrows"));
    CHECK_STATUS(uform_model_describe(model, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK); /* a second free does nothing */
    uform_model_description_t d;
    CHECK_STATUS(uform_model_describe(model, &d), UFORM_STATUS_FREED_HANDLE);
    CHECK(says("freed") && says("Model"));
    const char *texts[1] = {"hello"};
    uform_f32_matrix_t matrix;
    memset(&matrix, 0, sizeof matrix);
    CHECK_STATUS(uform_model_encode_text(model, texts, 1, NULL, &matrix), UFORM_STATUS_FREED_HANDLE);
    CHECK(matrix.data == NULL);
    CHECK_STATUS(uform_model_describe(NULL, &d), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK); /* the model's free returned the borrow */
    CHECK_STATUS(load_ram(file, executor, &model), UFORM_STATUS_FREED_HANDLE);
    CHECK(says("freed") && says("Executor"));
}

int main(void) {
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    struct test tests[] = {
        {"test_18_vram_without_gpu", test_18_vram_without_gpu, 0},
        {"test_19_describe_exactly", test_19_describe_exactly, 0},
        {"test_20_bad_files", test_20_bad_files, 0},
        {"test_21_borrowing", test_21_borrowing, 0},
    };
    return run_tests(tests, sizeof tests / sizeof tests[0], 1, NULL);
}
