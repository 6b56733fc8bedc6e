// Issue 9, leaks: repeated create/free of executors must not grow resident memory or leave OS threads behind, and
// executors dropped without `free` are released by the collector. Each measurement runs in a fresh
// `node --expose-gc` process (leak-probe.mjs), so that the memory and the threads counted are its own.
//
// Cost: a cycle of a one-thread executor takes ~12 µs, one of a two-thread executor ~0.4 ms (spawning and joining
// its worker). So the 100,000-cycle loops use threads: 1 and the threaded loops 10,000 cycles; set
// UFORM_LEAK_THREADED_CYCLES=100000 to run the threaded ones at full length (~40 s each on two cores).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const MB = 2 ** 20;
const threadedCycles = Number(process.env.UFORM_LEAK_THREADED_CYCLES ?? 10000);

function probe(...args) {
    const out = execFileSync(process.execPath, ['--expose-gc', join(here, 'leak-probe.mjs'), ...args.map(String)], {
        cwd: here,
        encoding: 'utf8',
        timeout: 300_000,
    });
    return JSON.parse(out.trim().split('\n').pop());
}

function cycles(t, count, threads, how) {
    const r = probe('cycles', count, threads, how);
    const growth = r.rssAfter - r.rssBefore;
    t.diagnostic(
        `${r.cycles} cycles of forRam({ threads: ${r.threads} }) + ${r.style}: ${(r.ms / 1000).toFixed(1)} s, ` +
            `rss ${(r.rssBefore / MB).toFixed(1)} -> ${(r.rssAfter / MB).toFixed(1)} MB (growth ${(growth / MB).toFixed(2)} MB), ` +
            `OS threads ${r.threadsBefore} -> ${r.threadsAfter}`,
    );
    assert.ok(growth < 5 * MB, `resident memory grew by ${(growth / MB).toFixed(2)} MB over ${r.cycles} cycles`);
    assert.equal(r.threadsAfter, r.threadsBefore, 'OS threads left behind');
}

test('leaks: 100,000 create/free cycles of forRam({ threads: 1 }) grow resident memory by under 5 MB', (t) => {
    cycles(t, 100000, 1, 'free');
});

test('leaks: 100,000 cycles of `using` forRam({ threads: 1 }) grow resident memory by under 5 MB', (t) => {
    cycles(t, 100000, 1, 'using');
});

test(`leaks: ${threadedCycles} create/free cycles of forRam({ threads: 2 }): under 5 MB, no OS thread left`, (t) => {
    cycles(t, threadedCycles, 2, 'free');
});

test(`leaks: ${threadedCycles} cycles of \`using\` forRam({ threads: 2 }): under 5 MB, no OS thread left`, (t) => {
    cycles(t, threadedCycles, 2, 'using');
});

test('leaks: executors dropped without free are freed by the FinalizationRegistry (OS threads back to baseline)', (t) => {
    const count = 400;
    const r = probe('forgotten', count);
    t.diagnostic(
        `${count} forgotten executors of 2 threads and ${count / 4} under forgotten meshes: OS threads ` +
            `${r.baseline} -> ${r.peak} -> ${r.after} after ${r.rounds} gc rounds (${r.ms.toFixed(0)} ms)`,
    );
    // Each two-thread executor is the caller plus one spawned worker.
    assert.ok(r.peak >= r.baseline + count + count / 4, `only ${r.peak - r.baseline} threads were spawned`);
    assert.equal(r.after, r.baseline, 'the collector left threads of forgotten executors running');
});

// On the tiny model (MiniLM's code paths, width 32) that xtask writes: on MiniLM the calls took 21 s of compute.
test('leaks: 10,000 encodeText calls of one short text grow resident memory by under 20 MB', (t) => {
    const modelDir = process.env.UFORM_TEST_TINY_MODEL_DIR;
    assert.ok(modelDir, 'UFORM_TEST_TINY_MODEL_DIR is not set: run the suite through `cargo xtask test node`');
    const r = probe('encode', 10000, modelDir);
    const growth = r.rssAfter - r.rssBefore;
    t.diagnostic(
        `${r.calls} encodeText calls: ${(r.ms / 1000).toFixed(1)} s, rss ${(r.rssBefore / MB).toFixed(1)} -> ` +
            `${(r.rssAfter / MB).toFixed(1)} MB (growth ${(growth / MB).toFixed(2)} MB)`,
    );
    assert.ok(growth < 20 * MB, `resident memory grew by ${(growth / MB).toFixed(2)} MB over ${r.calls} calls`);
});
