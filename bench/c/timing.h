/*
 * What the C overhead benchmarks (overhead.c, uniffi_overhead.c) share: the clock, the bare call each measures
 * against, and how they read their settings. Each is its own program, so everything here is static. Include it
 * after defining _POSIX_C_SOURCE (for clock_gettime).
 */
#ifndef UFORM_BENCH_TIMING_H
#define UFORM_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* A `void f(void)` that does nothing, exported by a shared library: bench/c/noop.c, or libuform_uniffi itself. */
void uform_bench_noop(void);

static inline double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Nanoseconds per call of `iterations` calls begun at `start` (a `now_ns()` reading). */
static inline double per_call_since(double start, long iterations) { return (now_ns() - start) / (double)iterations; }

/* Nanoseconds per call of uform_bench_noop(): the bare call into another shared library. */
static inline double time_noop(long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) uform_bench_noop();
    return per_call_since(start, iterations);
}

/* The positive whole number in the environment variable `name`, else `fallback`. */
static inline long from_environment(const char *name, long fallback) {
    const char *value = getenv(name);
    long parsed = value ? strtol(value, NULL, 10) : 0;
    return parsed > 0 ? parsed : fallback;
}

static inline double least(double a, double b) { return a < b ? a : b; }

#endif
