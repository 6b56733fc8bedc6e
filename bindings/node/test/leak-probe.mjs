// The measuring half of leaks.test.mjs, run in a process of its own with `node --expose-gc` so that its resident
// memory and OS threads are its own and `gc()` is there. Prints one JSON line.
//
//   node --expose-gc leak-probe.mjs cycles CYCLES THREADS free|using
//     Creates and releases CYCLES executors of THREADS threads, after a warm-up of the same kind, collecting every
//     1,000 cycles, and reports resident memory and the OS thread count before and after.
//   node --expose-gc leak-probe.mjs forgotten COUNT
//     Makes COUNT executors of 2 threads (and COUNT / 4 executors under meshes) that are never freed, drops them,
//     and collects until the OS thread count is back where it started: the FinalizationRegistry's work.
//   node --expose-gc leak-probe.mjs encode CALLS MODEL_DIR
//     Loads the test model and calls encodeText(['hello world']) CALLS times after a warm-up, collecting every
//     1,000 calls, and reports resident memory before and after.
import { readdirSync } from 'node:fs';
import { Executor, Mesh, Model } from 'uform';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const [mode, countText, threadsText, how] = process.argv.slice(2);
const count = Number(countText);

/** The OS threads of this process right now. */
const osThreads = () => readdirSync('/proc/self/task').length;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Full collections, each followed by a turn of the event loop: finalizers (napi's and the registry's) run there. */
async function collect(rounds = 3) {
    for (let i = 0; i < rounds; i++) {
        globalThis.gc();
        await tick();
    }
}

/**
 * One create-and-release cycle. `using` where this Node parses it (22+); elsewhere what TypeScript lowers `using`
 * to, the same calls in the same order: the declaration, then `[Symbol.dispose]()` in a `finally`.
 */
function releaser(config, style) {
    if (style === 'free') return [() => Executor.forRam(config).free(), 'free()'];
    try {
        const cycle = new Function('Executor', 'config', '{ using executor = Executor.forRam(config); }');
        return [() => cycle(Executor, config), 'using'];
    } catch {
        return [
            () => {
                const executor = Executor.forRam(config);
                try {
                    // the body of the `using` block
                } finally {
                    executor[Symbol.dispose]();
                }
            },
            'using, as TypeScript lowers it (this Node cannot parse `using`)',
        ];
    }
}

async function run(cycle, n) {
    for (let i = 0; i < n; i++) {
        cycle();
        if ((i + 1) % 1000 === 0) await collect(1);
    }
    await collect();
}

if (mode === 'cycles') {
    const [cycle, style] = releaser({ threads: Number(threadsText) }, how);
    // Warm-up: the allocator's and the engine's pools reach their working size, lazily made state exists.
    await run(cycle, Math.min(count, Number(threadsText) > 1 ? 5000 : 10000));
    const threadsBefore = osThreads();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    await run(cycle, count);
    const ms = performance.now() - started;
    const rssAfter = process.memoryUsage().rss;
    const threadsAfter = osThreads();
    console.log(JSON.stringify({ style, cycles: count, threads: Number(threadsText), ms, rssBefore, rssAfter, threadsBefore, threadsAfter }));
} else if (mode === 'forgotten') {
    // Warm-up: whatever the first executor makes once (topology, capability tables) is not counted.
    Executor.forRam({ threads: 2 }).free();
    await collect();
    const baseline = osThreads();
    (() => {
        for (let i = 0; i < count; i++) Executor.forRam({ threads: 2 });
        // An executor under a mesh: its finalizer may run first and find it borrowed; the mesh's releases it.
        for (let i = 0; i < count / 4; i++) Mesh.bootstrap(Executor.forRam({ threads: 2 }));
    })();
    const peak = osThreads();
    const started = performance.now();
    let after = peak;
    let rounds = 0;
    while (after > baseline && rounds < 200) {
        await collect(1);
        rounds += 1;
        after = osThreads();
    }
    console.log(JSON.stringify({ count, baseline, peak, after, rounds, ms: performance.now() - started }));
} else if (mode === 'encode') {
    const executor = Executor.forRam({ threads: 2 });
    const model = Model.loadRam(threadsText, { executor });
    const call = () => model.encodeText(['hello world']);
    for (let i = 0; i < 200; i++) call();
    await collect();
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    for (let i = 1; i <= count; i++) {
        call();
        if (i % 1000 === 0) await collect(1);
    }
    await collect();
    const ms = performance.now() - started;
    const rssAfter = process.memoryUsage().rss;
    model.free();
    executor.free();
    console.log(JSON.stringify({ calls: count, ms, rssBefore, rssAfter }));
} else {
    throw new Error(`unknown mode ${mode}`);
}
