// The worker half of concurrency.test.mjs: one `worker_threads` worker that loads the package itself and uses it
// as the test asks through `workerData.task`. Reports through `parentPort`.
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { capabilitiesAvailable, capabilitiesCompiled, Executor, gpuDevices, Mesh, Mood } from 'uform';

const { task, directory, iterations } = workerData;

/**
 * One round of everything an executor's life has: create, drain in both moods, a mesh of one (with a directory and
 * a job of its own, as a run would pass them), describe, free. Every fourth round keeps its executor and mesh
 * unfreed (and parked), for the environment's teardown to release when the worker ends.
 */
function round(k, kept) {
    const executor = Executor.forRam({ threads: 2 });
    const keep = k % 4 === 3;
    executor.drain(keep ? Mood.Parked : k % 2 === 0 ? Mood.Spinning : Mood.Parked);
    const mesh = Mesh.bootstrap(executor, { hostDomainIndex: 0, hostDomainCount: 1, directory, job: `t${threadId}-${k}`, timeoutSeconds: 5 });
    const description = mesh.describe();
    if (description.hostDomainIndex !== 0 || description.hostDomainCount !== 1) throw new Error(`a mesh of one described ${JSON.stringify(description)}`);
    if (capabilitiesCompiled().length === 0 || capabilitiesAvailable().length === 0 || !Array.isArray(gpuDevices())) throw new Error('discovery');
    if (keep) {
        kept.push(executor, mesh);
        if (kept.length > 16) kept.length = 0; // dropped without free: the collector's or the teardown's to release
        return;
    }
    executor.drain();
    mesh.free();
    executor.free();
}

if (task === 'rounds') {
    const kept = [];
    for (let k = 0; k < iterations; k++) round(k, kept);
    parentPort.postMessage({ threadId, rounds: iterations, kept: kept.length / 2 });
} else if (task === 'forever') {
    // Runs until terminated; says so once it is under way, so the test terminates it mid-use.
    const kept = [];
    for (let k = 0; ; k++) {
        round(k, kept);
        if (k === 2) parentPort.postMessage('running');
    }
} else if (task === 'waiting') {
    // Blocks in bootstrap for a peer that never comes; the test terminates it while it waits.
    const executor = Executor.forRam({ threads: 2 });
    parentPort.postMessage('joining');
    Mesh.bootstrap(executor, { hostDomainIndex: 0, hostDomainCount: 2, directory, job: 'never-complete', timeoutSeconds: 2 });
} else if (task === 'peer') {
    // One member of a mesh of two formed by two workers of one process.
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor, { hostDomainIndex: workerData.index, hostDomainCount: 2, directory, job: `pair-${workerData.pair}`, timeoutSeconds: 30 });
    const description = mesh.describe();
    mesh.free();
    executor.free();
    parentPort.postMessage(description);
} else if (task === 'receive') {
    // What arrives here of an Executor posted from another thread: a structured clone, which is no Executor.
    parentPort.once('message', (value) => {
        let outcome;
        try {
            Mesh.bootstrap(value).free();
            outcome = { code: 'ok' };
        } catch (error) {
            outcome = { name: error.constructor.name, code: error.code, message: error.message };
        }
        parentPort.postMessage({ received: Object.prototype.toString.call(value), keys: Object.keys(value), outcome });
    });
    parentPort.postMessage('ready');
} else {
    throw new Error(`unknown task ${task}`);
}
