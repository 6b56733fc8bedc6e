// Issue 9, concurrency: the package used from several `worker_threads` workers at once, each loading the addon
// itself, while the main thread uses it too; workers terminated mid-use and mid-bootstrap; meshes formed by workers
// of one process; many interleaved tasks on one thread. Nothing may crash or deadlock (every wait has a deadline),
// and once the workers are gone their OS threads and mesh files are gone too.
//
// The package has no asynchronous API (`Mesh.bootstrap` blocks, see the README), so concurrent bootstraps happen
// across workers: four at once in the first test, three meshes of two forming at once in the fourth.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Executor, Mesh, Mood, MultimemTier } from 'uform';
import { scratch, throwsUForm } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const workerFile = join(here, 'concurrency-worker.mjs');
const osThreads = () => readdirSync('/proc/self/task').length;
const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection naming `what` after `ms`: a deadlock fails the test instead of hanging the suite. */
function deadline(promise, ms, what) {
    let timer;
    const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Starts a worker on `task`; its messages queue up for `next()`, and `exited` resolves with its exit code. */
function start(task, data = {}) {
    const worker = new Worker(workerFile, { workerData: { task, ...data } });
    const queue = [];
    const waiting = [];
    let failure;
    worker.on('message', (message) => (waiting.length ? waiting.shift().resolve(message) : queue.push(message)));
    worker.on('error', (error) => {
        failure = error;
        for (const w of waiting.splice(0)) w.reject(error);
    });
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    const next = () => {
        if (queue.length) return Promise.resolve(queue.shift());
        if (failure) return Promise.reject(failure);
        return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    };
    return { worker, exited, next, error: () => failure };
}

/** Waits (collecting, a turn at a time) until the OS thread count is back to `baseline`; returns what it reached. */
async function threadsBackTo(baseline, ms = 10_000) {
    const until = Date.now() + ms;
    let now = osThreads();
    while (now > baseline && Date.now() < until) {
        globalThis.gc?.();
        await sleep(20);
        now = osThreads();
    }
    return now;
}

let baseline;

test('concurrency: warm-up (a first worker starts the engine\'s shared threads), then the baseline', async () => {
    const warm = start('rounds', { directory: scratch('uform-node-warm'), iterations: 4 });
    assert.equal((await deadline(warm.next(), 60_000, 'the warm-up worker')).rounds, 4);
    assert.equal(await deadline(warm.exited, 30_000, 'the warm-up worker\'s exit'), 0);
    Executor.forRam({ threads: 2 }).free();
    await sleep(100);
    baseline = osThreads();
});

test('concurrency: four workers and the main thread create, drain, form meshes of one and free at once', async (t) => {
    const directory = scratch('uform-node-workers');
    const iterations = 60;
    const workers = [0, 1, 2, 3].map(() => start('rounds', { directory, iterations }));
    // The main thread's own rounds, in slices so the workers' messages are heard meanwhile.
    for (let k = 0; k < iterations; k++) {
        const executor = Executor.forRam({ threads: 2 });
        executor.drain(k % 2 ? Mood.Spinning : Mood.Parked);
        const mesh = Mesh.bootstrap(executor, { hostDomainCount: 1, directory, job: `main-${k}`, timeoutSeconds: 5 });
        assert.ok(Object.values(MultimemTier).includes(mesh.describe().multimemTier));
        mesh.free();
        executor.drain();
        executor.free();
        if (k % 8 === 0) await tick();
    }
    const results = await deadline(Promise.all(workers.map((w) => w.next())), 120_000, 'four workers');
    for (const result of results) assert.equal(result.rounds, iterations);
    const codes = await deadline(Promise.all(workers.map((w) => w.exited)), 30_000, 'the workers\' exit');
    assert.deepEqual(codes, [0, 0, 0, 0]);
    // Each worker ended with executors and meshes it never freed: its environment's teardown released them.
    const threads = await threadsBackTo(baseline);
    t.diagnostic(`OS threads: baseline ${baseline}, after the workers ${threads}`);
    assert.equal(threads, baseline, 'the workers left OS threads behind');
    assert.deepEqual(readdirSync(directory), []);
});

test('concurrency: workers terminated mid-use do not crash the process or leave threads behind', async (t) => {
    const directory = scratch('uform-node-terminate');
    const delays = [0, 1, 5, 10, 20, 40, 80, 160];
    for (const delay of delays) {
        const w = start('forever', { directory });
        assert.equal(await deadline(w.next(), 60_000, 'a worker getting under way'), 'running');
        await sleep(delay);
        await deadline(w.worker.terminate(), 30_000, `terminate() after ${delay} ms`);
        assert.equal(w.error(), undefined);
    }
    // The process is healthy: the package still works here.
    const executor = Executor.forRam({ threads: 2 });
    executor.drain(Mood.Spinning);
    executor.free();
    const threads = await threadsBackTo(baseline);
    t.diagnostic(`${delays.length} workers terminated mid-use; OS threads: baseline ${baseline}, after ${threads}`);
    assert.equal(threads, baseline, 'terminated workers left OS threads behind');
    assert.deepEqual(readdirSync(directory), []);
});

test('concurrency: a worker terminated while bootstrap waits for a peer; its files go with it', async () => {
    const directory = scratch('uform-node-terminate-wait');
    const w = start('waiting', { directory });
    assert.equal(await deadline(w.next(), 60_000, 'a worker getting under way'), 'joining');
    await sleep(300);
    // The wait is in native code: terminate() takes effect when bootstrap gives up (timeoutSeconds: 2).
    await deadline(w.worker.terminate(), 30_000, 'terminate() of a worker blocked in bootstrap');
    assert.deepEqual(readdirSync(directory), [], 'the abandoned join left files behind');
    assert.equal(await threadsBackTo(baseline), baseline);
});

test('concurrency: three meshes of two, each formed by two workers of this process, at once', async () => {
    const directory = scratch('uform-node-pairs');
    // Each pair is a job of its own in one directory: three runs side by side, as a shared scratch holds them.
    const pairs = [0, 1, 2].map((pair) => [0, 1].map((index) => start('peer', { directory, index, pair })));
    const descriptions = await deadline(Promise.all(pairs.flat().map((w) => w.next())), 60_000, 'three meshes of two');
    descriptions.forEach((d, i) => {
        assert.equal(d.hostDomainIndex, i % 2);
        assert.equal(d.hostDomainCount, 2);
    });
    await deadline(Promise.all(pairs.flat().map((w) => w.exited)), 30_000, 'the peers\' exit');
    assert.deepEqual(readdirSync(directory), [], 'after every member freed, the job directory is gone');
});

test('concurrency: an Executor posted to a worker arrives as a plain object that bootstrap refuses', async () => {
    const w = start('receive');
    assert.equal(await deadline(w.next(), 60_000, 'a worker getting ready'), 'ready');
    const executor = Executor.forRam({ threads: 1 });
    w.worker.postMessage(executor);
    const reply = await deadline(w.next(), 30_000, 'the worker\'s reply');
    assert.equal(reply.received, '[object Object]');
    assert.deepEqual(reply.keys, [], 'private state does not cross threads');
    assert.equal(reply.outcome.name, 'UFormError');
    assert.equal(reply.outcome.code, 'invalid_argument');
    assert.match(reply.outcome.message, /`executor`/);
    executor.drain();
    executor.free();
    await deadline(w.exited, 30_000, 'the worker\'s exit');
});

test('concurrency: 64 tasks interleave create, drain, mesh and free on one thread', async () => {
    const task = async (id) => {
        for (let k = 0; k < 10; k++) {
            const executor = Executor.forRam({ threads: id % 2 ? 2 : 1 });
            await tick();
            // Spinning only between two awaits: 32 spinning workers across them would starve a small machine.
            executor.drain(Mood.Spinning);
            executor.drain(Mood.Parked);
            const mesh = Mesh.bootstrap(executor);
            await tick();
            assert.equal(mesh.describe().hostDomainCount, 1);
            throwsUForm(() => executor.free(), 'in_use');
            await tick();
            mesh.free();
            executor.drain();
            executor.free();
        }
        return id;
    };
    const ids = await deadline(Promise.all(Array.from({ length: 64 }, (_, id) => task(id))), 120_000, '64 interleaved tasks');
    assert.equal(ids.length, 64);
    assert.equal(await threadsBackTo(baseline), baseline);
});
