/*
 * The baseline of the C overhead benchmark: a function that does nothing, in a shared library of its own, built in
 * the same run with the same compiler flags as the benchmark and called across the PLT exactly as libuform is.
 */
void uform_bench_noop(void);

void uform_bench_noop(void) {}
