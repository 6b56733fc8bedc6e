/*
 * The training fixture as tests/c/flatten_train_reference.py flattens it (the single-process reference, or one rank's
 * view of a DDP fixture), read by tests/c/test_train.c and tests/c/test_train_mesh.c, which read no JSON.
 */
#ifndef UFORM_TEST_TRAIN_REFERENCE_H
#define UFORM_TEST_TRAIN_REFERENCE_H

#include "suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fixture, as tests/c/flatten_train_reference.py writes it. */
static size_t ref_steps = 0, ref_pairs = 0, ref_held = 0, ref_dims = 0;
static uform_trainer_contrastive_config_t ref_config = UFORM_TRAINER_CONTRASTIVE_CONFIG_INIT;
static char **ref_anchors = NULL, **ref_positives = NULL, **ref_held_texts = NULL;
static double *ref_loss = NULL, *ref_lr = NULL, *ref_grad_norm = NULL;
static size_t *ref_batch = NULL, *ref_batch_size = NULL; /* ref_batch[k * ref_pairs + j] */
static float *ref_before = NULL, *ref_after = NULL;

static char *read_hex(FILE *f) {
    static char hex[1 << 16];
    if (fscanf(f, "%65535s", hex) != 1) return NULL;
    size_t n = strcmp(hex, "-") == 0 ? 0 : strlen(hex) / 2;
    char *text = calloc(n + 1, 1);
    for (size_t i = 0; i < n; i++) text[i] = (char)(hex_value(hex[2 * i]) * 16 + hex_value(hex[2 * i + 1]));
    return text;
}

static int read_reference(const char *path) {
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return 0;
    unsigned long long seed = 0;
    double dropout = 0;
    int ok = fscanf(f, "%zu %zu %zu %zu", &ref_steps, &ref_pairs, &ref_held, &ref_dims) == 4 &&
             fscanf(f, "%lf %lf %u %u %lf %lf %lf %llu", &ref_config.learning_rate, &ref_config.weight_decay,
                    &ref_config.warmup_steps, &ref_config.total_steps, &ref_config.max_grad_norm, &ref_config.scale,
                    &dropout, &seed) == 8;
    /* A dropout of 0 is "off", which C spells -0.0 (a zero field is absent: the model's own dropout). */
    ref_config.dropout = dropout == 0.0 ? -0.0 : dropout;
    ref_config.seed = (uint64_t)seed;
    ref_anchors = calloc(ref_pairs, sizeof *ref_anchors);
    ref_positives = calloc(ref_pairs, sizeof *ref_positives);
    for (size_t i = 0; ok && i < ref_pairs; i++) {
        ref_anchors[i] = read_hex(f);
        ref_positives[i] = read_hex(f);
        ok = ref_anchors[i] && ref_positives[i];
    }
    ref_loss = calloc(ref_steps, sizeof *ref_loss);
    ref_lr = calloc(ref_steps, sizeof *ref_lr);
    ref_grad_norm = calloc(ref_steps, sizeof *ref_grad_norm);
    ref_batch_size = calloc(ref_steps, sizeof *ref_batch_size);
    ref_batch = calloc(ref_steps * ref_pairs, sizeof *ref_batch);
    for (size_t k = 0; ok && k < ref_steps; k++) {
        ok = fscanf(f, "%lf %lf %lf %zu", &ref_loss[k], &ref_lr[k], &ref_grad_norm[k], &ref_batch_size[k]) == 4 &&
             ref_batch_size[k] <= ref_pairs;
        for (size_t j = 0; ok && j < ref_batch_size[k]; j++)
            ok = fscanf(f, "%zu", &ref_batch[k * ref_pairs + j]) == 1 && ref_batch[k * ref_pairs + j] < ref_pairs;
    }
    ref_held_texts = calloc(ref_held, sizeof *ref_held_texts);
    ref_before = calloc(ref_held * ref_dims, sizeof *ref_before);
    ref_after = calloc(ref_held * ref_dims, sizeof *ref_after);
    for (size_t r = 0; ok && r < ref_held; r++) {
        ok = (ref_held_texts[r] = read_hex(f)) != NULL;
        for (size_t c = 0; ok && c < ref_dims; c++) ok = fscanf(f, "%f", &ref_before[r * ref_dims + c]) == 1;
        for (size_t c = 0; ok && c < ref_dims; c++) ok = fscanf(f, "%f", &ref_after[r * ref_dims + c]) == 1;
    }
    fclose(f);
    return ok;
}

static void free_reference(void) {
    for (size_t i = 0; ref_anchors && i < ref_pairs; i++) free(ref_anchors[i]), free(ref_positives[i]);
    for (size_t r = 0; ref_held_texts && r < ref_held; r++) free(ref_held_texts[r]);
    free(ref_anchors), free(ref_positives), free(ref_held_texts);
    free(ref_loss), free(ref_lr), free(ref_grad_norm), free(ref_batch), free(ref_batch_size);
    free(ref_before), free(ref_after);
}

/* Step k's anchors and positives (pointers into the fixture), as its `steps[k]` lists them. */
static size_t batch(size_t k, const char **anchors, const char **positives) {
    for (size_t j = 0; j < ref_batch_size[k]; j++) {
        anchors[j] = ref_anchors[ref_batch[k * ref_pairs + j]];
        positives[j] = ref_positives[ref_batch[k * ref_pairs + j]];
    }
    return ref_batch_size[k];
}

#endif
