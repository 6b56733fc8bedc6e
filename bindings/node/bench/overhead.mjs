// The binding-overhead benchmark (run by `cargo xtask bench overhead` against an installed package):
// nanoseconds per call of capabilitiesCompiled() and of drain() on an idle executor, side by side with a bare
// napi no-op built into the same addon, in the same run. Prints
//   overhead node: capabilities/noop=R1 drain/noop=R2
// and, on stderr, the nanoseconds behind the ratios. Not a test: it asserts nothing.
import { createRequire } from 'node:module';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Executor, Model, capabilitiesCompiled } from 'uform';

const require = createRequire(import.meta.url);
/** The addon the package loaded: beside it when built from source, else in its installed platform package. */
function addonPath() {
    const dirs = [dirname(require.resolve('uform'))];
    for (const libc of ['gnu', 'musl']) {
        try {
            dirs.push(dirname(require.resolve(`uform-${process.platform}-${process.arch}-${libc}/package.json`)));
        } catch {
            // not installed
        }
    }
    for (const dir of dirs) {
        const binary = readdirSync(dir).find((name) => name.endsWith('.node'));
        if (binary) return join(dir, binary);
    }
    throw new Error(`no .node addon in ${dirs.join(', ')}`);
}
const native = require(addonPath());

const iterations = Number(process.env.UFORM_BENCH_ITERATIONS ?? 2_000_000);
const rounds = Number(process.env.UFORM_BENCH_ROUNDS ?? 7);

/** The best of `rounds` timings of `iterations` calls, in nanoseconds per call. */
function nsPerCall(call) {
    let best = Infinity;
    for (let round = 0; round < rounds; round++) {
        const start = process.hrtime.bigint();
        for (let i = 0; i < iterations; i++) call();
        const elapsed = Number(process.hrtime.bigint() - start);
        best = Math.min(best, elapsed / iterations);
    }
    return best;
}

const executor = Executor.forRam({ threads: 1 });
executor.drain();
let sink = 0;
// Interleave, so drift in the machine's speed touches every measurement alike.
const noop = [];
const napiRs = [];
const capabilities = [];
const crossing = [];
const drain = [];
for (let pass = 0; pass < 3; pass++) {
    noop.push(nsPerCall(() => native.noop()));
    napiRs.push(nsPerCall(() => native.noopNapiRs()));
    capabilities.push(nsPerCall(() => (sink += capabilitiesCompiled().length)));
    crossing.push(nsPerCall(() => (sink += native.capabilitiesCompiled().length)));
    drain.push(nsPerCall(() => executor.drain()));
}
executor.free();
// Returning a 32 x 384 matrix the way encodeText returns its result, and encodeText itself when the model is there.
const matrixIterations = 20_000;
let matrixNs = Infinity;
for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < matrixIterations; i++) sink += native.benchMatrix().rows;
    matrixNs = Math.min(matrixNs, Number(process.hrtime.bigint() - start) / matrixIterations);
}
let encodeMs = NaN;
if (process.env.UFORM_TEST_MODEL_DIR) {
    const encoder = Executor.forRam({ threads: 2 });
    const model = Model.loadRam(process.env.UFORM_TEST_MODEL_DIR, { executor: encoder });
    const texts = Array.from({ length: 32 }, (_, i) => `a short sentence, number ${i}, about what embeddings are for`);
    model.encodeText(texts);
    const times = [];
    for (let i = 0; i < 15; i++) {
        const start = process.hrtime.bigint();
        model.encodeText(texts);
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    encodeMs = times.sort((a, b) => a - b)[7];
    model.free();
    encoder.free();
}
console.error(`node: returning a 32 x 384 Float32Array ${matrixNs.toFixed(0)} ns; encodeText of 32 short texts ${encodeMs.toFixed(2)} ms`);
const best = (xs) => Math.min(...xs);
const [n, c, d] = [best(noop), best(capabilities), best(drain)];
console.error(
    `node: noop ${n.toFixed(1)} ns (a #[napi] no-op: ${best(napiRs).toFixed(1)} ns), capabilitiesCompiled ${c.toFixed(1)} ns ` +
        `(a constant: the wrapper asks the native layer once; each native call makes the string anew: ${best(crossing).toFixed(1)} ns), ` +
        `drain ${d.toFixed(1)} ns (${sink > 0 ? 'ok' : ''})`,
);
console.log(
    `overhead node: capabilities/noop=${(c / n).toFixed(2)} drain/noop=${(d / n).toFixed(2)} ` +
        `noop_ns=${n.toFixed(1)} capabilities_ns=${c.toFixed(1)} drain_ns=${d.toFixed(1)} ` +
        `matrix_ns=${matrixNs.toFixed(0)} encode_ms=${encodeMs.toFixed(2)}`,
);
