// Issue 9, bad input: every public function, constructor and method called with every kind of bad value JavaScript
// allows. Each case is one row of a table: the call, and what it must give — a UFormError with its code (and a
// message naming the argument), the TypeError JavaScript raises for a wrong `this` or a missing constructor, the
// caller's own exception passed through, or a normal return. Nothing may crash the process; the calls that could
// take it down for good (huge counts that allocate or spawn by the count) run in child processes, one per case.
// Every group reports its count as a test diagnostic, and the last test prints the total.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as uform from 'uform';
import { Executor, Mesh, Mood } from 'uform';
import { scratch } from './helpers.mjs';
import {
    noGpus,
    uf,
    typeError,
    ok,
    raw,
    runTable,
    symbol,
    fn,
    badCounts,
    badPositiveCounts,
    badStrings,
    notArrays,
    badNumberElements,
    badBigintElements,
    notObjects,
    badMoods,
    fieldCases,
    elementCases,
    throwingConfigCases,
    cpuClass,
    unknownCpuClasses,
    reportTotal,
} from './bad-input-cases.mjs';

// ---------------------------------------------------------------------------------------------------------------

test('bad input: Executor.forRam', (t) => {
    const make = (config) => Executor.forRam(config);
    const cases = [
        ...notObjects.map(([label, value]) => [`forRam config: ${label}`, () => Executor.forRam(value), uf('invalid_argument', 'config')]),
        ...fieldCases('forRam', make, 'threads', badPositiveCounts),
        ...fieldCases('forRam', make, 'deferredLimit', badPositiveCounts),
        ...fieldCases('forRam', make, 'memoryDomains', [...notArrays, ['an empty array', []], ['an unknown node', [4096]], ['node 2**32-1', [2 ** 32 - 1]], ['a node twice', [0, 0]]]),
        ...elementCases('forRam', make, 'memoryDomains', badNumberElements),
        ...fieldCases('forRam', make, 'cpuClass', [...badStrings, ...unknownCpuClasses]),
        ...throwingConfigCases('forRam', make, 'threads'),
        // What reads as a valid config: absent, empty, any object (fields are read by name), unknown keys (the
        // TypeScript declarations reject those at compile time; at run time they are ignored), extra arguments.
        ['forRam config: undefined', () => Executor.forRam(undefined), ok],
        ['forRam config: null', () => Executor.forRam(null), ok],
        ['forRam config: a null-prototype object', () => Executor.forRam(Object.assign(Object.create(null), { threads: 1 })), ok],
        ['forRam config: a class instance', () => Executor.forRam(new (class { threads = 1; })()), ok],
        ['forRam config: unknown keys', () => Executor.forRam({ threads: 1, thread: 99, numaNodes: 'x' }), ok],
        ['forRam extra arguments', () => Executor.forRam({ threads: 1 }, 'extra', 5, symbol, {}), ok],
        ['forRam threads: undefined and null read as absent', () => Executor.forRam({ threads: undefined, deferredLimit: null, cpuClass: undefined, memoryDomains: null }), ok],
    ];
    runTable(t, 'Executor.forRam', cases);
});

test('bad input: Executor.forVram', (t) => {
    const make = (config) => Executor.forVram(config);
    const cases = [
        ...notObjects.map(([label, value]) => [`forVram config: ${label}`, () => Executor.forVram(value), uf('invalid_argument', 'config')]),
        // A value of the wrong type is refused while the config is read, before any device is looked for.
        ...fieldCases('forVram', make, 'devices', notArrays),
        ...elementCases('forVram', make, 'devices', badNumberElements),
        ...fieldCases('forVram', make, 'streams', notArrays),
        ...elementCases('forVram', (c) => make({ devices: [0], ...c }), 'streams', badBigintElements),
        // A byte size is exact up to 2^53 - 1, so 2^32 is no bad value for it.
        ...fieldCases('forVram', make, 'scratchLimit', badPositiveCounts.filter(([label]) => label !== '2**32')),
        ...fieldCases('forVram', make, 'deferredLimit', badPositiveCounts),
        ...fieldCases('forVram', make, 'memoryDomains', notArrays),
        ...elementCases('forVram', make, 'memoryDomains', badNumberElements),
        ...fieldCases('forVram', make, 'gpuClass', [...badStrings, ['an unknown class', 'nvidia-riva-tnt'], ['a CPU class', cpuClass], ['an empty name', '']]),
        ...fieldCases('forVram', make, 'cpuClass', badStrings),
        ['forVram streams: one more than the devices', () => Executor.forVram({ devices: [0], streams: [1n, 2n] }), uf('invalid_argument', 'streams')],
        ...throwingConfigCases('forVram', make, 'devices'),
    ];
    if (noGpus) {
        cases.push(
            ['forVram config: unknown keys (then no GPU)', () => Executor.forVram({ device: 0 }), uf('unavailable')],
            ['forVram extra arguments (then no GPU)', () => Executor.forVram(undefined, 'extra', 5), uf('unavailable')],
            ['forVram devices: 2**32-1 (then no GPU)', () => Executor.forVram({ devices: [2 ** 32 - 1] }), uf('unavailable')],
        );
    }
    runTable(t, 'Executor.forVram', cases);
});

test('bad input: Executor.onPool', (t) => {
    const make = (config) => Executor.onPool(0x1000n, config);
    const cases = [
        ...[
            ['undefined', undefined],
            ['null', null],
            ['a number', 4096],
            ['a number 2**53', 2 ** 53],
            ['NaN', NaN],
            ['-1n', -1n],
            ['-(2n**64n)', -(2n ** 64n)],
            ['2n**64n', 2n ** 64n],
            ['2n**128n', 2n ** 128n],
            ['a string', '4096'],
            ['a boolean', true],
            ['an object', {}],
            ['an array', [4096n]],
            ['a symbol', symbol],
            ['a function', fn],
            ['a boxed bigint', Object(4096n)],
        ].map(([label, value]) => [`onPool pool: ${label}`, () => Executor.onPool(value), uf('invalid_argument', 'pool')]),
        ...notObjects.map(([label, value]) => [`onPool config: ${label}`, () => Executor.onPool(0x1000n, value), uf('invalid_argument', 'config')]),
        ...fieldCases('onPool', make, 'deferredLimit', badPositiveCounts),
        ...fieldCases('onPool', make, 'memoryDomains', [...notArrays, ['an unknown node', [4096]]]),
        ...elementCases('onPool', make, 'memoryDomains', badNumberElements),
        ...fieldCases('onPool', make, 'cpuClass', [...badStrings, ...unknownCpuClasses]),
        // A valid pool, however odd, reaches the documented unsupported error.
        ['onPool pool: 0n', () => Executor.onPool(0n), uf('unsupported')],
        ['onPool pool: 2n**64n-1n', () => Executor.onPool(2n ** 64n - 1n), uf('unsupported')],
        ['onPool unknown keys', () => Executor.onPool(1n, { threads: 4 }), uf('unsupported')],
        ['onPool extra arguments', () => Executor.onPool(1n, undefined, 'extra'), uf('unsupported')],
    ];
    runTable(t, 'Executor.onPool', cases);
});

test('bad input: executor.drain and the compiled handle', (t) => {
    const executor = Executor.forRam({ threads: 1 });
    const cases = [
        ...badMoods.map(([label, value]) => [`drain mood: ${label}`, () => executor.drain(value), uf('invalid_argument', 'mood')]),
        ...badMoods.map(([label, value]) => [`compiled.drain mood: ${label}`, () => executor.compiled.drain(value), raw('invalid_argument', 'mood')]),
        ['drain mood: undefined', () => executor.drain(undefined), ok],
        ['drain mood: null', () => executor.drain(null), ok],
        ['drain extra arguments', () => executor.drain(Mood.Spinning, 'extra', symbol), ok],
        ['drain back to parked', () => executor.drain(Mood.Parked, 7), ok],
        ['compiled.drain extra arguments', () => executor.compiled.drain(Mood.Parked, 'extra'), ok],
    ];
    runTable(t, 'Executor.drain', cases);
    executor.free();
});

test('bad input: Mesh.bootstrap', (t) => {
    const executor = Executor.forRam({ threads: 1 });
    const other = Executor.forRam({ threads: 1 });
    const aMesh = Mesh.bootstrap(other);
    const directory = scratch('uform-node-bad');
    const file = join(directory, 'a-file');
    writeFileSync(file, 'not a directory');
    const make = (options) => Mesh.bootstrap(executor, options);
    // With peers, so that `directory` and `job` are read and used; each case fails before any wait.
    const peers = (options) => make({ hostDomainIndex: 0, hostDomainCount: 2, timeoutSeconds: 1, directory, job: 'bad-input', ...options });
    const cases = [
        ...[
            ['undefined', undefined],
            ['null', null],
            ['a number', 5],
            ['a string', 'executor'],
            ['a bigint', 5n],
            ['a symbol', symbol],
            ['a function', fn],
            ['an object', {}],
            ['an array', [executor]],
            ['its compiled handle', executor.compiled],
            ['an object holding its compiled handle', { compiled: executor.compiled }],
            ['a Mesh', aMesh],
            ['the Executor class', Executor],
            ['Executor.prototype', Executor.prototype],
        ].map(([label, value]) => [`bootstrap executor: ${label}`, () => Mesh.bootstrap(value), uf('invalid_argument', 'executor')]),
        // An object that passes `instanceof` but was never made by the package fails on its missing private state.
        ['bootstrap executor: Object.create(Executor.prototype)', () => Mesh.bootstrap(Object.create(Executor.prototype)), typeError],
        ...notObjects.map(([label, value]) => [`bootstrap options: ${label}`, () => Mesh.bootstrap(executor, value), uf('invalid_argument', 'options')]),
        ...fieldCases('bootstrap', make, 'hostDomainIndex', badCounts),
        ...fieldCases('bootstrap', make, 'hostDomainCount', badPositiveCounts),
        ...fieldCases('bootstrap', make, 'gpusPerMultimemDomain', badPositiveCounts),
        ...fieldCases('bootstrap', make, 'timeoutSeconds', badPositiveCounts),
        ...fieldCases('bootstrap', peers, 'directory', [...badStrings, ['an empty path', '']]),
        // A directory that cannot be used is the I/O error naming the path.
        ['bootstrap directory: missing', () => peers({ directory: join(directory, 'no', 'such') }), uf('io', join(directory, 'no', 'such'))],
        ['bootstrap directory: a file', () => peers({ directory: file }), uf('io', file)],
        ...fieldCases('bootstrap', peers, 'job', [
            ...badStrings,
            ['an empty name', ''],
            ['"."', '.'],
            ['".."', '..'],
            ['a slash', 'a/b'],
            ['a leading slash', '/etc'],
            ['a backslash', 'a\\b'],
        ]),
        // A name the file system refuses (longer than NAME_MAX) is the I/O error naming the path.
        ['bootstrap job: 256 characters', () => peers({ job: 'j'.repeat(256) }), uf('io', directory)],
        ['bootstrap hostDomainIndex: equal to the count', () => peers({ hostDomainIndex: 2 }), uf('invalid_argument', 'hostDomainIndex')],
        ['bootstrap hostDomainIndex: beyond the count', () => peers({ hostDomainIndex: 2 ** 32 - 1 }), uf('invalid_argument', 'hostDomainIndex')],
        ['bootstrap peers: no directory', () => peers({ directory: undefined }), uf('invalid_argument', 'directory')],
        ['bootstrap peers: no job', () => peers({ job: null }), uf('invalid_argument', 'job')],
        ...throwingConfigCases('bootstrap', make, 'hostDomainCount'),
        ['bootstrap options: unknown keys', () => make({ hostDomainCount: 1, rank: 3, worldSize: 8 }), ok],
        ['bootstrap extra arguments', () => Mesh.bootstrap(executor, undefined, 'extra', symbol), ok],
        ['bootstrap a mesh of one ignores directory and job', () => make({ directory: '\u00e9', job: 'x' }), ok],
    ];
    runTable(t, 'Mesh.bootstrap', cases);
    // Nothing was left behind in the directory by any of them.
    assert.deepEqual(readdirSync(directory).sort(), ['a-file']);
    aMesh.free();
    other.free();
    executor.free();
});

test('bad input: mesh.describe, free and the compiled handle', (t) => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor);
    const cases = [
        ['describe extra arguments', () => mesh.describe('extra', 5, symbol), ok],
        ['compiled.describe extra arguments', () => mesh.compiled.describe('extra'), ok],
        ['free extra arguments', () => Mesh.bootstrap(executor).free('extra', symbol), ok],
        ['dispose extra arguments', () => Mesh.bootstrap(executor)[Symbol.dispose]('extra'), ok],
        ['executor.free extra arguments', () => Executor.forRam({ threads: 1 }).free(5, 'x'), ok],
        ['executor dispose extra arguments', () => Executor.forRam({ threads: 1 })[Symbol.dispose](5), ok],
    ];
    runTable(t, 'Mesh and Executor methods', cases);
    mesh.free();
    executor.free();
});

test('bad input: the free functions with extra arguments, a wrong this, and new', (t) => {
    const functions = ['gpuDevices', 'capabilitiesCompiled', 'capabilitiesAvailable', 'meshOptionsFromEnvironment'];
    const extras = [undefined, null, 5, NaN, 'x', 5n, symbol, {}, [], fn];
    const cases = [];
    for (const name of functions) {
        const expected = JSON.stringify(uform[name]());
        const same = (call) => () => {
            assert.equal(JSON.stringify(call()), expected, name);
        };
        for (const extra of extras) cases.push([`${name}(${typeof extra === 'symbol' ? 'symbol' : String(extra)})`, same(() => uform[name](extra, extra)), ok]);
        for (const receiver of [undefined, null, 5, symbol, {}, Executor]) {
            cases.push([`${name} with this ${typeof receiver === 'symbol' ? 'symbol' : String(receiver).slice(0, 20)}`, same(() => uform[name].call(receiver)), ok]);
        }
        cases.push([`new ${name}()`, () => void new uform[name](), ok]);
    }
    runTable(t, 'free functions', cases);
});

test('bad input: meshOptionsFromEnvironment with a bad environment', (t) => {
    const names = ['RANK', 'WORLD_SIZE', 'TORCHELASTIC_RUN_ID', 'SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_JOB_ID', 'SLURM_STEP_ID'];
    const saved = Object.fromEntries(names.filter((n) => n in process.env).map((n) => [n, process.env[n]]));
    const withEnvironment = (variables, call) => () => {
        for (const name of names) delete process.env[name];
        Object.assign(process.env, variables);
        try {
            return call();
        } finally {
            for (const name of names) delete process.env[name];
            Object.assign(process.env, saved);
        }
    };
    const read = () => uform.meshOptionsFromEnvironment();
    const torchrun = (rank, worldSize) => ({ RANK: rank, WORLD_SIZE: worldSize, TORCHELASTIC_RUN_ID: 'run' });
    const executor = Executor.forRam({ threads: 1 });
    // What the environment gives but a mesh cannot be: the options are made, and bootstrap refuses them.
    const boot = (variables, argument) => [
        `bootstrap from ${JSON.stringify(variables)}`,
        withEnvironment(variables, () => Mesh.bootstrap(executor, { ...read(), directory: '/nonexistent', timeoutSeconds: 1 })),
        uf('invalid_argument', argument),
    ];
    const cases = [
        ...[['-1'], ['1.5'], ['x'], ['+1'], ['0x1'], ['1e3'], ['\u0663'], ['']].map(([rank]) => [
            `RANK=${JSON.stringify(rank)}`,
            withEnvironment(torchrun(rank, '4'), read),
            uf('invalid_argument', 'RANK'),
        ]),
        ['WORLD_SIZE beyond 32 bits', withEnvironment(torchrun('0', '99999999999999999999'), read), uf('invalid_argument', 'WORLD_SIZE')],
        ['WORLD_SIZE=-2', withEnvironment(torchrun('0', '-2'), read), uf('invalid_argument', 'WORLD_SIZE')],
        ['RANK without WORLD_SIZE', withEnvironment({ RANK: '0' }, read), uf('invalid_argument', 'WORLD_SIZE')],
        ['WORLD_SIZE without RANK', withEnvironment({ WORLD_SIZE: '2' }, read), uf('invalid_argument', 'RANK')],
        ['SLURM_PROCID=x', withEnvironment({ SLURM_PROCID: 'x', SLURM_NTASKS: '2', SLURM_JOB_ID: '7' }, read), uf('invalid_argument', 'SLURM_PROCID')],
        boot(torchrun('4', '4'), 'hostDomainIndex'),
        boot(torchrun('0', '0'), 'hostDomainCount'),
    ];
    runTable(t, 'meshOptionsFromEnvironment', cases);
    executor.free();
});

test('bad input: the total', (t) => reportTotal(t, 'bad-input', 700));
