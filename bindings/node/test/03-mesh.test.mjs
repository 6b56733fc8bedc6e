// Scenarios 11–15: meshes of one process and of several.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync, symlinkSync, lstatSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Executor, Mesh, MultimemTier } from 'uform';
import { scratch, throwsUForm } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const tiers = Object.values(MultimemTier);

test('11 a mesh of one process with a RAM executor describes index 0 of 1', () => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor);
    const description = mesh.describe();
    assert.equal(description.hostDomainIndex, 0);
    assert.equal(description.hostDomainCount, 1);
    assert.deepEqual(description.gpus, []);
    assert.equal(typeof description.gpusPerMultimemDomain, 'number');
    assert.equal(typeof description.multimemDomainCount, 'number');
    assert.ok(tiers.includes(description.multimemTier), description.multimemTier);
    assert.equal(mesh.compiled.constructor.name, 'CompiledMesh');
    assert.deepEqual(mesh.compiled.describe(), description);
    mesh.free();
    mesh.free();
    throwsUForm(() => mesh.describe(), 'freed_handle', 'describe');
    executor.free();
});

test('11 a mesh of one process with explicit options', () => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor, { hostDomainIndex: 0, hostDomainCount: 1, timeoutSeconds: 1 });
    assert.equal(mesh.describe().hostDomainCount, 1);
    mesh.free();
    executor.free();
});

test('12 peers without directory or job, a bad job name, an index outside the count: invalid argument', () => {
    const executor = Executor.forRam({ threads: 1 });
    const directory = scratch('uform-node-12');
    const peers = { hostDomainIndex: 0, hostDomainCount: 2, timeoutSeconds: 1 };
    throwsUForm(() => Mesh.bootstrap(executor, { ...peers, job: 'j' }), 'invalid_argument', 'directory');
    throwsUForm(() => Mesh.bootstrap(executor, { ...peers, directory }), 'invalid_argument', 'job');
    for (const job of ['', '..', 'a/b']) throwsUForm(() => Mesh.bootstrap(executor, { ...peers, directory, job }), 'invalid_argument', 'job');
    throwsUForm(() => Mesh.bootstrap(executor, { ...peers, hostDomainIndex: 2, directory, job: 'j' }), 'invalid_argument', 'hostDomainIndex', '2');
    throwsUForm(() => Mesh.bootstrap(executor, { hostDomainCount: 0 }), 'invalid_argument', 'hostDomainCount', '0');
    throwsUForm(() => Mesh.bootstrap(executor, { timeoutSeconds: 0 }), 'invalid_argument', 'timeoutSeconds', '0');
    throwsUForm(() => Mesh.bootstrap(executor, { hostDomainIndex: -1 }), 'invalid_argument', 'hostDomainIndex', '-1');
    throwsUForm(() => Mesh.bootstrap(executor, { job: 5 }), 'invalid_argument', 'job', '5');
    throwsUForm(() => Mesh.bootstrap(undefined), 'invalid_argument', 'executor', 'undefined');
    throwsUForm(() => Mesh.bootstrap({ compiled: executor.compiled }), 'invalid_argument', 'executor', 'Executor');
    assert.deepEqual(readdirSync(directory), []);
    executor.free();
});

test('13 a peer that never comes: the timeout error naming the missing index, nothing left behind', () => {
    const executor = Executor.forRam({ threads: 1 });
    const directory = scratch('uform-node-13');
    const job = `lonely-${process.pid}`;
    const error = throwsUForm(
        () => Mesh.bootstrap(executor, { hostDomainIndex: 0, hostDomainCount: 2, directory, job, timeoutSeconds: 1 }),
        'timeout',
        /\b1\b/,
    );
    assert.match(error.message, /never joined/);
    assert.ok(!existsSync(join(directory, job)), `left ${readdirSync(directory)}`);
    assert.deepEqual(readdirSync(directory), []);
    executor.free();
});

/** Runs `node mesh-peer.mjs …` and resolves with its parsed description. */
function peer(directory, job, index, count) {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [join(here, 'mesh-peer.mjs'), directory, job, String(index), String(count)], {
            stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.stderr.on('data', (chunk) => (err += chunk));
        child.on('error', reject);
        child.on('close', (code) => {
            if (code === 0) resolve(JSON.parse(out));
            else reject(new Error(`peer ${index} exited with ${code}: ${err}`));
        });
    });
}

test('14 four processes meet in one directory; each describe agrees; after all free the job directory is gone', async () => {
    const directory = scratch('uform-node-14');
    const job = `four-${process.pid}`;
    const count = 4;
    const descriptions = await Promise.all([0, 1, 2, 3].map((index) => peer(directory, job, index, count)));
    descriptions.forEach((description, index) => {
        assert.equal(description.hostDomainIndex, index);
        assert.equal(description.hostDomainCount, count);
        assert.ok(tiers.includes(description.multimemTier));
        const { hostDomainIndex: _a, ...shape } = description;
        const { hostDomainIndex: _b, ...first } = descriptions[0];
        assert.deepEqual(shape, first, 'every process describes the same run');
    });
    assert.ok(!existsSync(join(directory, job)), `left ${readdirSync(directory)}`);
});

test('14 a leftover job directory from an earlier run does not stop a new one', async () => {
    const directory = scratch('uform-node-14b');
    const job = `again-${process.pid}`;
    mkdirSync(join(directory, job));
    writeFileSync(join(directory, job, 'leftover.txt'), 'from an earlier run');
    const descriptions = await Promise.all([0, 1].map((index) => peer(directory, job, index, 2)));
    assert.deepEqual(descriptions.map((d) => d.hostDomainIndex), [0, 1]);
});

test('15 [Symbol.dispose] frees the mesh; freeing the executor under a live mesh is in use', () => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor);
    throwsUForm(() => executor.free(), 'in_use', 'Executor');
    executor.drain();
    mesh[Symbol.dispose]();
    throwsUForm(() => mesh.describe(), 'freed_handle');
    executor.free();
    throwsUForm(() => executor.drain(), 'freed_handle');
});

test('18 a job name planted as a link to another folder is refused as a conflict, and nothing is written there', () => {
    const executor = Executor.forRam({ threads: 1 });
    const directory = scratch('uform-node-18');
    const victim = scratch('uform-node-18-victim');
    writeFileSync(join(victim, 'data.txt'), 'precious');
    symlinkSync(victim, join(directory, 'job1'));
    const options = { hostDomainIndex: 0, hostDomainCount: 2, directory, job: 'job1', timeoutSeconds: 5 };
    throwsUForm(() => Mesh.bootstrap(executor, options), 'conflict', 'symbolic link', victim, 'nothing was written');
    assert.deepEqual(readdirSync(victim), ['data.txt']);
    assert.equal(readFileSync(join(victim, 'data.txt'), 'utf8'), 'precious');
    assert.deepEqual(readdirSync(directory), ['job1']);
    assert.ok(lstatSync(join(directory, 'job1')).isSymbolicLink());
    // The `group` option crosses the binding: a group this host does not know is an invalid argument.
    throwsUForm(() => Mesh.bootstrap(executor, { ...options, job: 'fresh', group: 'uform-no-such-group' }), 'invalid_argument', 'group');
    assert.deepEqual(readdirSync(directory), ['job1']);
    executor.free();
});
