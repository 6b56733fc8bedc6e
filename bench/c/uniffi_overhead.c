/*
 * What the uniffi scaffolding costs on the Rust side, measured from C (`cargo xtask bench uniffi`): the calls the
 * generated Swift makes, made from C through the same FFI header (generated/swift/Sources/UFormFFI/UFormFFI.h)
 * into libuform_uniffi.so, so what Swift itself adds is not in it. Nanoseconds per call of
 *
 *   noop           uform_bench_noop(), a `void f(void)` exported by the same library: the bare call
 *   capabilities   capabilitiesCompiled(): the function, then freeing the string's buffer (Swift's lift frees it)
 *   drain          executor.drain() on an idle one-thread executor, as the generated Swift makes it: the handle's
 *                  clone (`uniffiCloneHandle()`), then the method with the mood's number (`FfiConverterTypeMood_lower`
 *                  gives an Int32: an enum crosses by value, generated/swift/Sources/UForm/Enums.swift), which lifts
 *                  the mood and releases the clone
 *   drain_clone    the clone alone, released by the free the generated Swift's `deinit` calls
 *
 * Each is the best of ROUNDS rounds of ITERATIONS calls, the subjects interleaved within every round. Prints on
 * stdout one line, the format of `cargo xtask bench overhead`'s, with the parts of drain after it:
 *   overhead uniffi-c: noop_ns=N capabilities_ns=N drain_ns=N capabilities/noop=R drain/noop=R clone_ns=N
 * and the rounds on stderr. Not a test: it asserts nothing but that the calls succeed.
 */
#define _POSIX_C_SOURCE 200809L
/* GCC does not know clang's nullability qualifiers, which uniffi's header uses. */
#ifndef __clang__
#define _Nullable
#define _Nonnull
#endif
#include "UFormFFI.h"

#include "timing.h"

#include <stdint.h>
#include <stdio.h>

static volatile uint64_t sink;
static int failed;

static void check(const RustCallStatus *status, const char *what) {
    if (status->code != 0 && !failed) {
        fprintf(stderr, "%s failed with uniffi status %d\n", what, status->code);
        failed = 1;
    }
}

/* `Mood.parked` as FfiConverterTypeMood_lower gives it: the number C uses for the case. */
static const int32_t PARKED = 0;

static RustBuffer from_bytes(const uint8_t *bytes, int32_t len) {
    RustCallStatus status = {0};
    ForeignBytes foreign;
    foreign.len = len;
    foreign.data = bytes;
    RustBuffer buffer = ffi_uform_uniffi_rustbuffer_from_bytes(foreign, &status);
    check(&status, "rustbuffer_from_bytes");
    return buffer;
}

static double time_capabilities(long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        RustCallStatus status = {0};
        RustBuffer text = uniffi_uform_uniffi_fn_func_capabilities_compiled(&status);
        check(&status, "capabilities_compiled");
        sink = text.len;
        ffi_uform_uniffi_rustbuffer_free(text, &status);
    }
    return per_call_since(start, iterations);
}

static double time_drain(uint64_t executor, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        RustCallStatus status = {0};
        uint64_t clone = uniffi_uform_uniffi_fn_clone_executor(executor, &status);
        uniffi_uform_uniffi_fn_method_executor_drain(clone, PARKED, &status);
        check(&status, "drain");
    }
    return per_call_since(start, iterations);
}

static double time_clone(uint64_t executor, long iterations) {
    double start = now_ns();
    for (long i = 0; i < iterations; i++) {
        RustCallStatus status = {0};
        uint64_t clone = uniffi_uform_uniffi_fn_clone_executor(executor, &status);
        uniffi_uform_uniffi_fn_free_executor(clone, &status);
        check(&status, "clone_executor");
    }
    return per_call_since(start, iterations);
}

int main(void) {
    long iterations = from_environment("UFORM_BENCH_ITERATIONS", 1000000);
    long rounds = from_environment("UFORM_BENCH_ROUNDS", 15);
    /* Some(ExecutorForRamConfig { memory_domains: None, cpu_class: None, threads: Some(1), deferred_limit: None,
     * scratch_limit: None }), as the generated Swift lowers `ExecutorForRamConfig(threads: 1)`. */
    static const uint8_t config[] = {1, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    RustCallStatus status = {0};
    uint64_t executor = uniffi_uform_uniffi_fn_constructor_executor_for_ram(from_bytes(config, sizeof config), &status);
    check(&status, "executor_for_ram");
    if (failed) return 1;
    /* Warm up: resolve the lazy PLT entries, compute the capability string, fault in the code. */
    time_noop(1000);
    time_capabilities(1000);
    time_drain(executor, 1000);
    time_clone(executor, 1000);
    if (failed) return 1;
    double noop = 1e300, capabilities = 1e300, drain = 1e300, clone = 1e300;
    for (long round = 0; round < rounds; round++) {
        double n = time_noop(iterations), c = time_capabilities(iterations), d = time_drain(executor, iterations);
        double k = time_clone(executor, iterations);
        fprintf(stderr, "  round %2ld: noop %.2f ns, capabilities %.2f ns, drain %.2f ns (clone %.2f ns)\n", round, n,
                c, d, k);
        noop = least(noop, n);
        capabilities = least(capabilities, c);
        drain = least(drain, d);
        clone = least(clone, k);
    }
    uniffi_uform_uniffi_fn_free_executor(executor, &status);
    check(&status, "free_executor");
    if (failed) return 1;
    fprintf(stderr, "uniffi-c: best of %ld rounds of %ld calls\n", rounds, iterations);
    printf("overhead uniffi-c: noop_ns=%.1f capabilities_ns=%.1f drain_ns=%.1f capabilities/noop=%.2f drain/noop=%.2f "
           "clone_ns=%.1f\n",
           noop, capabilities, drain, capabilities / noop, drain / noop, clone);
    return 0;
}
