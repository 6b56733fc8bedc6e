/*
 * The C family scenarios 33–35 (../../../shared/SCENARIOS.md, issue 31), against generated/c/uform.h and libuform: the
 * random-weight family checkpoints of tests/fixtures/families (UFORM_TEST_FAMILIES) against their reference,
 * flattened by tests/c/flatten_families.py into UFORM_TEST_FAMILIES_REFERENCE; `cargo xtask test c` sets both. The
 * checkpoints are small, so every scenario runs under valgrind too. Prints one line per test and closes with
 * "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L
#include "suite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct entry family_entries[32];
static size_t family_count = 0;

/* The flattened entry `family.key`, or NULL. */
static const struct entry *family_entry(const char *family, const char *key) {
    return find_entry(family_entries, family_count, family, key, "UFORM_TEST_FAMILIES_REFERENCE");
}

/* Loads UFORM_TEST_FAMILIES/`family` on `executor` at `precision`, or NULL (a failed check). */
static uform_model_t *family_model(const char *family, uform_executor_t *executor, uform_precision_t precision) {
    const char *root = getenv("UFORM_TEST_FAMILIES");
    char path[4096];
    CHECK(root != NULL);
    if (!root) return NULL;
    snprintf(path, sizeof path, "%s/%s", root, family);
    uform_model_t *model = NULL;
    CHECK_STATUS(load_ram_as(path, executor, precision, &model), UFORM_STATUS_OK);
    return model;
}

/* The largest |got - want| of a matrix against an entry of the same shape (infinity when the shapes differ). */
static double family_difference(const uform_f32_matrix_t *got, const struct entry *want) {
    if (!got->data || got->rows != want->rows || got->columns != want->columns) return INFINITY;
    return (double)max_difference(got->data, want->values, want->rows * want->columns);
}

/* 33. Every family's checkpoint reproduces sentence-transformers: cosine >= 0.9999 and max abs difference <= 1e-4
 * per text; describe() names the family, 64 tokens, 64 dimensions, its prompts, no cross-encoder. */
static void test_33_every_family_reproduces_its_reference(void) {
    static const char *families[4] = {"distilbert", "xlm-roberta", "mpnet", "modernbert"};
    static const char *prompts[4][2] = {{"passage", "query"}, {"document", "query"}, {"document", "query"}, {"document", "query"}};
    uform_executor_t *executor = ram_executor();
    for (size_t k = 0; k < 4; k++) {
        const struct entry *texts = family_entry(families[k], "texts"),
                                  *want = family_entry(families[k], "embeddings");
        uform_model_t *model = family_model(families[k], executor, UFORM_PRECISION_F32);
        CHECK(texts && want && texts->rows == want->rows && want->columns == 64);
        if (!model || !texts || !want) continue;
        uform_model_description_t d;
        memset(&d, 0, sizeof d);
        CHECK_STATUS(uform_model_describe(model, &d), UFORM_STATUS_OK);
        CHECK(d.family && strcmp(d.family, families[k]) == 0);
        CHECK(d.architecture && strcmp(d.architecture, families[k]) == 0);
        CHECK(d.max_tokens == 64 && d.dimensions == 64 && !d.cross_encoder);
        CHECK(d.prompts_count == 2);
        for (size_t p = 0; p < 2 && d.prompts_count == 2; p++)
            CHECK(strcmp(d.prompts[0], prompts[k][p]) == 0 || strcmp(d.prompts[1], prompts[k][p]) == 0);
        uform_f32_matrix_t m;
        memset(&m, 0, sizeof m);
        CHECK_STATUS(uform_model_encode_text(model, (const char *const *)texts->texts, texts->rows, NULL, &m),
                     UFORM_STATUS_OK);
        CHECK(m.rows == want->rows && m.columns == 64);
        for (size_t r = 0; m.data && m.rows == want->rows && m.columns == 64 && r < m.rows; r++) {
            const float *got = m.data + r * 64, *w = want->values + r * 64;
            double dot = 0, worst = 0;
            for (size_t c = 0; c < 64; c++) {
                dot += (double)got[c] * w[c]; /* both unit length */
                if (fabs((double)got[c] - w[c]) > worst) worst = fabs((double)got[c] - w[c]);
            }
            if (dot < 0.9999 || worst > 1e-4)
                fprintf(stderr, "    %s text %zu: cosine %.6f, max diff %.2e\n", families[k], r, dot, worst);
            CHECK(dot >= 0.9999 && worst <= 1e-4);
        }
        uform_f32_matrix_free(&m);
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
        /* bf16 runs every family too, where the CPU has it (issue 33): cosine >= 0.999 for every text. */
        if (available("amd-genoa") || available("intel-sapphirerapids")) {
            uform_model_t *bf16 = family_model(families[k], executor, UFORM_PRECISION_BF16);
            if (!bf16) continue;
            CHECK_STATUS(uform_model_encode_text(bf16, (const char *const *)texts->texts, texts->rows, NULL, &m),
                         UFORM_STATUS_OK);
            for (size_t r = 0; m.data && m.rows == want->rows && m.columns == 64 && r < m.rows; r++) {
                const float *got = m.data + r * 64, *w = want->values + r * 64;
                double dot = 0, norm = 0;
                for (size_t c = 0; c < 64; c++) {
                    dot += (double)got[c] * w[c];
                    norm += (double)got[c] * got[c];
                }
                if (dot / sqrt(norm) < 0.999) fprintf(stderr, "    bf16 %s text %zu: cosine %.6f\n", families[k], r, dot / sqrt(norm));
                CHECK(dot / sqrt(norm) >= 0.999);
            }
            uform_f32_matrix_free(&m);
            CHECK_STATUS(uform_model_free(bf16), UFORM_STATUS_OK);
        }
    }
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 34, 35. rerank reproduces CrossEncoder's scores within 1e-4 in input order, and sorted best first keeping each
 * index; an empty query and no documents are invalid arguments; a model without a classification head is unsupported. */
static void test_34_cross_encoders_rerank_as_sentence_transformers(void) {
    static const char *families[3] = {"bert-reranker", "xlm-roberta-reranker", "modernbert-reranker"};
    uform_executor_t *executor = ram_executor();
    for (size_t k = 0; k < 3; k++) {
        const struct entry *query = family_entry(families[k], "query"),
                                  *documents = family_entry(families[k], "documents"),
                                  *want = family_entry(families[k], "scores");
        uform_model_t *model = family_model(families[k], executor, UFORM_PRECISION_F32);
        CHECK(query && documents && want && want->columns == documents->rows);
        if (!model || !query || !documents || !want) continue;
        const char *const *docs = (const char *const *)documents->texts;
        size_t n = documents->rows;
        uform_model_description_t d;
        memset(&d, 0, sizeof d);
        CHECK_STATUS(uform_model_describe(model, &d), UFORM_STATUS_OK);
        CHECK(d.cross_encoder);
        const uform_rerank_score_t *got = NULL, *sorted = NULL;
        size_t got_count = 0, sorted_count = 0;
        CHECK_STATUS(uform_model_rerank(model, query->texts[0], docs, n, NULL, &got, &got_count), UFORM_STATUS_OK);
        CHECK(got && got_count == n);
        for (size_t i = 0; got && i < got_count && got_count == n; i++) {
            if (fabs(got[i].score - want->values[i]) > 1e-4)
                fprintf(stderr, "    %s document %zu: %.6f vs %.6f\n", families[k], i, got[i].score, want->values[i]);
            CHECK(got[i].index == i && fabs(got[i].score - want->values[i]) <= 1e-4);
        }
        /* The scores stay valid until this thread's next uform_model_rerank: keep a copy of the input order's. */
        double first[16];
        for (size_t i = 0; got && got_count == n && i < n && i < 16; i++) first[i] = got[i].score;
        CHECK(n <= 16);
        uform_rerank_options_t options = UFORM_RERANK_OPTIONS_INIT;
        options.sorted = true;
        CHECK_STATUS(uform_model_rerank(model, query->texts[0], docs, n, &options, &sorted, &sorted_count),
                     UFORM_STATUS_OK);
        CHECK(sorted && sorted_count == n);
        for (size_t i = 0; got && sorted && got_count == n && sorted_count == n && i < n && i < 16; i++) {
            CHECK(i == 0 || sorted[i - 1].score >= sorted[i].score);
            CHECK(sorted[i].index < n && sorted[i].score == first[sorted[i].index]);
        }
        CHECK(sorted && sorted_count == n && sorted[0].index != 0); /* the reference's best is not the first */
        size_t count = 7;
        CHECK_STATUS(uform_model_rerank(model, "", docs, n, NULL, &got, &count), UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(uform_model_rerank(model, query->texts[0], NULL, 0, NULL, &got, &count),
                     UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(uform_model_rerank(model, query->texts[0], docs, n, NULL, NULL, &count),
                     UFORM_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    }
    uform_model_t *plain = family_model("distilbert", executor, UFORM_PRECISION_F32);
    const char *one[1] = {"d"};
    const uform_rerank_score_t *scores = NULL;
    size_t count = 0;
    if (plain) CHECK_STATUS(uform_model_rerank(plain, "q", one, 1, NULL, &scores, &count), UFORM_STATUS_UNSUPPORTED);
    if (plain) CHECK_STATUS(uform_model_free(plain), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

/* 33, 35. distilbert's prompt "query" (by name, or given as text) and 24 Matryoshka dimensions match
 * sentence-transformers within 1e-4; an unknown prompt name, both prompt and name, 0 and 65 dimensions are invalid. */
static void test_35_prompts_and_dimensions_match_sentence_transformers(void) {
    const struct entry *texts = family_entry("distilbert", "texts"),
                              *prompted = family_entry("distilbert", "prompted_query"),
                              *truncated = family_entry("distilbert", "truncated_24");
    uform_executor_t *executor = ram_executor();
    uform_model_t *model = family_model("distilbert", executor, UFORM_PRECISION_F32);
    CHECK(texts && prompted && truncated && truncated->columns == 24);
    if (model && texts && prompted && truncated) {
        const char *const *t = (const char *const *)texts->texts;
        uform_f32_matrix_t m, given;
        memset(&m, 0, sizeof m);
        memset(&given, 0, sizeof given);
        uform_encode_text_options_t options = UFORM_ENCODE_TEXT_OPTIONS_INIT;
        options.prompt_name = "query";
        CHECK_STATUS(uform_model_encode_text(model, t, texts->rows, &options, &m), UFORM_STATUS_OK);
        CHECK(family_difference(&m, prompted) <= 1e-4);
        options.prompt_name = NULL;
        options.prompt = "query: ";
        CHECK_STATUS(uform_model_encode_text(model, t, texts->rows, &options, &given), UFORM_STATUS_OK);
        CHECK(m.data && given.data && given.rows == m.rows && max_difference(m.data, given.data, m.rows * 64) == 0);
        uform_f32_matrix_free(&m);
        uform_f32_matrix_free(&given);
        options.prompt = NULL;
        options.dimensions = 24;
        CHECK_STATUS(uform_model_encode_text(model, t, texts->rows, &options, &m), UFORM_STATUS_OK);
        CHECK(m.columns == 24 && family_difference(&m, truncated) <= 1e-4);
        uform_f32_matrix_free(&m);
        uform_encode_text_options_t bad[4] = {UFORM_ENCODE_TEXT_OPTIONS_INIT, UFORM_ENCODE_TEXT_OPTIONS_INIT,
                                              UFORM_ENCODE_TEXT_OPTIONS_INIT, UFORM_ENCODE_TEXT_OPTIONS_INIT};
        bad[0].prompt_name = "nope";
        bad[1].prompt = "a";
        bad[1].prompt_name = "query";
        bad[2].dimensions = 65;
        bad[3].dimensions = 0; /* zero means absent in C: every dimension */
        for (size_t b = 0; b < 3; b++) {
            CHECK_STATUS(uform_model_encode_text(model, t, texts->rows, &bad[b], &m), UFORM_STATUS_INVALID_ARGUMENT);
            CHECK(m.data == NULL);
        }
        CHECK_STATUS(uform_model_encode_text(model, t, 1, &bad[3], &m), UFORM_STATUS_OK);
        CHECK(m.rows == 1 && m.columns == 64);
        uform_f32_matrix_free(&m);
    }
    if (model) CHECK_STATUS(uform_model_free(model), UFORM_STATUS_OK);
    CHECK_STATUS(uform_executor_free(executor), UFORM_STATUS_OK);
}

int main(void) {
    scratch_root = getenv("UFORM_TEST_DIR") ? getenv("UFORM_TEST_DIR") : "/tmp";
    int have_families = getenv("UFORM_TEST_FAMILIES") != NULL &&
                        read_entries(getenv("UFORM_TEST_FAMILIES_REFERENCE"), family_entries, 32, &family_count);
    struct test tests[] = {
        {"test_33_every_family_reproduces_its_reference", test_33_every_family_reproduces_its_reference, 1},
        {"test_34_cross_encoders_rerank_as_sentence_transformers", test_34_cross_encoders_rerank_as_sentence_transformers, 1},
        {"test_35_prompts_and_dimensions_match_sentence_transformers", test_35_prompts_and_dimensions_match_sentence_transformers, 1},
    };
    int status = RUN_TESTS_NEEDING(tests, have_families, "UFORM_TEST_FAMILIES and UFORM_TEST_FAMILIES_REFERENCE");
    free_entries(family_entries, &family_count);
    return status;
}
