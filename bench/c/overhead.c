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
 * them. Prints on stdout exactly one line:
 *   overhead c: noop_ns=N capabilities_ns=N drain_ns=N capabilities/noop=R drain/noop=R
 * and the rounds on stderr. Not a test: it asserts nothing but that the calls succeed.
 */
#define _POSIX_C_SOURCE 200809L
#include <uform.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void uform_bench_noop(void);

static volatile uintptr_t sink;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double time_noop(long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) uform_bench_noop();
    return (now_ns() - start) / (double)iterations;
}

static double time_capabilities(long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) sink = (uintptr_t)uform_capabilities_compiled();
    return (now_ns() - start) / (double)iterations;
}

static double time_drain(uform_executor_t *executor, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) sink = (uintptr_t)uform_executor_drain(executor, UFORM_MOOD_PARKED);
    return (now_ns() - start) / (double)iterations;
}

static long from_environment(const char *name, long fallback) {
    const char *value = getenv(name);
    long parsed = value ? strtol(value, NULL, 10) : 0;
    return parsed > 0 ? parsed : fallback;
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
        noop = n < noop ? n : noop;
        capabilities = c < capabilities ? c : capabilities;
        drain = d < drain ? d : drain;
    }
    if (uform_executor_drain(executor, UFORM_MOOD_PARKED) != UFORM_STATUS_OK || uform_executor_free(executor) != UFORM_STATUS_OK) {
        fprintf(stderr, "the executor failed: %s\n", uform_last_error_message());
        return 1;
    }
    fprintf(stderr, "c: best of %ld rounds of %ld calls: noop %.2f ns, uform_capabilities_compiled %.2f ns, "
                    "uform_executor_drain %.2f ns\n", rounds, iterations, noop, capabilities, drain);
    printf("overhead c: noop_ns=%.1f capabilities_ns=%.1f drain_ns=%.1f capabilities/noop=%.2f drain/noop=%.2f\n", noop,
           capabilities, drain, capabilities / noop, drain / noop);
    return 0;
}
