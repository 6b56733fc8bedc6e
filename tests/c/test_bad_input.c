/*
 * Bad input to every public function of uform.h: a table of cases, each calling one function with one bad value
 * and everything else valid. Every case must return its documented status, with a message that names the
 * argument (and the value, where there is one), leave its out-parameters untouched, and never crash. Run natively
 * and under valgrind (0 errors, 0 leaks) by `cargo xtask test c`. Prints each failing case and closes with
 * "bad input: N cases, N passed, N failed".
 *
 * What C allows and what it gives, by kind of parameter:
 * - handles: NULL is an invalid argument; a freed handle, a pointer to memory that is not a handle, a misaligned
 *   copy of a live handle, a live handle of the other class, all-ones and 1 are a freed-handle error (the header:
 *   "a handle already freed, or never made by UForm"); freeing a freed handle does nothing.
 * - out-parameters: NULL is an invalid argument, and nothing is written through the others.
 * - option and config structs: NULL means every field absent; a zero field means absent.
 * - enums: a value outside the enum is an invalid argument (`uform_status_name` and `uform_gpu_class_name` return
 *   NULL instead, as documented).
 * - arrays: NULL with a count, or a count no array can have (SIZE_MAX), is an invalid argument; any pointer with
 *   a zero count is absent. (A real pointer with a plausible count larger than its array is undefined behaviour
 *   the library cannot detect, so it is not a case.)
 * - counts: UINT32_MAX / UINT64_MAX in every integer field.
 * - strings: not UTF-8, empty, very long, and for the mesh directory a path with "..", a file, a path below a file,
 *   and a missing path; for a trainer's save, a path that exists (a file or a directory), below a file, missing.
 * - doubles (the trainer's config): NaN (either sign), infinities, negatives, and -0.0 where zero itself is refused;
 *   +0.0 is absent, as every zero field is.
 * The Trainer cases need the test model (UFORM_TEST_MODEL_DIR, set by `cargo xtask test c`).
 * The three functions without parameters (uform_last_error_message, uform_capabilities_compiled,
 * uform_capabilities_available) are checked after the table: never NULL, whatever failed before.
 */
#define _POSIX_C_SOURCE 200809L
#include <uform.h>

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum function {
    MESH_BOOTSTRAP,
    MESH_DESCRIBE,
    MESH_FREE,
    EXECUTOR_FOR_RAM,
    EXECUTOR_FOR_VRAM,
    EXECUTOR_ON_POOL,
    EXECUTOR_DRAIN,
    EXECUTOR_FREE,
    GPU_DEVICES,
    MESH_OPTIONS_FROM_ENVIRONMENT,
    STATUS_NAME,
    GPU_CLASS_NAME,
    TRAINER_CONTRASTIVE,
    TRAINER_STEP,
    TRAINER_SAVE,
    TRAINER_FREE,
};

static const char *const function_names[] = {
    "uform_mesh_bootstrap",   "uform_mesh_describe",   "uform_mesh_free",     "uform_executor_for_ram",
    "uform_executor_for_vram", "uform_executor_on_pool", "uform_executor_drain", "uform_executor_free",
    "uform_gpu_devices",      "uform_mesh_options_from_environment", "uform_status_name", "uform_gpu_class_name",
    "uform_trainer_contrastive", "uform_trainer_step", "uform_trainer_save", "uform_trainer_free",
};

/* The executor or mesh handle a case passes. */
enum handle { LIVE, NULL_HANDLE, FREED, FOREIGN, MISALIGNED, OTHER_CLASS, ALL_ONES, ONE };

/* Which out-parameters a case passes as NULL. */
enum { FIRST_OUT_NULL = 1, SECOND_OUT_NULL = 2 };

struct bad_case {
    enum function function;
    const char *what; /* the bad value, as the report names it */
    enum handle handle;
    int null_out;
    int with_config; /* pass the struct below for the function's options or config, else NULL */
    uform_mesh_options_t options;
    uform_executor_for_ram_config_t ram;
    uform_executor_for_vram_config_t vram;
    uform_executor_on_pool_config_t pool_config;
    uform_trainer_contrastive_config_t train;
    const char *const *anchors, *const *positives; /* the step's batch; NULL: one valid pair */
    size_t anchors_count, positives_count;
    const char *path; /* the save's directory */
    int32_t number; /* mood, status or GPU class */
    uintptr_t pool;
    int expected; /* a uform_status_t, or RETURNS_NULL for the two functions that return a string */
    int gpus_differ; /* on a machine with GPUs the outcome is expected_with_gpus instead */
    int expected_with_gpus;
    const char *needles[3];  /* the message names each of these */
};

enum { RETURNS_NULL = 100 };

/* Paths and long strings, built in main before the table is used (the table holds their addresses). */
static char dir[1024], dir_dotdot[1100], dir_file[1100], dir_below_file[1100], dir_missing[1100];
static char long_path[6000], long_name[300], long_class[4000];
static const uint32_t domain_max[1] = {UINT32_MAX};
static const uint32_t device_max[1] = {UINT32_MAX};
static const uint32_t device_zero[2] = {0, 1};
static const uint32_t one_domain[1] = {0};
static struct { long words[4]; } foreign_object; /* memory UForm never made a handle of */
static char save_missing[1200], save_below_file[1200], save_not_utf8[1200];
static const char *const pair_a[2] = {"an anchor", "another anchor"}, *const pair_p[2] = {"a positive", "another positive"};
static const char *const text_not_utf8[2] = {"fine", "caf\xc3"}, *const text_null[2] = {"fine", NULL};

#define STATUS(x) UFORM_STATUS_##x
#define PEERS .host_domain_index = 0, .host_domain_count = 2, .timeout_seconds = 1
#define WITH_GPUS(s) .gpus_differ = 1, .expected_with_gpus = (s)
#define TRAIN(...) .with_config = 1, .train = {.struct_size = sizeof(uform_trainer_contrastive_config_t), __VA_ARGS__}
#define BATCH(a, na, p, np) .anchors = (a), .anchors_count = (na), .positives = (p), .positives_count = (np)

static const struct bad_case cases[] = {
    /* Executor handles, wherever an executor is passed. */
    {.function = MESH_BOOTSTRAP, .what = "NULL executor", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`executor`", "NULL"}},
    {.function = MESH_BOOTSTRAP, .what = "freed executor", .handle = FREED, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "freed Executor"}},
    {.function = MESH_BOOTSTRAP, .what = "foreign pointer as executor", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = MESH_BOOTSTRAP, .what = "misaligned executor", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = MESH_BOOTSTRAP, .what = "a mesh as executor", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "as an Executor handle"}},
    {.function = MESH_BOOTSTRAP, .what = "all-ones executor", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "0xffffffffffffffff"}},
    {.function = MESH_BOOTSTRAP, .what = "executor 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "0x1"}},
    {.function = EXECUTOR_DRAIN, .what = "NULL executor", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`executor`", "NULL"}},
    {.function = EXECUTOR_DRAIN, .what = "freed executor", .handle = FREED, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "freed Executor"}},
    {.function = EXECUTOR_DRAIN, .what = "foreign pointer as executor", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_DRAIN, .what = "misaligned executor", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_DRAIN, .what = "a mesh as executor", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "as an Executor handle"}},
    {.function = EXECUTOR_DRAIN, .what = "all-ones executor", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_DRAIN, .what = "executor 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_FREE, .what = "NULL executor", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`executor`", "NULL"}},
    {.function = EXECUTOR_FREE, .what = "freed executor (a second free does nothing)", .handle = FREED, .expected = STATUS(OK)},
    {.function = EXECUTOR_FREE, .what = "foreign pointer as executor", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_FREE, .what = "misaligned executor", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_FREE, .what = "a mesh as executor", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "as an Executor handle"}},
    {.function = EXECUTOR_FREE, .what = "all-ones executor", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},
    {.function = EXECUTOR_FREE, .what = "executor 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`executor`", "never handed out"}},

    /* Trainer handles, and the model a trainer is made for. */
    {.function = TRAINER_CONTRASTIVE, .what = "NULL model", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`model`", "NULL"}},
    {.function = TRAINER_CONTRASTIVE, .what = "freed model", .handle = FREED, .expected = STATUS(FREED_HANDLE), .needles = {"`model`", "freed Model"}},
    {.function = TRAINER_CONTRASTIVE, .what = "foreign pointer as model", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`model`", "never handed out"}},
    {.function = TRAINER_CONTRASTIVE, .what = "misaligned model", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`model`", "never handed out"}},
    {.function = TRAINER_CONTRASTIVE, .what = "an executor as model", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`model`", "as a Model handle"}},
    {.function = TRAINER_CONTRASTIVE, .what = "all-ones model", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`model`", "never handed out"}},
    {.function = TRAINER_CONTRASTIVE, .what = "model 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`model`", "never handed out"}},
    {.function = TRAINER_STEP, .what = "NULL trainer", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`trainer`", "NULL"}},
    {.function = TRAINER_STEP, .what = "freed trainer", .handle = FREED, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "freed Trainer"}},
    {.function = TRAINER_STEP, .what = "foreign pointer as trainer", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_STEP, .what = "misaligned trainer", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_STEP, .what = "an executor as trainer", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "as a Trainer handle"}},
    {.function = TRAINER_STEP, .what = "all-ones trainer", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_STEP, .what = "trainer 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_SAVE, .what = "NULL trainer", .handle = NULL_HANDLE, .path = "/nonexistent/x", .expected = STATUS(INVALID_ARGUMENT), .needles = {"`trainer`", "NULL"}},
    {.function = TRAINER_SAVE, .what = "freed trainer", .handle = FREED, .path = save_missing, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "freed Trainer"}},
    {.function = TRAINER_SAVE, .what = "foreign pointer as trainer", .handle = FOREIGN, .path = save_missing, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_SAVE, .what = "misaligned trainer", .handle = MISALIGNED, .path = save_missing, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_SAVE, .what = "an executor as trainer", .handle = OTHER_CLASS, .path = save_missing, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "as a Trainer handle"}},
    {.function = TRAINER_SAVE, .what = "all-ones trainer", .handle = ALL_ONES, .path = save_missing, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_FREE, .what = "NULL trainer", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`trainer`", "NULL"}},
    {.function = TRAINER_FREE, .what = "freed trainer (a second free does nothing)", .handle = FREED, .expected = STATUS(OK)},
    {.function = TRAINER_FREE, .what = "foreign pointer as trainer", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_FREE, .what = "misaligned trainer", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_FREE, .what = "an executor as trainer", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "as a Trainer handle"}},
    {.function = TRAINER_FREE, .what = "trainer 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`trainer`", "never handed out"}},
    {.function = TRAINER_CONTRASTIVE, .what = "NULL trainer out-parameter", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`trainer`", "NULL"}},
    {.function = TRAINER_STEP, .what = "NULL step out-parameter", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`step`", "NULL"}},

    /* Trainer config: every double NaN (either sign), infinite or negative; scale zero itself; counts out of range. */
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate NaN", TRAIN(.learning_rate = NAN), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.learning_rate`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate -NaN", TRAIN(.learning_rate = -NAN), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.learning_rate`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate +inf", TRAIN(.learning_rate = INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.learning_rate`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate -inf", TRAIN(.learning_rate = -INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.learning_rate`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate -1e-4", TRAIN(.learning_rate = -1e-4), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.learning_rate`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate -DBL_MIN", TRAIN(.learning_rate = -2.2250738585072014e-308), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.learning_rate`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate DBL_MAX", TRAIN(.learning_rate = 1.7976931348623157e308), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "learning_rate -0.0 (zero itself)", TRAIN(.learning_rate = -0.0), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "weight_decay NaN", TRAIN(.weight_decay = NAN), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.weight_decay`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "weight_decay +inf", TRAIN(.weight_decay = INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.weight_decay`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "weight_decay -inf", TRAIN(.weight_decay = -INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.weight_decay`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "weight_decay -0.01", TRAIN(.weight_decay = -0.01), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.weight_decay`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "max_grad_norm NaN", TRAIN(.max_grad_norm = NAN), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.max_grad_norm`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "max_grad_norm +inf", TRAIN(.max_grad_norm = INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.max_grad_norm`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "max_grad_norm -1", TRAIN(.max_grad_norm = -1.0), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.max_grad_norm`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "max_grad_norm -0.0 (clipping off)", TRAIN(.max_grad_norm = -0.0), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "scale NaN", TRAIN(.scale = NAN), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.scale`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "scale +inf", TRAIN(.scale = INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.scale`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "scale -0.0 (zero itself)", TRAIN(.scale = -0.0), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.scale`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "scale -20", TRAIN(.scale = -20.0), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.scale`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "dropout NaN", TRAIN(.dropout = NAN), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.dropout`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "dropout -0.1", TRAIN(.dropout = -0.1), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.dropout`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "dropout 1", TRAIN(.dropout = 1.0), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.dropout`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "dropout +inf", TRAIN(.dropout = INFINITY), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.dropout`"}},
    {.function = TRAINER_CONTRASTIVE, .what = "dropout -0.0 (off)", TRAIN(.dropout = -0.0), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "max_tokens 513", TRAIN(.max_tokens = 513), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.max_tokens`", "513"}},
    {.function = TRAINER_CONTRASTIVE, .what = "max_tokens UINT32_MAX", TRAIN(.max_tokens = UINT32_MAX), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.max_tokens`", "4294967295"}},
    {.function = TRAINER_CONTRASTIVE, .what = "max_tokens 512", TRAIN(.max_tokens = 512), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "warmup_steps, total_steps UINT32_MAX", TRAIN(.warmup_steps = UINT32_MAX, .total_steps = UINT32_MAX), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "seed UINT64_MAX", TRAIN(.seed = UINT64_MAX), .expected = STATUS(OK)},
    {.function = TRAINER_CONTRASTIVE, .what = "struct_size 4097", .with_config = 1, .train = {.struct_size = 4097}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"struct_size"}},

    /* Trainer.step: the batch. */
    {.function = TRAINER_STEP, .what = "positives one short", BATCH(pair_a, 2, pair_p, 1), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`positives`"}},
    {.function = TRAINER_STEP, .what = "empty batch", BATCH(pair_a, 0, pair_p, 0), .expected = STATUS(INVALID_ARGUMENT), .needles = {"`anchors`"}},
    {.function = TRAINER_STEP, .what = "anchors NULL with count 2", BATCH(NULL, 2, pair_p, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"anchors", "NULL"}},
    {.function = TRAINER_STEP, .what = "positives NULL with count 2", BATCH(pair_a, 2, NULL, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"positives", "NULL"}},
    {.function = TRAINER_STEP, .what = "anchors count SIZE_MAX", BATCH(pair_a, SIZE_MAX, pair_p, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"anchors", "larger than any array"}},
    {.function = TRAINER_STEP, .what = "anchors[1] not UTF-8", BATCH(text_not_utf8, 2, pair_p, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"anchors[1]", "UTF-8"}},
    {.function = TRAINER_STEP, .what = "positives[1] not UTF-8", BATCH(pair_a, 2, text_not_utf8, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"positives[1]", "UTF-8"}},
    {.function = TRAINER_STEP, .what = "anchors[1] NULL", BATCH(text_null, 2, pair_p, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"anchors[1]"}},
    {.function = TRAINER_STEP, .what = "positives[1] NULL", BATCH(pair_a, 2, text_null, 2), .expected = STATUS(INVALID_ARGUMENT), .needles = {"positives[1]"}},

    /* Trainer.save: the directory. */
    {.function = TRAINER_SAVE, .what = "directory NULL", .path = NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`directory`", "NULL"}},
    {.function = TRAINER_SAVE, .what = "directory exists", .path = dir, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`directory`", "already exists"}},
    {.function = TRAINER_SAVE, .what = "directory is a file", .path = dir_file, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`directory`", "already exists"}},
    {.function = TRAINER_SAVE, .what = "parent missing", .path = save_missing, .expected = STATUS(IO), .needles = {save_missing}},
    {.function = TRAINER_SAVE, .what = "parent is a file", .path = save_below_file, .expected = STATUS(IO), .needles = {save_below_file}},
    {.function = TRAINER_SAVE, .what = "directory not UTF-8", .path = save_not_utf8, .expected = STATUS(INVALID_ARGUMENT), .needles = {"directory", "UTF-8"}},

    /* Mesh handles. */
    {.function = MESH_DESCRIBE, .what = "NULL mesh", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mesh`", "NULL"}},
    {.function = MESH_DESCRIBE, .what = "freed mesh", .handle = FREED, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "freed Mesh"}},
    {.function = MESH_DESCRIBE, .what = "foreign pointer as mesh", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_DESCRIBE, .what = "misaligned mesh", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_DESCRIBE, .what = "an executor as mesh", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "as a Mesh handle"}},
    {.function = MESH_DESCRIBE, .what = "all-ones mesh", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_DESCRIBE, .what = "mesh 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_FREE, .what = "NULL mesh", .handle = NULL_HANDLE, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mesh`", "NULL"}},
    {.function = MESH_FREE, .what = "freed mesh (a second free does nothing)", .handle = FREED, .expected = STATUS(OK)},
    {.function = MESH_FREE, .what = "foreign pointer as mesh", .handle = FOREIGN, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_FREE, .what = "misaligned mesh", .handle = MISALIGNED, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_FREE, .what = "an executor as mesh", .handle = OTHER_CLASS, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "as a Mesh handle"}},
    {.function = MESH_FREE, .what = "all-ones mesh", .handle = ALL_ONES, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},
    {.function = MESH_FREE, .what = "mesh 1", .handle = ONE, .expected = STATUS(FREED_HANDLE), .needles = {"`mesh`", "never handed out"}},

    /* Out-parameters. */
    {.function = MESH_BOOTSTRAP, .what = "NULL mesh out-parameter", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mesh`", "NULL"}},
    {.function = MESH_DESCRIBE, .what = "NULL description", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`description`", "NULL"}},
    {.function = EXECUTOR_FOR_RAM, .what = "NULL executor out-parameter", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`executor`", "NULL"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "NULL executor out-parameter", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`executor`", "NULL"}},
    {.function = EXECUTOR_ON_POOL, .what = "NULL executor out-parameter", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`executor`", "NULL"}},
    {.function = GPU_DEVICES, .what = "NULL devices", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`devices`", "NULL"}},
    {.function = GPU_DEVICES, .what = "NULL devices_count", .null_out = SECOND_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`devices_count`", "NULL"}},
    {.function = GPU_DEVICES, .what = "NULL devices and devices_count", .null_out = FIRST_OUT_NULL | SECOND_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`devices`", "NULL"}},
    {.function = MESH_OPTIONS_FROM_ENVIRONMENT, .what = "NULL options", .null_out = FIRST_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`options`", "NULL"}},
    {.function = MESH_OPTIONS_FROM_ENVIRONMENT, .what = "NULL found", .null_out = SECOND_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`found`", "NULL"}},
    {.function = MESH_OPTIONS_FROM_ENVIRONMENT, .what = "NULL options and found", .null_out = FIRST_OUT_NULL | SECOND_OUT_NULL, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`options`", "NULL"}},

    /* NULL option and config structs mean every field absent. */
    {.function = MESH_BOOTSTRAP, .what = "NULL options (a mesh of one)", .expected = STATUS(OK)},
    {.function = EXECUTOR_FOR_RAM, .what = "NULL config", .expected = STATUS(OK)},
    {.function = EXECUTOR_FOR_VRAM, .what = "NULL config", .expected = STATUS(UNAVAILABLE), WITH_GPUS(STATUS(OK)), .needles = {"`gpu_devices()`"}},
    {.function = EXECUTOR_ON_POOL, .what = "NULL config", .pool = 0x1000, .expected = STATUS(UNSUPPORTED), .needles = {"0x1000"}},

    /* Enum values outside the enum, and out-of-range ids. */
    {.function = EXECUTOR_DRAIN, .what = "mood -1", .number = -1, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mood`", "-1", "uform_mood_t"}},
    {.function = EXECUTOR_DRAIN, .what = "mood 2", .number = 2, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mood`", "2"}},
    {.function = EXECUTOR_DRAIN, .what = "mood INT32_MAX", .number = INT32_MAX, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mood`", "2147483647"}},
    {.function = EXECUTOR_DRAIN, .what = "mood INT32_MIN", .number = INT32_MIN, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`mood`", "-2147483648"}},
    {.function = STATUS_NAME, .what = "status -1", .number = -1, .expected = RETURNS_NULL},
    {.function = STATUS_NAME, .what = "status 12", .number = 12, .expected = RETURNS_NULL},
    {.function = STATUS_NAME, .what = "status INT32_MAX", .number = INT32_MAX, .expected = RETURNS_NULL},
    {.function = STATUS_NAME, .what = "status INT32_MIN", .number = INT32_MIN, .expected = RETURNS_NULL},
    {.function = GPU_CLASS_NAME, .what = "GPU class -1", .number = -1, .expected = RETURNS_NULL},
    {.function = GPU_CLASS_NAME, .what = "GPU class 1 << 20", .number = 1 << 20, .expected = RETURNS_NULL},
    {.function = GPU_CLASS_NAME, .what = "GPU class INT32_MAX", .number = INT32_MAX, .expected = RETURNS_NULL},
    {.function = GPU_CLASS_NAME, .what = "GPU class INT32_MIN", .number = INT32_MIN, .expected = RETURNS_NULL},

    /* RAM executor config. */
    {.function = EXECUTOR_FOR_RAM, .what = "memory_domains NULL with count 1", .with_config = 1, .ram = {.memory_domains_count = 1}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"memory_domains", "NULL", "1"}},
    {.function = EXECUTOR_FOR_RAM, .what = "memory_domains NULL with count SIZE_MAX", .with_config = 1, .ram = {.memory_domains_count = SIZE_MAX}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"memory_domains", "NULL", "18446744073709551615"}},
    {.function = EXECUTOR_FOR_RAM, .what = "memory_domains with count SIZE_MAX", .with_config = 1, .ram = {.memory_domains = one_domain, .memory_domains_count = SIZE_MAX}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"memory_domains", "18446744073709551615", "larger than any array"}},
    {.function = EXECUTOR_FOR_RAM, .what = "memory_domains with count 0 (absent)", .with_config = 1, .ram = {.memory_domains = domain_max, .threads = 1}, .expected = STATUS(OK)},
    {.function = EXECUTOR_FOR_RAM, .what = "memory_domains {UINT32_MAX}", .with_config = 1, .ram = {.memory_domains = domain_max, .memory_domains_count = 1}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.memory_domains`", "4294967295"}},
    {.function = EXECUTOR_FOR_RAM, .what = "cpu_class empty", .with_config = 1, .ram = {.cpu_class = ""}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.cpu_class`", "\"\""}},
    {.function = EXECUTOR_FOR_RAM, .what = "cpu_class \"no-such-cpu\" (named as C spells it)", .with_config = 1, .ram = {.cpu_class = "no-such-cpu"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.cpu_class`", "no-such-cpu", "unknown CPU class"}},
    {.function = EXECUTOR_FOR_RAM, .what = "cpu_class not UTF-8", .with_config = 1, .ram = {.cpu_class = "intel-\xff\xfe"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"cpu_class", "UTF-8", "byte 6"}},
    {.function = EXECUTOR_FOR_RAM, .what = "cpu_class 3999 bytes", .with_config = 1, .ram = {.cpu_class = long_class}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.cpu_class`", "unknown CPU class", "xxxxxxxx"}},
#if defined(__x86_64__)
    {.function = EXECUTOR_FOR_RAM, .what = "cpu_class of another architecture", .with_config = 1, .ram = {.cpu_class = "arm-neon"}, .expected = STATUS(UNSUPPORTED), .needles = {"`config.cpu_class`", "arm-neon"}},
#endif
    {.function = EXECUTOR_FOR_RAM, .what = "threads UINT32_MAX", .with_config = 1, .ram = {.threads = UINT32_MAX}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"threads", "4294967295", "at most"}},
    {.function = EXECUTOR_FOR_RAM, .what = "deferred_limit UINT32_MAX", .with_config = 1, .ram = {.threads = 1, .deferred_limit = UINT32_MAX}, .expected = STATUS(OK)},

    /* Pool executor. */
    {.function = EXECUTOR_ON_POOL, .what = "pool 0", .pool = 0, .expected = STATUS(UNSUPPORTED), .needles = {"0x0"}},
    {.function = EXECUTOR_ON_POOL, .what = "pool UINTPTR_MAX", .pool = UINTPTR_MAX, .expected = STATUS(UNSUPPORTED), .needles = {"0xffffffffffffffff"}},
    {.function = EXECUTOR_ON_POOL, .what = "memory_domains NULL with count 1", .pool = 0x1000, .with_config = 1, .pool_config = {.memory_domains_count = 1}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"memory_domains", "NULL"}},
    {.function = EXECUTOR_ON_POOL, .what = "cpu_class not UTF-8", .pool = 0x1000, .with_config = 1, .pool_config = {.cpu_class = "\xff"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"cpu_class", "UTF-8"}},
    {.function = EXECUTOR_ON_POOL, .what = "deferred_limit UINT32_MAX", .pool = 0x1000, .with_config = 1, .pool_config = {.deferred_limit = UINT32_MAX}, .expected = STATUS(UNSUPPORTED), .needles = {"0x1000"}},

    /* VRAM executor config: the shape is checked before the GPUs are looked for. */
    {.function = EXECUTOR_FOR_VRAM, .what = "devices NULL with count 2", .with_config = 1, .vram = {.devices_count = 2}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"devices", "NULL", "2"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "devices with count SIZE_MAX", .with_config = 1, .vram = {.devices = device_zero, .devices_count = SIZE_MAX}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"devices", "larger than any array"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "devices {UINT32_MAX}", .with_config = 1, .vram = {.devices = device_max, .devices_count = 1}, .expected = STATUS(UNAVAILABLE), WITH_GPUS(STATUS(INVALID_ARGUMENT)), .needles = {"no GPU"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "streams NULL with count 1", .with_config = 1, .vram = {.streams_count = 1}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"streams", "NULL"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "gpu_class empty", .with_config = 1, .vram = {.gpu_class = ""}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.gpu_class`"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "gpu_class not UTF-8", .with_config = 1, .vram = {.gpu_class = "nvidia-\xc3"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"gpu_class", "UTF-8"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "memory_domains {UINT32_MAX}", .with_config = 1, .vram = {.memory_domains = domain_max, .memory_domains_count = 1}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`config.memory_domains`", "4294967295"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "cpu_class not UTF-8", .with_config = 1, .vram = {.cpu_class = "\x80"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"cpu_class", "UTF-8"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "scratch_limit UINT64_MAX", .with_config = 1, .vram = {.scratch_limit = UINT64_MAX}, .expected = STATUS(UNAVAILABLE), WITH_GPUS(STATUS(OK)), .needles = {"no GPU"}},
    {.function = EXECUTOR_FOR_VRAM, .what = "deferred_limit UINT32_MAX", .with_config = 1, .vram = {.deferred_limit = UINT32_MAX}, .expected = STATUS(UNAVAILABLE), WITH_GPUS(STATUS(OK)), .needles = {"no GPU"}},

    /* Mesh options: numbers. */
    {.function = MESH_BOOTSTRAP, .what = "host_domain_index UINT32_MAX without peers", .with_config = 1, .options = {.host_domain_index = UINT32_MAX}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`options.host_domain_index`", "4294967295"}},
    {.function = MESH_BOOTSTRAP, .what = "host_domain_index equal to the count", .with_config = 1, .options = {.host_domain_index = 2, .host_domain_count = 2, .directory = dir, .job = "j"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"`options.host_domain_index`", "2"}},
    {.function = MESH_BOOTSTRAP, .what = "host_domain_count UINT32_MAX (times out after 1 s)", .with_config = 1, .options = {.host_domain_count = UINT32_MAX, .timeout_seconds = 1, .directory = dir, .job = "huge-count"}, .expected = STATUS(TIMEOUT), .needles = {"[1-4294967294] of 4294967295 never joined"}},
    {.function = MESH_BOOTSTRAP, .what = "gpus_per_multimem_domain UINT32_MAX without peers", .with_config = 1, .options = {.gpus_per_multimem_domain = UINT32_MAX}, .expected = STATUS(OK)},
    {.function = MESH_BOOTSTRAP, .what = "timeout_seconds UINT32_MAX with a missing directory", .with_config = 1, .options = {.host_domain_count = 2, .timeout_seconds = UINT32_MAX, .directory = dir_missing, .job = "j"}, .expected = STATUS(IO), .needles = {dir_missing}},

    /* Mesh options: the directory. */
    {.function = MESH_BOOTSTRAP, .what = "directory NULL with peers", .with_config = 1, .options = {PEERS, .job = "j"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"directory", "required"}},
    {.function = MESH_BOOTSTRAP, .what = "directory empty", .with_config = 1, .options = {PEERS, .directory = "", .job = "j"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"directory", "empty"}},
    {.function = MESH_BOOTSTRAP, .what = "directory not UTF-8", .with_config = 1, .options = {PEERS, .directory = "/tmp/\xff\xfe", .job = "j"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"directory", "UTF-8", "byte 5"}},
    {.function = MESH_BOOTSTRAP, .what = "directory of 5999 bytes", .with_config = 1, .options = {PEERS, .directory = long_path, .job = "j"}, .expected = STATUS(IO), .needles = {"mesh directory", "aaaaaaaa", "too long"}},
    {.function = MESH_BOOTSTRAP, .what = "directory missing", .with_config = 1, .options = {PEERS, .directory = dir_missing, .job = "j"}, .expected = STATUS(IO), .needles = {dir_missing, "No such file"}},
    {.function = MESH_BOOTSTRAP, .what = "directory is a file", .with_config = 1, .options = {PEERS, .directory = dir_file, .job = "j"}, .expected = STATUS(IO), .needles = {dir_file, "Not a directory"}},
    {.function = MESH_BOOTSTRAP, .what = "directory below a file", .with_config = 1, .options = {PEERS, .directory = dir_below_file, .job = "j"}, .expected = STATUS(IO), .needles = {dir_below_file, "Not a directory"}},
    {.function = MESH_BOOTSTRAP, .what = "directory through \"..\" (valid: times out after 1 s)", .with_config = 1, .options = {PEERS, .directory = dir_dotdot, .job = "dotdot"}, .expected = STATUS(TIMEOUT), .needles = {dir_dotdot, "index [1] of 2 never joined"}},

    /* Mesh options: the job. */
    {.function = MESH_BOOTSTRAP, .what = "job NULL with peers", .with_config = 1, .options = {PEERS, .directory = dir}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "required"}},
    {.function = MESH_BOOTSTRAP, .what = "job empty", .with_config = 1, .options = {PEERS, .directory = dir, .job = ""}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "empty"}},
    {.function = MESH_BOOTSTRAP, .what = "job \"\\xff\"", .with_config = 1, .options = {PEERS, .directory = dir, .job = "\xff"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "UTF-8", "byte 0"}},
    {.function = MESH_BOOTSTRAP, .what = "job \".\"", .with_config = 1, .options = {PEERS, .directory = dir, .job = "."}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "\".\""}},
    {.function = MESH_BOOTSTRAP, .what = "job \"..\"", .with_config = 1, .options = {PEERS, .directory = dir, .job = ".."}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "\"..\""}},
    {.function = MESH_BOOTSTRAP, .what = "job with '/'", .with_config = 1, .options = {PEERS, .directory = dir, .job = "../escape"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "'/'", "../escape"}},
    {.function = MESH_BOOTSTRAP, .what = "job with '\\'", .with_config = 1, .options = {PEERS, .directory = dir, .job = "a\\b"}, .expected = STATUS(INVALID_ARGUMENT), .needles = {"job", "'\\\\'"}},
    {.function = MESH_BOOTSTRAP, .what = "job of 299 bytes", .with_config = 1, .options = {PEERS, .directory = dir, .job = long_name}, .expected = STATUS(IO), .needles = {"job directory", "bbbbbbbb", "too long"}},
};

static uform_executor_t *live_executor, *freed_executor;
static uform_mesh_t *live_mesh, *freed_mesh;
static uform_model_t *live_model, *freed_model;
static uform_trainer_t *live_trainer, *freed_trainer;
static int gpus_present;

static void *handle_of(enum handle kind, void *live, void *freed, void *other_class) {
    switch (kind) {
    case LIVE: return live;
    case NULL_HANDLE: return NULL;
    case FREED: return freed;
    case FOREIGN: return &foreign_object;
    case MISALIGNED: return (char *)live + 1;
    case OTHER_CLASS: return other_class;
    case ALL_ONES: return (void *)UINTPTR_MAX;
    case ONE: return (void *)(uintptr_t)1;
    }
    return NULL;
}

static uform_executor_t *executor_of(enum handle kind) {
    return handle_of(kind, live_executor, freed_executor, live_mesh);
}

static uform_mesh_t *mesh_of(enum handle kind) { return handle_of(kind, live_mesh, freed_mesh, live_executor); }

static uform_model_t *model_of(enum handle kind) { return handle_of(kind, live_model, freed_model, live_executor); }

static uform_trainer_t *trainer_of(enum handle kind) {
    return handle_of(kind, live_trainer, freed_trainer, live_executor);
}

static int expected_for(const struct bad_case *c) {
    return gpus_present && c->gpus_differ ? c->expected_with_gpus : c->expected;
}

/* Runs one case; returns its status (or RETURNS_NULL / -2 for the string functions), and sets *untouched to
 * whether every out-parameter not passed as NULL still holds what it held before a failing call. */
static int invoke(const struct bad_case *c, int *untouched) {
    *untouched = 1;
    int first_null = c->null_out & FIRST_OUT_NULL, second_null = c->null_out & SECOND_OUT_NULL;
    uform_executor_t *const executor_sentinel = (uform_executor_t *)(uintptr_t)0x5e5e5e50;
    uform_mesh_t *const mesh_sentinel = (uform_mesh_t *)(uintptr_t)0x5e5e5e50;
    switch (c->function) {
    case MESH_BOOTSTRAP: {
        uform_mesh_t *mesh = mesh_sentinel;
        uform_status_t s =
            uform_mesh_bootstrap(executor_of(c->handle), c->with_config ? &c->options : NULL, first_null ? NULL : &mesh);
        if (s == UFORM_STATUS_OK) return uform_mesh_free(mesh) == UFORM_STATUS_OK ? (int)s : -3;
        *untouched = mesh == mesh_sentinel;
        return s;
    }
    case MESH_DESCRIBE: {
        uform_mesh_description_t description, before;
        memset(&description, 0xa5, sizeof description);
        memcpy(&before, &description, sizeof before);
        uform_status_t s = uform_mesh_describe(mesh_of(c->handle), first_null ? NULL : &description);
        if (s != UFORM_STATUS_OK) *untouched = memcmp(&description, &before, sizeof before) == 0;
        return s;
    }
    case MESH_FREE: return uform_mesh_free(mesh_of(c->handle));
    case EXECUTOR_FOR_RAM:
    case EXECUTOR_FOR_VRAM:
    case EXECUTOR_ON_POOL: {
        uform_executor_t *executor = executor_sentinel;
        uform_executor_t **out = first_null ? NULL : &executor;
        uform_status_t s;
        if (c->function == EXECUTOR_FOR_RAM)
            s = uform_executor_for_ram(c->with_config ? &c->ram : NULL, out);
        else if (c->function == EXECUTOR_FOR_VRAM)
            s = uform_executor_for_vram(c->with_config ? &c->vram : NULL, out);
        else
            s = uform_executor_on_pool(c->pool, c->with_config ? &c->pool_config : NULL, out);
        if (s == UFORM_STATUS_OK) return uform_executor_free(executor) == UFORM_STATUS_OK ? (int)s : -3;
        *untouched = executor == executor_sentinel;
        return s;
    }
    case EXECUTOR_DRAIN: {
        uform_mood_t mood = UFORM_MOOD_PARKED;
        if (c->number != 0) memcpy(&mood, &c->number, sizeof mood); /* any int32, as a C caller can pass it */
        return uform_executor_drain(executor_of(c->handle), mood);
    }
    case EXECUTOR_FREE: return uform_executor_free(executor_of(c->handle));
    case GPU_DEVICES: {
        const uform_gpu_device_t *devices = (const uform_gpu_device_t *)(uintptr_t)0x5e5e5e50;
        size_t count = 12345;
        uform_status_t s = uform_gpu_devices(first_null ? NULL : &devices, second_null ? NULL : &count);
        if (s != UFORM_STATUS_OK) *untouched = devices == (const uform_gpu_device_t *)(uintptr_t)0x5e5e5e50 && count == 12345;
        return s;
    }
    case MESH_OPTIONS_FROM_ENVIRONMENT: {
        uform_mesh_options_t options, before;
        memset(&options, 0xa5, sizeof options);
        memcpy(&before, &options, sizeof before);
        unsigned char found = 0x5a; /* a byte a bool write would change to 0 or 1 */
        uform_status_t s =
            uform_mesh_options_from_environment(first_null ? NULL : &options, second_null ? NULL : (bool *)(void *)&found);
        if (s != UFORM_STATUS_OK) *untouched = memcmp(&options, &before, sizeof before) == 0 && found == 0x5a;
        return s;
    }
    case STATUS_NAME: {
        uform_status_t status;
        memcpy(&status, &c->number, sizeof status);
        return uform_status_name(status) == NULL ? RETURNS_NULL : -2;
    }
    case GPU_CLASS_NAME: return uform_gpu_class_name(c->number) == NULL ? RETURNS_NULL : -2;
    case TRAINER_CONTRASTIVE: {
        uform_trainer_t *const sentinel = (uform_trainer_t *)(uintptr_t)0x5e5e5e50;
        uform_trainer_t *trainer = sentinel;
        uform_status_t s =
            uform_trainer_contrastive(model_of(c->handle), c->with_config ? &c->train : NULL, first_null ? NULL : &trainer);
        if (s == UFORM_STATUS_OK) return uform_trainer_free(trainer) == UFORM_STATUS_OK ? (int)s : -3;
        *untouched = trainer == sentinel;
        return s;
    }
    case TRAINER_STEP: {
        uform_train_step_t step, before;
        memset(&step, 0xa5, sizeof step);
        memcpy(&before, &step, sizeof before);
        int given = c->anchors || c->positives || c->anchors_count || c->positives_count;
        uform_status_t s = uform_trainer_step(trainer_of(c->handle), given ? c->anchors : pair_a, given ? c->anchors_count : 1,
                                              given ? c->positives : pair_p, given ? c->positives_count : 1,
                                              first_null ? NULL : &step);
        if (s != UFORM_STATUS_OK) *untouched = memcmp(&step, &before, sizeof before) == 0;
        return s;
    }
    case TRAINER_SAVE: return uform_trainer_save(trainer_of(c->handle), c->path);
    case TRAINER_FREE: return uform_trainer_free(trainer_of(c->handle));
    }
    return -4;
}

static int entries(const char *path, char *names, size_t size) {
    DIR *d = opendir(path);
    if (!d) return -1;
    int count = 0;
    names[0] = '\0';
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
        count++;
        strncat(names, entry->d_name, size - strlen(names) - 2);
        strcat(names, " ");
    }
    closedir(d);
    return count;
}

int main(void) {
    const char *root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/bad-input-%ld", root, (long)getpid());
    char sub[1100];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(dir_dotdot, sizeof dir_dotdot, "%s/sub/..", dir);
    snprintf(dir_file, sizeof dir_file, "%s/a file", dir);
    snprintf(dir_below_file, sizeof dir_below_file, "%s/a file/below", dir);
    snprintf(dir_missing, sizeof dir_missing, "%s/missing", dir);
    if (mkdir(dir, 0755) != 0 || mkdir(sub, 0755) != 0) {
        perror(dir);
        return 2;
    }
    FILE *file = fopen(dir_file, "w");
    if (!file) {
        perror(dir_file);
        return 2;
    }
    fclose(file);
    memset(long_path, 'a', sizeof long_path - 1);
    memcpy(long_path, "/tmp/", 5);
    memset(long_name, 'b', sizeof long_name - 1);
    memset(long_class, 'x', sizeof long_class - 1);
    snprintf(save_missing, sizeof save_missing, "%s/missing/trained", dir);
    snprintf(save_below_file, sizeof save_below_file, "%s/a file/trained", dir);
    snprintf(save_not_utf8, sizeof save_not_utf8, "%s/caf\xc3", dir);

    const uform_gpu_device_t *devices = NULL;
    size_t device_count = 0;
    if (uform_gpu_devices(&devices, &device_count) != UFORM_STATUS_OK) return 2;
    gpus_present = device_count > 0;
    /* The first executor and the first mesh: before handles of each class were kept apart, both were 0x1000. */
    uform_executor_for_ram_config_t one_thread;
    memset(&one_thread, 0, sizeof one_thread);
    one_thread.threads = 1;
    if (uform_executor_for_ram(&one_thread, &live_executor) != UFORM_STATUS_OK ||
        uform_mesh_bootstrap(live_executor, NULL, &live_mesh) != UFORM_STATUS_OK ||
        uform_executor_for_ram(&one_thread, &freed_executor) != UFORM_STATUS_OK ||
        uform_executor_free(freed_executor) != UFORM_STATUS_OK ||
        uform_mesh_bootstrap(live_executor, NULL, &freed_mesh) != UFORM_STATUS_OK ||
        uform_mesh_free(freed_mesh) != UFORM_STATUS_OK) {
        fprintf(stderr, "cannot set up: %s\n", uform_last_error_message());
        return 2;
    }
    /* The Trainer cases' model (the test model) and trainers, one live and one freed. */
    const char *model_dir = getenv("UFORM_TEST_MODEL_DIR");
    uform_model_load_ram_config_t load = {.struct_size = sizeof load, .executor = live_executor};
    if (!model_dir || uform_model_load_ram(model_dir, &load, &live_model) != UFORM_STATUS_OK ||
        uform_model_load_ram(model_dir, &load, &freed_model) != UFORM_STATUS_OK ||
        uform_model_free(freed_model) != UFORM_STATUS_OK ||
        uform_trainer_contrastive(live_model, NULL, &live_trainer) != UFORM_STATUS_OK ||
        uform_trainer_contrastive(live_model, NULL, &freed_trainer) != UFORM_STATUS_OK ||
        uform_trainer_free(freed_trainer) != UFORM_STATUS_OK) {
        fprintf(stderr, "cannot set up the Trainer cases (UFORM_TEST_MODEL_DIR=%s): %s\n", model_dir ? model_dir : "unset",
                uform_last_error_message());
        return 2;
    }

    size_t total = sizeof cases / sizeof cases[0], passed = 0;
    for (size_t i = 0; i < total; i++) {
        const struct bad_case *c = &cases[i];
        int untouched = 1;
        int expected = expected_for(c);
        int got = invoke(c, &untouched);
        const char *message = uform_last_error_message();
        int ok = got == expected && untouched && message != NULL;
        if (ok && expected != UFORM_STATUS_OK && expected != RETURNS_NULL) {
            ok = message[0] != '\0';
            for (int n = 0; n < 3 && c->needles[n]; n++) ok = ok && strstr(message, c->needles[n]) != NULL;
        }
        if (ok) {
            passed++;
        } else {
            printf("FAIL %s(%s): got %d (%s), expected %d (%s)%s; message: %.600s\n", function_names[c->function],
                   c->what, got, uform_status_name((uform_status_t)got) ? uform_status_name((uform_status_t)got) : "?",
                   expected, uform_status_name((uform_status_t)expected) ? uform_status_name((uform_status_t)expected) : "?",
                   untouched ? "" : ", and an out-parameter was written", message ? message : "(NULL)");
        }
        /* The live handles survive every case. */
        if (uform_executor_drain(live_executor, UFORM_MOOD_PARKED) != UFORM_STATUS_OK) {
            printf("FAIL after %s(%s): the live executor is gone: %s\n", function_names[c->function], c->what,
                   uform_last_error_message());
            passed--;
        }
    }

    /* The functions without parameters answer whatever failed before. */
    int checks_ok = uform_last_error_message() != NULL && uform_capabilities_compiled() != NULL &&
                    uform_capabilities_available() != NULL && uform_capabilities_compiled()[0] != '\0';
    /* No mesh case left anything in the directory: only what the test put there. */
    char names[4096];
    int left = entries(dir, names, sizeof names);
    if (left != 2) {
        printf("FAIL the mesh directory holds %d entries instead of 2: %s\n", left, names);
        checks_ok = 0;
    }
    /* The live trainer's model is in use; after the trainer's free it frees. */
    if (uform_model_free(live_model) != UFORM_STATUS_IN_USE || strstr(uform_last_error_message(), "1 trainer") == NULL) {
        printf("FAIL freeing the model under the live trainer: %s\n", uform_last_error_message());
        checks_ok = 0;
    }
    if (uform_trainer_free(live_trainer) != UFORM_STATUS_OK || uform_model_free(live_model) != UFORM_STATUS_OK ||
        uform_mesh_free(live_mesh) != UFORM_STATUS_OK || uform_executor_free(live_executor) != UFORM_STATUS_OK) {
        printf("FAIL cannot free the live handles: %s\n", uform_last_error_message());
        checks_ok = 0;
    }
    remove(dir_file);
    rmdir(sub);
    rmdir(dir);
    printf("bad input: %zu cases, %zu passed, %zu failed%s\n", total, passed, total - passed,
           checks_ok ? "" : " (and a final check failed)");
    return passed == total && checks_ok ? 0 : 1;
}
