// Scenarios 16–17: every error carries its kind and names the argument and the value; records are plain values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspect } from 'node:util';
import * as uform from 'uform';
import { Executor, Mesh, UFormError } from 'uform';
import { throwsUForm } from './helpers.mjs';

test('16 every error is a UFormError with code, name and a message naming the argument and the value', () => {
    const cases = [
        [() => Executor.forRam({ threads: 0 }), 'invalid_argument', 'threads'],
        [() => Executor.forRam({ threads: -3 }), 'invalid_argument', 'threads', '-3'],
        [() => Executor.forRam({ cpuClass: 'x' }), 'invalid_argument', 'cpuClass', '"x"'],
        [() => Executor.onPool(1n), 'unsupported'],
        [() => Executor.onPool(1), 'invalid_argument', 'pool', '1'],
    ];
    if (uform.gpuDevices().length === 0) cases.push([() => Executor.forVram(), 'unavailable']);
    for (const [call, code, ...mentions] of cases) {
        const error = throwsUForm(call, code, ...mentions);
        assert.ok(error.stack.includes('UFormError'));
        assert.ok(Object.keys(error).includes('code'));
    }
});

test('16 UFormError is exported, extends Error and is not constructible into a wrong shape', () => {
    const error = new UFormError('timeout', 'waited');
    assert.ok(error instanceof Error);
    assert.equal(error.code, 'timeout');
    assert.equal(error.message, 'waited');
    assert.equal(error.name, 'UFormError');
});

test('16 classes have no public constructor', () => {
    assert.throws(() => new Executor(), TypeError);
    assert.throws(() => new Mesh(), TypeError);
    assert.throws(() => Reflect.construct(Executor, [Symbol('uform.private')]), TypeError);
});

test('17 records compare by value and print as plain objects', () => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor);
    const a = mesh.describe();
    const b = mesh.describe();
    assert.notEqual(a, b);
    assert.deepStrictEqual(a, b);
    assert.deepStrictEqual(JSON.parse(JSON.stringify(a)), a);
    assert.match(inspect(a), /hostDomainIndex: 0/);
    assert.match(inspect(a), /multimemTier: '(peer-read|switch-reduced)'/);
    assert.deepStrictEqual(Object.keys(a).sort(), ['gpus', 'gpusPerMultimemDomain', 'hostDomainCount', 'hostDomainIndex', 'multimemDomainCount', 'multimemTier']);
    mesh.free();
    executor.free();
});

test('17 meshOptionsFromEnvironment is null outside torchrun and SLURM, options when launched by them', () => {
    const saved = { ...process.env };
    try {
        for (const name of ['RANK', 'WORLD_SIZE', 'TORCHELASTIC_RUN_ID', 'SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_JOB_ID', 'SLURM_STEP_ID']) delete process.env[name];
        assert.equal(uform.meshOptionsFromEnvironment(), null);
        Object.assign(process.env, { RANK: '1', WORLD_SIZE: '4', TORCHELASTIC_RUN_ID: 'run-7' });
        const options = uform.meshOptionsFromEnvironment();
        assert.equal(options.hostDomainIndex, 1);
        assert.equal(options.hostDomainCount, 4);
        assert.equal(typeof options.job, 'string');
        assert.ok(!('directory' in options) || options.directory === undefined);
    } finally {
        for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
        Object.assign(process.env, saved);
    }
});
