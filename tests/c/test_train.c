/*
 * The C Trainer scenarios 26–29 (../../../shared/SCENARIOS.md), against generated/c/uform.h and libuform.
 * Needs UFORM_TEST_MODEL_DIR (the all-MiniLM-L6-v2 folder) and UFORM_TEST_TRAIN_REFERENCE (the training fixture,
 * flattened by tests/c/flatten_train_reference.py); `cargo xtask test c` sets both. UFORM_TEST_TRAIN_STEPS caps how
 * many of the fixture's steps run (valgrind runs one; the held-out check needs them all). Prints one line per test
 * and closes with "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"
#include "train_reference.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *model_dir = NULL;

static double max_diff(const uform_f32_matrix_t *a, const uform_f32_matrix_t *b) {
    if (!a->data || !b->data || a->rows != b->rows || a->columns != b->columns) return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < (size_t)a->rows * a->columns; i++)
        if (fabs((double)a->data[i] - b->data[i]) > worst) worst = fabs((double)a->data[i] - b->data[i]);
    return worst;
}

static void encode(uform_model_t *model, const char *const *texts, size_t count, uform_f32_matrix_t *out) {
    memset(out, 0, sizeof *out);
    CHECK_STATUS(uform_model_encode_text(model, texts, count, NULL, out), UFORM_STATUS_OK);
}

/* A trainer with no warm-up, so its first step moves the weights. */
static uform_trainer_t *plain_trainer(uform_model_t *model) {
    uform_trainer_contrastive_config_t config = UFORM_TRAINER_CONTRASTIVE_CONFIG_INIT;
    config.learning_rate = 1e-4;
    config.dropout = -0.0; /* off */
    config.seed = 7;
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, &config, &trainer), UFORM_STATUS_OK);
    return trainer;
}

/* Step k's batch (`batch`), cut to its first two pairs under valgrind (UFORM_TEST_TRAIN_STEPS), which checks memory:
 * a whole fixture step there takes minutes. */
static size_t grind_batch(size_t k, const char **anchors, const char **positives) {
    size_t n = batch(k, anchors, positives);
    return getenv("UFORM_TEST_TRAIN_STEPS") && n > 2 ? 2 : n;
}

/* 26. The committed fixture: each step's loss within 1e-4 relative, its learning rate equal, its number 1..N; after
 * all its steps the held-out embeddings at cosine >= 0.9999 to the fixture's and away from the untrained ones.
 * Under valgrind (UFORM_TEST_TRAIN_STEPS), which checks memory, not numbers: the first step on two of its pairs, a
 * finite positive loss at the fixture's learning rate (the whole first step took 18 minutes under it). */
static void test_26_reproduces_the_fixture(void) {
    size_t steps = ref_steps;
    const char *cap = getenv("UFORM_TEST_TRAIN_STEPS");
    if (cap && (size_t)atoi(cap) < steps) steps = (size_t)atoi(cap);
    int grind = cap != NULL;
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, &ref_config, &trainer), UFORM_STATUS_OK);
    const char **anchors = calloc(ref_pairs, sizeof *anchors), **positives = calloc(ref_pairs, sizeof *positives);
    for (size_t k = 0; trainer && k < steps; k++) {
        size_t n = grind_batch(k, anchors, positives);
        uform_train_step_t s;
        memset(&s, 0, sizeof s);
        CHECK_STATUS(uform_trainer_step(trainer, anchors, n, positives, n, &s), UFORM_STATUS_OK);
        CHECK(s.step == k + 1);
        int close = fabs(s.learning_rate - ref_lr[k]) <= 1e-9 * fabs(ref_lr[k]);
        if (grind)
            close = close && isfinite(s.loss) && s.loss > 0.0 && isfinite(s.gradient_norm) && s.gradient_norm > 0.0;
        else
            close = close && fabs(s.loss - ref_loss[k]) <= 1e-4 * fabs(ref_loss[k]) &&
                    fabs(s.gradient_norm - ref_grad_norm[k]) <= 1e-3 * ref_grad_norm[k];
        if (!close)
            fprintf(stderr, "    step %zu: loss %.9g (fixture %.9g), lr %.12g (%.12g), gradient norm %.7g (%.7g)\n",
                    k + 1, s.loss, ref_loss[k], s.learning_rate, ref_lr[k], s.gradient_norm, ref_grad_norm[k]);
        CHECK(close);
        CHECK(isfinite(s.seconds) && s.seconds >= 0.0);
    }
    if (steps == ref_steps) {
        uform_f32_matrix_t m;
        encode(model, (const char *const *)ref_held_texts, ref_held, &m);
        CHECK(m.rows == ref_held && m.columns == ref_dims);
        for (size_t r = 0; m.data && m.rows == ref_held && m.columns == ref_dims && r < ref_held; r++) {
            double after = cosine(m.data + r * ref_dims, ref_after + r * ref_dims, ref_dims);
            double before = cosine(m.data + r * ref_dims, ref_before + r * ref_dims, ref_dims);
            if (after < 0.9999 || before >= 0.9995)
                fprintf(stderr, "    held-out %zu: cosine %.6f to the fixture's, %.6f to the untrained\n", r, after, before);
            CHECK(after >= 0.9999 && before < 0.9995);
        }
        uform_f32_matrix_free(&m);
    } else {
        printf("     (%zu of %zu steps; the held-out check needs them all)\n", steps, ref_steps);
    }
    free(anchors);
    free(positives);
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    close_model(model, executor);
}

/* 27. encodeText after a step embeds with the new weights; save writes a folder that loads back to the same
 * embeddings (max abs diff <= 1e-6); the model keeps the trained weights after the trainer's free. */
static void test_27_encode_after_a_step_save_and_load_back(void) {
    char dir[1024], saved[1100];
    scratch(dir, sizeof dir, "save");
    snprintf(saved, sizeof saved, "%s/trained", dir);
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    const char *texts[3] = {ref_held_texts[0], ref_held_texts[1], ref_held_texts[2]};
    uform_f32_matrix_t untrained, stepped, reloaded, kept;
    encode(model, texts, 3, &untrained);
    uform_trainer_t *trainer = plain_trainer(model);
    const char **anchors = calloc(ref_pairs, sizeof *anchors), **positives = calloc(ref_pairs, sizeof *positives);
    size_t n = grind_batch(0, anchors, positives);
    uform_train_step_t s;
    memset(&s, 0, sizeof s);
    CHECK_STATUS(uform_trainer_step(trainer, anchors, n, positives, n, &s), UFORM_STATUS_OK);
    CHECK(s.step == 1 && fabs(s.learning_rate - 1e-4) <= 1e-13);
    encode(model, texts, 3, &stepped);
    CHECK(max_diff(&stepped, &untrained) > 1e-4); /* not the old weights */
    CHECK_STATUS(uform_trainer_save(trainer, saved), UFORM_STATUS_OK);
    CHECK(directory_entries(dir) == 1); /* the folder, and no temporary sibling */
    char file[1200];
    snprintf(file, sizeof file, "%s/model.safetensors", saved);
    struct stat st;
    CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    encode(model, texts, 3, &kept);
    CHECK(max_diff(&kept, &stepped) <= 1e-6);
    uform_model_t *loaded = NULL;
    CHECK_STATUS(load_ram(saved, executor, &loaded), UFORM_STATUS_OK);
    if (loaded) {
        uform_model_description_t d;
        memset(&d, 0, sizeof d);
        CHECK_STATUS(uform_model_describe(loaded, &d), UFORM_STATUS_OK);
        CHECK(d.architecture && strcmp(d.architecture, "bert") == 0);
        encode(loaded, texts, 3, &reloaded);
        double diff = max_diff(&reloaded, &stepped);
        if (diff > 1e-6) fprintf(stderr, "    the saved folder embeds %.3g away from the trained model\n", diff);
        CHECK(diff <= 1e-6);
        uform_f32_matrix_free(&reloaded);
        CHECK_STATUS(uform_model_free(loaded), UFORM_STATUS_OK);
    }
    free(anchors);
    free(positives);
    uform_f32_matrix_free(&untrained);
    uform_f32_matrix_free(&stepped);
    uform_f32_matrix_free(&kept);
    close_model(model, executor);
}

/* 28. Bad configs: each an invalid argument naming its field as C spells it; the model stays usable. */
static void test_28_bad_configs(void) {
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    struct {
        const char *field;
        uform_trainer_contrastive_config_t config;
    } cases[] = {
        {"`config.learning_rate`", {.learning_rate = NAN}},
        {"`config.learning_rate`", {.learning_rate = -NAN}},
        {"`config.learning_rate`", {.learning_rate = INFINITY}},
        {"`config.learning_rate`", {.learning_rate = -1e-4}},
        {"`config.weight_decay`", {.weight_decay = NAN}},
        {"`config.weight_decay`", {.weight_decay = -INFINITY}},
        {"`config.weight_decay`", {.weight_decay = -0.01}},
        {"`config.max_grad_norm`", {.max_grad_norm = NAN}},
        {"`config.max_grad_norm`", {.max_grad_norm = INFINITY}},
        {"`config.max_grad_norm`", {.max_grad_norm = -1}},
        {"`config.scale`", {.scale = NAN}},
        {"`config.scale`", {.scale = INFINITY}},
        {"`config.scale`", {.scale = -0.0}}, /* zero itself */
        {"`config.scale`", {.scale = -20}},
        {"`config.dropout`", {.dropout = NAN}},
        {"`config.dropout`", {.dropout = -0.1}},
        {"`config.dropout`", {.dropout = 1.0}},
        {"`config.dropout`", {.dropout = 1.5}},
        {"`config.max_tokens`", {.max_tokens = 513}},
        {"`config.max_tokens`", {.max_tokens = UINT32_MAX}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cases[i].config.struct_size = sizeof cases[i].config;
        uform_trainer_t *trainer = (uform_trainer_t *)(uintptr_t)0x5e5e5e50;
        CHECK_STATUS(uform_trainer_contrastive(model, &cases[i].config, &trainer), UFORM_STATUS_INVALID_ARGUMENT);
        if (!says(cases[i].field)) fprintf(stderr, "    case %zu: message lacks %s\n", i, cases[i].field);
        CHECK(says(cases[i].field));
        CHECK(trainer == (uform_trainer_t *)(uintptr_t)0x5e5e5e50); /* the out-parameter is untouched */
    }
    /* What is no error: the edges of each range, and zero itself (-0.0) where zero means off. */
    uform_trainer_contrastive_config_t edges[] = {
        {.struct_size = sizeof(uform_trainer_contrastive_config_t), .learning_rate = -0.0, .weight_decay = -0.0,
         .max_grad_norm = -0.0, .dropout = -0.0},
        {.struct_size = sizeof(uform_trainer_contrastive_config_t), .dropout = 0.999, .max_tokens = 512, .scale = 1e-3, .seed = UINT64_MAX},
    };
    for (size_t i = 0; i < 2; i++) {
        uform_trainer_t *trainer = NULL;
        CHECK_STATUS(uform_trainer_contrastive(model, &edges[i], &trainer), UFORM_STATUS_OK);
        CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    }
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &trainer), UFORM_STATUS_OK); /* NULL: every field absent */
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_trainer_contrastive(NULL, NULL, &trainer), UFORM_STATUS_INVALID_ARGUMENT);
    uform_f32_matrix_t m;
    encode(model, (const char *const *)ref_held_texts, 1, &m); /* still usable */
    uform_f32_matrix_free(&m);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK); /* no failed call kept a borrow */
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 28. Bad batches: the documented error naming the argument; a failed step changes no weight and does not count. */
static void test_28_bad_batches(void) {
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    const char *texts[2] = {ref_held_texts[0], ref_held_texts[1]};
    uform_f32_matrix_t untrained, after;
    encode(model, texts, 2, &untrained);
    uform_trainer_t *trainer = plain_trainer(model);
    const char *a[2] = {"an anchor", "another anchor"}, *p[2] = {"a positive", "another positive"};
    const char *bad_utf8[2] = {"fine", "caf\xc3"}, *with_null[2] = {"fine", NULL};
    uform_train_step_t s, before;
    memset(&s, 0x5a, sizeof s);
    memcpy(&before, &s, sizeof before);
    struct {
        const char *const *anchors;
        size_t anchors_count;
        const char *const *positives;
        size_t positives_count;
        const char *needle;
    } cases[] = {
        {a, 2, p, 1, "`positives`"},
        {a, 1, p, 2, "`positives`"},
        {a, 0, p, 0, "`anchors`"},
        {NULL, 0, NULL, 0, "`anchors`"},
        {bad_utf8, 2, p, 2, "`anchors[1]`"},
        {a, 2, bad_utf8, 2, "`positives[1]`"},
        {with_null, 2, p, 2, "`anchors[1]`"},
        {a, 2, with_null, 2, "`positives[1]`"},
        {NULL, 2, p, 2, "`anchors`"},
        {a, 2, NULL, 2, "`positives`"},
        {a, SIZE_MAX, p, 2, "`anchors`"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_STATUS(uform_trainer_step(trainer, cases[i].anchors, cases[i].anchors_count, cases[i].positives,
                                        cases[i].positives_count, &s),
                     UFORM_STATUS_INVALID_ARGUMENT);
        if (!says(cases[i].needle)) fprintf(stderr, "    case %zu: message lacks %s\n", i, cases[i].needle);
        CHECK(says(cases[i].needle));
        CHECK(memcmp(&s, &before, sizeof s) == 0);
    }
    CHECK_STATUS(uform_trainer_step(trainer, a, 2, p, 2, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("`step`"));
    CHECK_STATUS(uform_trainer_step(NULL, a, 2, p, 2, &s), UFORM_STATUS_INVALID_ARGUMENT);
    encode(model, texts, 2, &after);
    CHECK(max_diff(&after, &untrained) == 0.0); /* no failed step changed a weight */
    CHECK_STATUS(uform_trainer_step(trainer, a, 2, p, 2, &s), UFORM_STATUS_OK);
    CHECK(s.step == 1); /* ... or counted */
    uform_f32_matrix_free(&untrained);
    uform_f32_matrix_free(&after);
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    close_model(model, executor);
}

/* 28. save onto an existing file or directory, under a missing parent or a file, NULL, invalid UTF-8: the
 * documented error naming the path, and nothing left behind. */
static void test_28_bad_saves(void) {
    char dir[1024], existing[1100], a_file[1100], missing[1200], below_file[1200], bad_utf8[1200], locked[1100],
        below_locked[1200];
    scratch(dir, sizeof dir, "bad-save");
    snprintf(existing, sizeof existing, "%s/existing", dir);
    snprintf(a_file, sizeof a_file, "%s/a file", dir);
    snprintf(missing, sizeof missing, "%s/missing/trained", dir);
    snprintf(below_file, sizeof below_file, "%s/a file/trained", dir);
    snprintf(bad_utf8, sizeof bad_utf8, "%s/caf\xc3", dir);
    mkdir(existing, 0755);
    FILE *f = fopen(a_file, "w");
    if (f) fclose(f);
    int expected_entries = 2;
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &trainer), UFORM_STATUS_OK);
    const char *exists[2] = {existing, a_file};
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(uform_trainer_save(trainer, exists[i]), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("`directory`") && says("already exists"));
    }
    const char *unwritable[2] = {missing, below_file};
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(uform_trainer_save(trainer, unwritable[i]), UFORM_STATUS_IO);
        CHECK(says(unwritable[i]));
    }
    if (geteuid() != 0) { /* root writes anywhere */
        snprintf(locked, sizeof locked, "%s/locked", dir);
        snprintf(below_locked, sizeof below_locked, "%s/trained", locked);
        mkdir(locked, 0555);
        CHECK_STATUS(uform_trainer_save(trainer, below_locked), UFORM_STATUS_IO);
        CHECK(says(below_locked));
        CHECK(directory_entries(locked) == 0);
        expected_entries++;
    }
    CHECK_STATUS(uform_trainer_save(trainer, NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("`directory`"));
    CHECK_STATUS(uform_trainer_save(trainer, bad_utf8), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK(says("directory") && says("UTF-8"));
    CHECK(directory_entries(dir) == expected_entries); /* no temporary sibling, no half-written folder */
    CHECK(directory_entries(existing) == 0);
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    uform_f32_matrix_t m;
    encode(model, (const char *const *)ref_held_texts, 1, &m); /* still usable */
    uform_f32_matrix_free(&m);
    close_model(model, executor);
}

/* 28. A freed trainer refuses step and save; a second free does nothing; a freed model makes no trainer. */
static void test_28_freed_handles(void) {
    char dir[1024], never[1100];
    scratch(dir, sizeof dir, "freed");
    snprintf(never, sizeof never, "%s/never", dir);
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &trainer), UFORM_STATUS_OK);
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    CHECK_STATUS(uform_trainer_free(trainer), UFORM_STATUS_OK);
    const char *a[1] = {"a"}, *p[1] = {"p"};
    uform_train_step_t s;
    CHECK_STATUS(uform_trainer_step(trainer, a, 1, p, 1, &s), UFORM_STATUS_FREED_HANDLE);
    CHECK(says("freed") && says("Trainer"));
    CHECK_STATUS(uform_trainer_save(trainer, never), UFORM_STATUS_FREED_HANDLE);
    CHECK(directory_entries(dir) == 0);
    CHECK_STATUS(uform_trainer_free(NULL), UFORM_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &trainer), UFORM_STATUS_FREED_HANDLE);
    CHECK(says("freed") && says("Model"));
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 28. A VRAM model is unsupported (only where a GPU can hold one). */
static void test_28_vram_model_is_unsupported(void) {
    const uform_gpu_device_t *gpus = NULL;
    size_t gpu_count = 0;
    if (uform_gpu_devices(&gpus, &gpu_count) != UFORM_STATUS_OK || gpu_count == 0) {
        printf("skip test_28_vram_model_is_unsupported: no GPU (scripts/gpu-check.sh)\n");
        CHECK(1);
        return;
    }
    uint32_t devices[1] = {0};
    uform_executor_for_vram_config_t vram = {.struct_size = sizeof vram, .devices = devices, .devices_count = 1};
    uform_executor_t *executor = NULL;
    CHECK_STATUS(uform_executor_for_vram(&vram, &executor), UFORM_STATUS_OK);
    uform_model_load_vram_config_t config = {.struct_size = sizeof config, .executor = executor, .devices = devices, .devices_count = 1};
    uform_model_t *model = NULL;
    CHECK_STATUS(uform_model_load_vram(model_dir, &config, &model), UFORM_STATUS_OK);
    uform_trainer_t *trainer = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &trainer), UFORM_STATUS_UNSUPPORTED);
    CHECK(says("RAM models"));
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 29. Borrowing: freeing the model under a live trainer is in use, naming how many borrow it; after the trainers'
 * free the model frees. */
static void test_29_borrowing(void) {
    uform_executor_t *executor;
    uform_model_t *model = open_model(model_dir, &executor);
    uform_trainer_t *first = NULL, *second = NULL;
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &first), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_IN_USE);
    CHECK(says("1 trainer borrows it; free it first"));
    CHECK_STATUS(uform_trainer_contrastive(model, NULL, &second), UFORM_STATUS_OK);
    CHECK_STATUS(uform_model_free(model), UFORM_STATUS_IN_USE);
    CHECK(says("2 trainers borrow it"));
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_IN_USE); /* the model still borrows it */
    uform_f32_matrix_t m;
    encode(model, (const char *const *)ref_held_texts, 1, &m); /* refused, not broken */
    uform_f32_matrix_free(&m);
    CHECK_STATUS(uform_trainer_free(second), UFORM_STATUS_OK);
    CHECK_STATUS(uform_trainer_free(first), UFORM_STATUS_OK);
    CHECK_STATUS(uform_trainer_free(first), UFORM_STATUS_OK);
    close_model(model, executor);
}

int main(void) {
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    model_dir = getenv("UFORM_TEST_MODEL_DIR");
    int have_fixture = model_dir != NULL && read_reference(getenv("UFORM_TEST_TRAIN_REFERENCE")) && ref_held >= 3 && ref_steps > 0;
    struct test tests[] = {
        {"test_26_reproduces_the_fixture", test_26_reproduces_the_fixture, 1},
        {"test_27_encode_after_a_step_save_and_load_back", test_27_encode_after_a_step_save_and_load_back, 1},
        {"test_28_bad_configs", test_28_bad_configs, 1},
        {"test_28_bad_batches", test_28_bad_batches, 1},
        {"test_28_bad_saves", test_28_bad_saves, 1},
        {"test_28_freed_handles", test_28_freed_handles, 1},
        {"test_28_vram_model_is_unsupported", test_28_vram_model_is_unsupported, 1},
        {"test_29_borrowing", test_29_borrowing, 1},
    };
    int status = RUN_TESTS_NEEDING(tests, have_fixture, "UFORM_TEST_MODEL_DIR and UFORM_TEST_TRAIN_REFERENCE");
    free_reference();
    return status;
}
