/*
 * The C encodeImage scenarios 36–38 (../../../shared/SCENARIOS.md, issue 32), against generated/c/uform.h and
 * libuform: the random-weight CLIP, CLIP vision-only and SigLIP checkpoints of tests/fixtures/images
 * (UFORM_TEST_IMAGES) against transformers' embeddings of the committed files, of the processor's own crops and its
 * image x text logits, flattened by tests/c/flatten_images.py into UFORM_TEST_IMAGES_REFERENCE; the text-only
 * distilbert of tests/fixtures/families (UFORM_TEST_FAMILIES). `cargo xtask test c` sets all three. The checkpoints
 * are small (64x64 pixels), so every file runs under valgrind too (~15 s): every decoder and every hostile file;
 * UFORM_TEST_ENCODE_ROWS, set only under valgrind, leaves out the resident-size measurement. Prints one line per
 * test and closes with "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *images_root = NULL;

static struct entry entries[64];
static size_t entry_count = 0;

/* Reads UFORM_TEST_IMAGES_REFERENCE; 0 when it cannot. */
static int read_reference(void) {
    return read_entries(getenv("UFORM_TEST_IMAGES_REFERENCE"), entries, 64, &entry_count) && entry_count > 0;
}

/* The entry `model.key`, or NULL (a failed check). */
static const struct entry *entry(const char *model, const char *key) {
    const struct entry *found = find_entry(entries, entry_count, model, key, "UFORM_TEST_IMAGES_REFERENCE");
    if (!found) CHECK(!"the flattened reference holds the entry");
    return found;
}

/* UFORM_TEST_IMAGES/`folder`/`name`'s bytes, as the borrowed buffer `uform_model_encode_image` takes. */
static uform_bytes_t image(const char *folder, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", images_root, folder, name);
    size_t length = 0;
    uint8_t *bytes = (uint8_t *)read_file(path, &length);
    uform_bytes_t b = {bytes, length};
    return b;
}

/* The first `count` names of `names` from `folder`; free with `free_images`. */
static uform_bytes_t *images_of(const char *folder, const struct entry *names, size_t count) {
    uform_bytes_t *images = calloc(count ? count : 1, sizeof *images);
    for (size_t i = 0; i < count; i++) images[i] = image(folder, names->texts[i]);
    return images;
}

static void free_images(uform_bytes_t *images, size_t count) {
    for (size_t i = 0; i < count; i++) free((void *)images[i].data);
    free(images);
}

/* Loads `path` (under UFORM_TEST_IMAGES, or `root` when given) on `executor` at `precision`; NULL on failure. */
static uform_model_t *load(const char *root, const char *name, uform_executor_t *executor, uform_precision_t precision,
                           uform_status_t expected) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root ? root : images_root, name);
    uform_model_t *model = NULL;
    CHECK_STATUS(load_ram_as(path, executor, precision, &model), expected);
    return model;
}

static double dot(const float *a, const float *b, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += (double)a[i] * b[i];
    return sum;
}

/* The worst cosine between `got`'s rows and `want`'s first got->rows rows (-1 when the shapes differ). */
static double worst_cosine(const uform_f32_matrix_t *got, const struct entry *want, size_t rows, const char *what) {
    if (!got->data || !want || got->rows != rows || rows > want->rows || got->columns != want->columns) return -1;
    double worst = 2;
    for (size_t r = 0; r < rows; r++) {
        const float *g = got->data + r * got->columns, *w = want->values + r * want->columns;
        double cosine = dot(g, w, got->columns) / sqrt(dot(g, g, got->columns) * dot(w, w, got->columns));
        if (cosine < worst) worst = cosine;
    }
    printf("     %s: worst cosine %.7f over %zu rows\n", what, worst, rows);
    return worst;
}

/* Every row has unit length within 1e-5. */
static int unit_rows(const uform_f32_matrix_t *m) {
    for (size_t r = 0; m->data && r < m->rows; r++) {
        const float *row = m->data + r * m->columns;
        if (fabs(sqrt(dot(row, row, m->columns)) - 1.0) >= 1e-5) return 0;
    }
    return m->data != NULL || m->rows == 0;
}

/* describe()'s towers are exactly `want` (`count` of them), in order. */
static int towers_are(uform_model_t *model, const char *const *want, size_t count) {
    uform_model_description_t d;
    memset(&d, 0, sizeof d);
    if (uform_model_describe(model, &d) != UFORM_STATUS_OK || d.towers_count != count) return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(d.towers[i], want[i]) != 0) return 0;
    return 1;
}

/* 36. Every checkpoint embeds the committed files as transformers (cosine >= 0.999 per file) and the processor's own
 * crops, the same pixels, at cosine >= 0.9999; rows are normalised by default (NULL options, a zeroed
 * `normalize`: `UFORM_ABSENT`, which C's `false` also is) and with `UFORM_TRUE` (C's `true`), each then the reference's
 * unnormalised row scaled to unit length, and `UFORM_FALSE` gives the unnormalised rows themselves; any other byte is
 * an invalid argument naming the field. describe() gives the family, the towers and the rows' width. */
static void test_36_every_checkpoint_embeds_files_and_crops_as_transformers(void) {
    static const char *names[3] = {"clip", "clip-vision", "siglip"};
    static const char *crops[3] = {"crops/clip", "crops/clip", "crops/siglip"};
    static const char *both[2] = {"text", "image"}, *vision[1] = {"image"};
    uform_executor_t *executor = ram_executor();
    for (size_t k = 0; k < 3; k++) {
        const struct entry *files = entry(names[k], "files"), *embeds = entry(names[k], "image_embeds"),
                           *crop_names = entry(names[k], "crops"), *crop_embeds = entry(names[k], "crop_embeds");
        uform_model_t *model = load(NULL, names[k], executor, UFORM_PRECISION_F32, UFORM_STATUS_OK);
        if (!model || !files || !embeds || !crop_names || !crop_embeds) continue;
        CHECK(files->rows == 13 && embeds->rows == 13 && crop_names->rows == 13 && crop_embeds->rows == 13);
        size_t n = files->rows, columns = embeds->columns;
        uform_bytes_t *images = images_of("files", files, n);
        uform_f32_matrix_t m, set, zeroed, off, raw, refused;
        memset(&m, 0, sizeof m);
        memset(&set, 0, sizeof set);
        memset(&zeroed, 0, sizeof zeroed);
        memset(&off, 0, sizeof off);
        memset(&raw, 0, sizeof raw);
        memset(&refused, 0, sizeof refused);
        CHECK_STATUS(uform_model_encode_image(model, images, n, NULL, &m), UFORM_STATUS_OK);
        CHECK(m.rows == n && m.columns == columns);
        char what[128];
        snprintf(what, sizeof what, "%s from the files", names[k]);
        CHECK(worst_cosine(&m, embeds, n, what) >= 0.999);
        CHECK(unit_rows(&m));
        uform_f32_matrix_free(&m);
        free_images(images, n);

        n = crop_names->rows;
        images = images_of(crops[k], crop_names, n);
        uform_encode_image_options_t options = UFORM_ENCODE_IMAGE_OPTIONS_INIT;
        CHECK_STATUS(uform_model_encode_image(model, images, n, &options, &zeroed), UFORM_STATUS_OK);
        options.normalize = false;
        CHECK_STATUS(uform_model_encode_image(model, images, n, &options, &off), UFORM_STATUS_OK);
        CHECK(off.data && zeroed.data && off.rows == n &&
              memcmp(off.data, zeroed.data, n * columns * sizeof(float)) == 0); /* C's false is absent */
        uform_f32_matrix_free(&off);
        options.normalize = true;
        CHECK(options.normalize == UFORM_TRUE);
        CHECK_STATUS(uform_model_encode_image(model, images, n, &options, &set), UFORM_STATUS_OK);
        CHECK(set.rows == n && set.columns == columns);
        options.normalize = UFORM_FALSE;
        CHECK_STATUS(uform_model_encode_image(model, images, n, &options, &raw), UFORM_STATUS_OK);
        CHECK(raw.rows == n && raw.columns == columns);
        for (size_t r = 0; raw.data && raw.rows == n && raw.columns == columns && r < n; r++) {
            const float *want = crop_embeds->values + r * columns;
            CHECK(max_difference(raw.data + r * columns, want, columns) <= 1e-4f * (float)sqrt(dot(want, want, columns)));
        }
        options.normalize = 3;
        CHECK_STATUS(uform_model_encode_image(model, images, n, &options, &refused), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("EncodeImageOptions.normalize") && says("UFORM_FALSE"));
        CHECK(refused.data == NULL && refused.rows == 0);
        snprintf(what, sizeof what, "%s from the same pixels", names[k]);
        CHECK(worst_cosine(&set, crop_embeds, n, what) >= 0.9999);
        CHECK(unit_rows(&set) && unit_rows(&zeroed));
        CHECK(set.data && zeroed.data && zeroed.rows == n && memcmp(set.data, zeroed.data, n * columns * sizeof(float)) == 0);
        /* Normalising is a scaling of the unnormalised row transformers gives, whose length is not 1. */
        for (size_t r = 0; set.data && set.rows == n && set.columns == columns && r < n; r++) {
            const float *want = crop_embeds->values + r * columns;
            double length = sqrt(dot(want, want, columns));
            CHECK(fabs(length - 1.0) > 1e-3);
            float scaled[64];
            for (size_t c = 0; c < columns && c < 64; c++) scaled[c] = (float)(want[c] / length);
            CHECK(columns <= 64 && max_difference(set.data + r * columns, scaled, columns) <= 1e-4f);
        }
        uform_f32_matrix_free(&set);
        uform_f32_matrix_free(&zeroed);
        uform_f32_matrix_free(&raw);
        free_images(images, n);

        uform_model_description_t d;
        memset(&d, 0, sizeof d);
        CHECK_STATUS(uform_model_describe(model, &d), UFORM_STATUS_OK);
        CHECK(d.family && strcmp(d.family, k == 2 ? "siglip" : "clip") == 0);
        CHECK(d.dimensions == columns);
        CHECK(k == 1 ? towers_are(model, vision, 1) : towers_are(model, both, 2));
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 36. encodeText of an image-text model runs its text tower into the images' space: the reference texts at cosine
 * >= 0.9999, and the image x text logits (exp(logit_scale) * cosine + bias) within 0.02 * exp(logit_scale) of
 * transformers' logits_per_image. Its text tower takes no prompt, prompt name or token limit (unsupported), and
 * keeps fewer `dimensions`, normalised. */
static void test_36_image_text_similarity_matches_logits_per_image(void) {
    static const char *names[2] = {"clip", "siglip"};
    uform_executor_t *executor = ram_executor();
    for (size_t k = 0; k < 2; k++) {
        const struct entry *files = entry(names[k], "files"), *texts = entry(names[k], "texts"),
                           *text_embeds = entry(names[k], "text_embeds"), *logits = entry(names[k], "logits_per_image"),
                           *scale_entry = entry(names[k], "logit_scale");
        const struct entry *bias_entry = k == 1 ? entry(names[k], "logit_bias") : NULL;
        uform_model_t *model = load(NULL, names[k], executor, UFORM_PRECISION_F32, UFORM_STATUS_OK);
        if (!model || !files || !texts || !text_embeds || !logits || !scale_entry || (k == 1 && !bias_entry)) continue;
        size_t n = files->rows, t = texts->rows;
        uform_bytes_t *images = images_of("files", files, n);
        uform_f32_matrix_t im, tx;
        memset(&im, 0, sizeof im);
        memset(&tx, 0, sizeof tx);
        CHECK_STATUS(uform_model_encode_image(model, images, n, NULL, &im), UFORM_STATUS_OK);
        CHECK_STATUS(uform_model_encode_text(model, (const char *const *)texts->texts, t, NULL, &tx), UFORM_STATUS_OK);
        char what[128];
        snprintf(what, sizeof what, "%s texts", names[k]);
        CHECK(worst_cosine(&tx, text_embeds, t, what) >= 0.9999);
        CHECK(unit_rows(&tx));
        double scale = exp(scale_entry->values[0]), bias = bias_entry ? bias_entry->values[0] : 0.0, worst = 0;
        CHECK(logits->rows == files->rows && logits->columns == t);
        int shaped = im.data && tx.data && im.rows == n && tx.rows == t && im.columns == tx.columns &&
                     logits->rows >= n && logits->columns == t;
        CHECK(shaped);
        for (size_t i = 0; shaped && i < n; i++)
            for (size_t j = 0; j < t; j++) {
                double got = scale * dot(im.data + i * im.columns, tx.data + j * tx.columns, im.columns) + bias;
                if (fabs(got - logits->values[i * t + j]) > worst) worst = fabs(got - logits->values[i * t + j]);
            }
        printf("     %s: logits_per_image within %.5f (scale %.2f)\n", names[k], worst, scale);
        CHECK(shaped && worst < 0.02 * scale);
        uform_f32_matrix_free(&im);
        uform_f32_matrix_free(&tx);
        free_images(images, n);

        const char *one[1] = {"a dog"};
        uform_encode_text_options_t refused[3] = {UFORM_ENCODE_TEXT_OPTIONS_INIT, UFORM_ENCODE_TEXT_OPTIONS_INIT,
                                                  UFORM_ENCODE_TEXT_OPTIONS_INIT};
        refused[0].prompt = "query: ";
        refused[1].prompt_name = "query";
        refused[2].max_tokens = 8;
        static const char *fields[3] = {"prompt", "prompt_name", "max_tokens"};
        for (size_t r = 0; r < 3; r++) {
            CHECK_STATUS(uform_model_encode_text(model, one, 1, &refused[r], &tx), UFORM_STATUS_UNSUPPORTED);
            CHECK(says(fields[r]) && tx.data == NULL);
        }
        uform_encode_text_options_t cut = UFORM_ENCODE_TEXT_OPTIONS_INIT;
        cut.dimensions = 8;
        CHECK_STATUS(uform_model_encode_text(model, one, 1, &cut, &tx), UFORM_STATUS_OK);
        CHECK(tx.rows == 1 && tx.columns == 8 && unit_rows(&tx));
        uform_f32_matrix_free(&tx);
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 36. bf16 (issue 33), as test_encode.c's scenario 29 finds it: where the CPU has AVX512_BF16 a bf16 CLIP embeds
 * the committed files at cosine >= 0.999 each without giving f32's floats; elsewhere (and under valgrind, which
 * offers no AVX-512) loading at bf16 is unsupported. */
static void test_36_bf16_reproduces_the_files(void) {
    uform_executor_t *executor = ram_executor();
    if (!available("amd-genoa") && !available("intel-sapphirerapids")) {
        uform_model_t *refused = load(NULL, "clip", executor, UFORM_PRECISION_BF16, UFORM_STATUS_UNSUPPORTED);
        CHECK(refused == NULL);
        CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
        return;
    }
    const struct entry *files = entry("clip", "files"), *embeds = entry("clip", "image_embeds");
    uform_model_t *f32 = load(NULL, "clip", executor, UFORM_PRECISION_F32, UFORM_STATUS_OK),
                  *bf16 = load(NULL, "clip", executor, UFORM_PRECISION_BF16, UFORM_STATUS_OK);
    if (files && embeds && f32 && bf16) {
        size_t n = files->rows;
        uform_bytes_t *images = images_of("files", files, n);
        uform_f32_matrix_t exact, got;
        memset(&exact, 0, sizeof exact);
        memset(&got, 0, sizeof got);
        CHECK_STATUS(uform_model_encode_image(f32, images, n, NULL, &exact), UFORM_STATUS_OK);
        CHECK_STATUS(uform_model_encode_image(bf16, images, n, NULL, &got), UFORM_STATUS_OK);
        CHECK(worst_cosine(&got, embeds, n, "clip bf16 from the files") >= 0.999);
        CHECK(got.data && exact.data && got.rows == n && exact.rows == n &&
              max_difference(got.data, exact.data, n * got.columns) > 1e-5f);
        uform_f32_matrix_free(&exact);
        uform_f32_matrix_free(&got);
        free_images(images, n);
    }
    if (f32) CHECK_STATUS(uform_model_free(f32), UFORM_STATUS_OK);
    if (bf16) CHECK_STATUS(uform_model_free(bf16), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 37. C's natural buffer is `uform_bytes_t`, a pointer and a length, read in place: a file at an odd offset inside a
 * larger block (bytes either side) gives the rows of its own buffer, and no byte of the block changes; the same file
 * twice gives the same row twice, and a list gives each image's row of a call of one; a first-layout options struct
 * (struct_size 0) is read; the matrix outlives the model and the executor. C has no asynchronous form (as 25). */
static void test_37_borrowed_buffers_are_read_in_place(void) {
    uform_executor_t *executor = ram_executor();
    uform_model_t *model = load(NULL, "clip", executor, UFORM_PRECISION_F32, UFORM_STATUS_OK);
    uform_bytes_t photo = image("files", "photo.jpg"), tiny = image("files", "tiny.png");
    size_t block_size = photo.len + 7 + 5;
    uint8_t *block = malloc(block_size), *copy = malloc(block_size);
    memset(block, 0xA5, block_size);
    memcpy(block + 7, photo.data, photo.len);
    memcpy(copy, block, block_size);
    uform_bytes_t inside = {block + 7, photo.len};
    uform_bytes_t list[4] = {photo, tiny, inside, photo};
    uform_f32_matrix_t all, one;
    memset(&all, 0, sizeof all);
    memset(&one, 0, sizeof one);
    if (model) {
        CHECK_STATUS(uform_model_encode_image(model, list, 4, NULL, &all), UFORM_STATUS_OK);
        CHECK(all.rows == 4 && all.columns == 24);
        CHECK(memcmp(block, copy, block_size) == 0);
        size_t c = all.columns;
        CHECK(all.data && all.rows == 4 && memcmp(all.data, all.data + 2 * c, c * sizeof(float)) == 0 &&
              memcmp(all.data, all.data + 3 * c, c * sizeof(float)) == 0);
        CHECK(all.data && all.rows == 4 && max_difference(all.data, all.data + c, c) > 1e-3f);
        uform_encode_image_options_t first_layout;
        memset(&first_layout, 0, sizeof first_layout);
        first_layout.normalize = true;
        CHECK_STATUS(uform_model_encode_image(model, &tiny, 1, &first_layout, &one), UFORM_STATUS_OK);
        CHECK(one.rows == 1 && all.data && all.rows == 4 && max_difference(one.data, all.data + c, c) <= 1e-6f);
        uform_f32_matrix_free(&one);
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
    CHECK(all.data && all.rows == 4 && unit_rows(&all)); /* still the caller's */
    uform_f32_matrix_free(&all);
    CHECK(all.data == NULL && all.rows == 0);
    free(block);
    free(copy);
    free((void *)photo.data);
    free((void *)tiny.data);
}

/* 38. Each hostile file of tests/fixtures/images/hostile, a zero-length buffer (NULL and not) and a NULL `data`
 * with a length, at index 2 after two good images, is an invalid argument naming `images[2]` and leaves the matrix
 * alone; the bomb's message names the budget, and (natively) refusing it grows the peak resident size by under
 * 16 MiB; nothing crashes, and the model embeds afterwards. A NULL list with a count, or a NULL matrix, is an
 * invalid argument; a NULL list of none gives no rows. */
static void test_38_hostile_images_are_invalid_arguments_naming_their_index(void) {
    static const char *hostile[6] = {"animated.gif", "animated.png", "animated.webp",
                                     "bomb.png",     "not-an-image.bin", "truncated.jpg"};
    int grind = getenv("UFORM_TEST_ENCODE_ROWS") != NULL;
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/hostile", images_root);
    CHECK(directory_entries(folder) == 6); /* a file added there is added here too */
    uform_executor_t *executor = ram_executor();
    uform_model_t *model = load(NULL, "clip", executor, UFORM_PRECISION_F32, UFORM_STATUS_OK);
    uform_bytes_t good = image("files", "photo.jpg");
    uform_f32_matrix_t m;
    memset(&m, 0, sizeof m);
    for (size_t h = 0; model && h < 6 + 3; h++) {
        static const uint8_t nothing[1] = {0};
        uform_bytes_t bad = {NULL, 0};
        const char *what = "NULL and empty";
        if (h < 6) bad = image("hostile", hostile[h]), what = hostile[h];
        if (h == 7) bad.data = nothing, what = "empty";
        if (h == 8) bad.len = 5, what = "NULL with a length";
        uform_bytes_t list[3] = {good, good, bad};
        int bomb = h < 6 && strcmp(hostile[h], "bomb.png") == 0;
        long before = 0;
        if (bomb && !grind) {
            before = status_kib("VmRSS:");
            write_bytes("/proc/self/clear_refs", "5", 1); /* the peak starts again from now */
        }
        uform_status_t status = uform_model_encode_image(model, list, 3, NULL, &m);
        if (bomb && !grind) {
            long grown = status_kib("VmHWM:") - before;
            printf("     bomb.png refused with RSS +%ld KiB at peak\n", grown);
            CHECK(grown < 16 * 1024);
        }
        if (status != UFORM_STATUS_INVALID_ARGUMENT || !says("images[2]"))
            fprintf(stderr, "    %s: %s: %s\n", what, uform_status_name(status), uform_last_error_message());
        CHECK(status == UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("images[2]"));
        if (bomb) CHECK(says("budget"));
        if (h >= 6 && h < 8) CHECK(says("empty"));
        CHECK(m.data == NULL && m.rows == 0);
        if (h < 6) free((void *)bad.data);
    }
    /* The list itself. */
    if (model) {
        CHECK_STATUS(uform_model_encode_image(model, NULL, 2, NULL, &m), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("images") && m.data == NULL);
        CHECK_STATUS(uform_model_encode_image(model, &good, 1, NULL, NULL), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK(says("matrix"));
        CHECK_STATUS(uform_model_encode_image(NULL, &good, 1, NULL, &m), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(uform_model_encode_image(model, NULL, 0, NULL, &m), UFORM_STATUS_OK);
        CHECK(m.rows == 0 && m.data == NULL);
        uform_f32_matrix_free(&m);
        /* Nothing was lost: the model still embeds. */
        CHECK_STATUS(uform_model_encode_image(model, &good, 1, NULL, &m), UFORM_STATUS_OK);
        CHECK(m.rows == 1 && m.columns == 24 && unit_rows(&m));
        uform_f32_matrix_free(&m);
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    free((void *)good.data);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 38. A text-only model (tests/fixtures/families/distilbert, towers "text") refuses encodeImage as unsupported;
 * the vision-only clip-vision refuses encodeText; an image-text model refuses rerank. */
static void test_38_a_model_without_the_tower_is_unsupported(void) {
    static const char *text[1] = {"text"};
    uform_executor_t *executor = ram_executor();
    const char *families = getenv("UFORM_TEST_FAMILIES");
    CHECK(families != NULL);
    uform_model_t *distilbert = families ? load(families, "distilbert", executor, UFORM_PRECISION_F32, UFORM_STATUS_OK) : NULL,
                  *vision = load(NULL, "clip-vision", executor, UFORM_PRECISION_F32, UFORM_STATUS_OK),
                  *clip = load(NULL, "clip", executor, UFORM_PRECISION_F32, UFORM_STATUS_OK);
    uform_bytes_t photo = image("files", "photo.jpg");
    const char *one[1] = {"a dog"};
    uform_f32_matrix_t m;
    memset(&m, 0, sizeof m);
    if (distilbert) {
        CHECK(towers_are(distilbert, text, 1));
        CHECK_STATUS(uform_model_encode_image(distilbert, &photo, 1, NULL, &m), UFORM_STATUS_UNSUPPORTED);
        CHECK(says("image tower") && m.data == NULL);
        CHECK_STATUS(uform_model_free(distilbert), UFORM_STATUS_OK);
    }
    if (vision) {
        CHECK_STATUS(uform_model_encode_text(vision, one, 1, NULL, &m), UFORM_STATUS_UNSUPPORTED);
        CHECK(says("text tower") && m.data == NULL);
        CHECK_STATUS(uform_model_free(vision), UFORM_STATUS_OK);
    }
    if (clip) {
        const uform_rerank_score_t *scores = NULL;
        size_t count = 0;
        CHECK_STATUS(uform_model_rerank(clip, "a dog", one, 1, NULL, &scores, &count), UFORM_STATUS_UNSUPPORTED);
        CHECK_STATUS(uform_model_free(clip), UFORM_STATUS_OK);
    }
    free((void *)photo.data);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

int main(void) {
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    images_root = getenv("UFORM_TEST_IMAGES");
    int have_images = images_root != NULL && read_reference();
    struct test tests[] = {
        {"test_36_every_checkpoint_embeds_files_and_crops_as_transformers",
         test_36_every_checkpoint_embeds_files_and_crops_as_transformers, 1},
        {"test_36_image_text_similarity_matches_logits_per_image", test_36_image_text_similarity_matches_logits_per_image, 1},
        {"test_36_bf16_reproduces_the_files", test_36_bf16_reproduces_the_files, 1},
        {"test_37_borrowed_buffers_are_read_in_place", test_37_borrowed_buffers_are_read_in_place, 1},
        {"test_38_hostile_images_are_invalid_arguments_naming_their_index",
         test_38_hostile_images_are_invalid_arguments_naming_their_index, 1},
        {"test_38_a_model_without_the_tower_is_unsupported", test_38_a_model_without_the_tower_is_unsupported, 1},
    };
    int status = RUN_TESTS_NEEDING(tests, have_images, "UFORM_TEST_IMAGES and UFORM_TEST_IMAGES_REFERENCE");
    free_entries(entries, &entry_count);
    return status;
}
