// Scenarios 5–10: the executor life cycle and its errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as uform from 'uform';
import { Executor, Mood } from 'uform';
import { isGpuClass, throwsUForm } from './helpers.mjs';

const cpuClass = uform.capabilitiesAvailable().split(',').filter((n) => !isGpuClass(n)).pop();

test('05 forRam with no config creates an executor; drain returns in every mood', () => {
    const executor = Executor.forRam();
    executor.drain();
    executor.drain(Mood.Parked);
    executor.drain(Mood.Spinning);
    executor.drain(Mood.Parked);
    executor.free();
});

test('05 forRam with every field set creates an executor', () => {
    const executor = Executor.forRam({ memoryDomains: [0], cpuClass, threads: 2, deferredLimit: 8 });
    executor.drain(Mood.Spinning);
    executor.free();
    Executor.forRam({}).free();
    Executor.forRam(undefined).free();
});

test('05 an executor and its compiled handle', () => {
    const executor = Executor.forRam({ threads: 1 });
    const compiled = executor.compiled;
    assert.equal(compiled, executor.compiled);
    assert.equal(compiled.constructor.name, 'CompiledExecutor');
    compiled.drain(Mood.Spinning);
    executor.free();
});

test('06 free twice is fine; any other call after free is a freed-handle error', () => {
    const executor = Executor.forRam({ threads: 1 });
    executor.free();
    executor.free();
    throwsUForm(() => executor.drain(), 'freed_handle', 'drain');
    throwsUForm(() => executor.drain(Mood.Spinning), 'freed_handle');
    throwsUForm(() => uform.Mesh.bootstrap(executor), 'freed_handle');
    executor.free();
});

test('07 [Symbol.dispose] frees the executor (what `using` calls; `using` itself is checked by tsc)', () => {
    assert.equal(typeof Symbol.dispose, 'symbol');
    const executor = Executor.forRam({ threads: 1 });
    assert.equal(typeof executor[Symbol.dispose], 'function');
    executor[Symbol.dispose]();
    throwsUForm(() => executor.drain(), 'freed_handle');
    executor[Symbol.dispose]();
});

test('07 a forgotten executor is freed by the collector', { skip: typeof globalThis.gc !== 'function' && 'run with --expose-gc' }, async () => {
    for (let i = 0; i < 64; i++) Executor.forRam({ threads: 1 });
    for (let i = 0; i < 4; i++) {
        globalThis.gc();
        await new Promise((resolve) => setImmediate(resolve));
    }
    // Nothing to observe but that the process stays healthy and can still make executors.
    Executor.forRam({ threads: 1 }).free();
});

test('08 explicit zero threads, deferredLimit: invalid argument', () => {
    throwsUForm(() => Executor.forRam({ threads: 0 }), 'invalid_argument', 'threads', '0');
    throwsUForm(() => Executor.forRam({ deferredLimit: 0 }), 'invalid_argument', 'deferredLimit', '0');
});

test('08 negative, fractional, NaN, infinite and non-number counts: invalid argument naming the value', () => {
    throwsUForm(() => Executor.forRam({ threads: -1 }), 'invalid_argument', 'threads', '-1');
    throwsUForm(() => Executor.forRam({ threads: 1.5 }), 'invalid_argument', 'threads', '1.5');
    throwsUForm(() => Executor.forRam({ threads: NaN }), 'invalid_argument', 'threads', 'NaN');
    throwsUForm(() => Executor.forRam({ threads: Infinity }), 'invalid_argument', 'threads', 'Infinity');
    throwsUForm(() => Executor.forRam({ threads: 2 ** 32 }), 'invalid_argument', 'threads', '4294967296');
    throwsUForm(() => Executor.forRam({ threads: '2' }), 'invalid_argument', 'threads', '"2"');
    throwsUForm(() => Executor.forRam({ threads: 2n }), 'invalid_argument', 'threads', '2n');
    throwsUForm(() => Executor.forRam({ deferredLimit: -8 }), 'invalid_argument', 'deferredLimit', '-8');
    throwsUForm(() => Executor.forRam({ memoryDomains: [0, -1] }), 'invalid_argument', 'memoryDomains[1]', '-1');
    throwsUForm(() => Executor.forRam({ memoryDomains: 0 }), 'invalid_argument', 'memoryDomains', 'array');
    throwsUForm(() => Executor.forRam({ cpuClass: 7 }), 'invalid_argument', 'cpuClass', '7');
    throwsUForm(() => Executor.forRam(5), 'invalid_argument', 'config', '5');
    throwsUForm(() => Executor.forRam([]), 'invalid_argument', 'config', 'array');
});

test('08 an unknown NUMA node: invalid argument naming it', () => {
    throwsUForm(() => Executor.forRam({ memoryDomains: [4096] }), 'invalid_argument', 'memoryDomains', '4096');
    throwsUForm(() => Executor.forRam({ memoryDomains: [] }), 'invalid_argument', 'memoryDomains');
});

test('08 an unknown CPU class is invalid; one this CPU cannot run is unsupported', () => {
    throwsUForm(() => Executor.forRam({ cpuClass: 'no-such-class' }), 'invalid_argument', 'cpuClass', 'no-such-class');
    const foreign = process.arch === 'x64' ? 'arm-sve2' : 'intel-sapphirerapids';
    if (!uform.capabilitiesAvailable().split(',').includes(foreign)) {
        throwsUForm(() => Executor.forRam({ cpuClass: foreign }), 'unsupported', foreign);
    }
});

test('08 drain with an unknown mood: invalid argument listing the moods', () => {
    const executor = Executor.forRam({ threads: 1 });
    throwsUForm(() => executor.drain(7), 'invalid_argument', 'mood', '7', 'Parked', 'Spinning');
    throwsUForm(() => executor.drain('Parked'), 'invalid_argument', 'mood', '"Parked"');
    throwsUForm(() => executor.drain(0.5), 'invalid_argument', 'mood', '0.5');
    executor.drain(null);
    executor.free();
});

test('09 onPool is the unsupported error; a number where a bigint belongs is invalid', () => {
    throwsUForm(() => Executor.onPool(0x1000n), 'unsupported', 'onPool');
    throwsUForm(() => Executor.onPool(0x1000n, { deferredLimit: 4 }), 'unsupported');
    throwsUForm(() => Executor.onPool(4096), 'invalid_argument', 'pool', 'bigint', '4096');
    throwsUForm(() => Executor.onPool(undefined), 'invalid_argument', 'pool', 'undefined');
    throwsUForm(() => Executor.onPool(-1n), 'invalid_argument', 'pool', '-1n');
    throwsUForm(() => Executor.onPool(2n ** 64n), 'invalid_argument', 'pool', '18446744073709551616n');
});

test('10 forVram without GPUs is the unavailable error', { skip: uform.gpuDevices().length > 0 && 'this machine has GPUs' }, () => {
    throwsUForm(() => Executor.forVram(), 'unavailable', 'GPU');
    throwsUForm(() => Executor.forVram({}), 'unavailable');
    throwsUForm(() => Executor.forVram({ devices: [99] }), 'unavailable');
});

test('10 forVram: a stream count that does not match, an unknown GPU class, bad devices and streams', () => {
    throwsUForm(() => Executor.forVram({ devices: [0, 1], streams: [1n] }), 'invalid_argument', 'streams');
    throwsUForm(() => Executor.forVram({ gpuClass: 'nvidia-riva-tnt' }), 'invalid_argument', 'gpuClass', 'nvidia-riva-tnt');
    throwsUForm(() => Executor.forVram({ devices: [] }), 'invalid_argument', 'devices');
    throwsUForm(() => Executor.forVram({ devices: [0, 0] }), 'invalid_argument', 'devices');
    throwsUForm(() => Executor.forVram({ devices: [0.5] }), 'invalid_argument', 'devices[0]', '0.5');
    throwsUForm(() => Executor.forVram({ devices: [0], streams: [16] }), 'invalid_argument', 'streams[0]', 'bigint');
    throwsUForm(() => Executor.forVram({ scratchLimit: -1 }), 'invalid_argument', 'scratchLimit', '-1');
});

test('10 an out-of-range device is the documented error', () => {
    const code = uform.gpuDevices().length === 0 ? 'unavailable' : 'invalid_argument';
    throwsUForm(() => Executor.forVram({ devices: [uform.gpuDevices().length + 7] }), code);
});
