/*
 * The C part of `cargo xtask bench overhead`: nanoseconds per call of uform_capabilities_compiled() and of
 * uform_executor_drain() on an idle one-thread executor, side by side with uform_bench_noop(), a `void f(void)`
 * that does nothing, exported from a separate small shared library (bench/c/noop.c). All three are calls from this
 * binary through the PLT into a shared library, so the difference to the no-op is what libuform adds: its guard
 * against panics, the handle lookup, the last-error bookkeeping and the work itself.
 *
 * Each measurement is the best of ROUNDS rounds of ITERATIONS calls (the least disturbed), the three interleaved
 * within every round so drift in the machine's speed touches them alike. Results go to a volatile sink, so the
 * calls cannot be dropped; they are calls into other shared objects, so the compiler can neither inline nor hoist
 * them. Returning an encodeText matrix copies nothing in C (the core's buffer is handed over; matrix_ns=0), so next
 * to it the line gives uform_model_encode_text of 32 short texts when UFORM_TEST_MODEL_DIR names the test model.
 * Prints on stdout exactly one line:
 *   overhead c: noop_ns=N capabilities_ns=N drain_ns=N capabilities/noop=R drain/noop=R matrix_ns=0 encode_ms=M
 * and the rounds on stderr. Not a test: it asserts nothing but that the calls succeed.
 */
#define _POSIX_C_SOURCE 200809L
#include <uform.h>

#include "timing.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uintptr_t sink;

static double time_capabilities(long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) sink = (uintptr_t)uform_capabilities_compiled();
    return per_call_since(start, iterations);
}

static double time_drain(uform_executor_t *executor, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) sink = (uintptr_t)uform_executor_drain(executor, UFORM_MOOD_PARKED);
    return per_call_since(start, iterations);
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of 15 uform_model_encode_text calls of 32 short texts (after one warm-up); NaN without a model. */
static double time_encode(void) {
    const char *dir = getenv("UFORM_TEST_MODEL_DIR");
    if (!dir) return 0.0 / 0.0;
    uform_executor_for_ram_config_t config = UFORM_EXECUTOR_FOR_RAM_CONFIG_INIT;
    config.threads = 2;
    uform_executor_t *executor = NULL;
    uform_model_t *model = NULL;
    uform_model_load_ram_config_t load = UFORM_MODEL_LOAD_RAM_CONFIG_INIT;
    if (uform_executor_for_ram(&config, &executor) != UFORM_STATUS_OK) return 0.0 / 0.0;
    load.executor = executor;
    if (uform_model_load_ram(dir, &load, &model) != UFORM_STATUS_OK) return uform_executor_free(executor), 0.0 / 0.0;
    static char storage[32][80];
    const char *texts[32];
    for (int i = 0; i < 32; i++) {
        snprintf(storage[i], sizeof storage[i], "a short sentence, number %d, about what embeddings are for", i);
        texts[i] = storage[i];
    }
    double times[16];
    for (int i = 0; i < 16; i++) {
        uform_f32_matrix_t m = {0};
        double start = now_ns();
        if (uform_model_encode_text(model, texts, 32, NULL, &m) != UFORM_STATUS_OK) times[i] = 0.0 / 0.0;
        else times[i] = (now_ns() - start) / 1e6;
        uform_f32_matrix_free(&m);
    }
    qsort(times + 1, 15, sizeof times[0], by_value);
    uform_model_free(model);
    uform_executor_free(executor);
    return times[1 + 7];
}

int main(void) {
    long iterations = from_environment("UFORM_BENCH_ITERATIONS", 2000000);
    long rounds = from_environment("UFORM_BENCH_ROUNDS", 15);
    uform_executor_for_ram_config_t config = {0};
    config.threads = 1;
    uform_executor_t *executor = NULL;
    if (uform_executor_for_ram(&config, &executor) != UFORM_STATUS_OK) {
        fprintf(stderr, "uform_executor_for_ram failed: %s\n", uform_last_error_message());
        return 1;
    }
    /* Warm up: resolve the lazy PLT entries, compute the capability string, fault in the code. */
    for (int i = 0; i < 1000; i++) {
        uform_bench_noop();
        sink = (uintptr_t)uform_capabilities_compiled();
        if (uform_executor_drain(executor, UFORM_MOOD_PARKED) != UFORM_STATUS_OK) {
            fprintf(stderr, "uform_executor_drain failed: %s\n", uform_last_error_message());
            return 1;
        }
    }
    double noop = 1e300, capabilities = 1e300, drain = 1e300;
    for (long round = 0; round < rounds; round++) {
        double n = time_noop(iterations), c = time_capabilities(iterations), d = time_drain(executor, iterations);
        fprintf(stderr, "  round %2ld: noop %.2f ns, capabilities %.2f ns, drain %.2f ns\n", round, n, c, d);
        noop = least(noop, n);
        capabilities = least(capabilities, c);
        drain = least(drain, d);
    }
    if (uform_executor_drain(executor, UFORM_MOOD_PARKED) != UFORM_STATUS_OK || uform_executor_free(executor) != UFORM_STATUS_OK) {
        fprintf(stderr, "the executor failed: %s\n", uform_last_error_message());
        return 1;
    }
    fprintf(stderr, "c: best of %ld rounds of %ld calls: noop %.2f ns, uform_capabilities_compiled %.2f ns, "
                    "uform_executor_drain %.2f ns\n", rounds, iterations, noop, capabilities, drain);
    double encode = time_encode();
    fprintf(stderr, "c: returning a 32 x 384 matrix copies nothing (the core's buffer is handed over); "
                    "uform_model_encode_text of 32 short texts %.2f ms\n", encode);
    printf("overhead c: noop_ns=%.1f capabilities_ns=%.1f drain_ns=%.1f capabilities/noop=%.2f drain/noop=%.2f "
           "matrix_ns=0 encode_ms=%.2f\n", noop, capabilities, drain, capabilities / noop, drain / noop, encode);
    return 0;
}
