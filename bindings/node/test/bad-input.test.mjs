// Issue 9, bad input: every public function, constructor and method called with every kind of bad value JavaScript
// allows. Each case is one row of a table: the call, and what it must give — a UFormError with its code (and a
// message naming the argument), the TypeError JavaScript raises for a wrong `this` or a missing constructor, the
// caller's own exception passed through, or a normal return. Nothing may crash the process; the calls that could
// take it down for good (huge counts that allocate or spawn by the count) run in child processes, one per case.
// Every group reports its count as a test diagnostic, and the last test prints the total.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as uform from 'uform';
import { Executor, Mesh, Model, Mood, Trainer, UFormError } from 'uform';
import { isGpuClass, scratch } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const noGpus = uform.gpuDevices().length === 0;

// ---------------------------------------------------------------------------------------------------------------
// What a case expects.

/** A UFormError with `code` whose message names `argument` (in backticks, as every message names it, a field by its path
 * from the parameter: `config.threads`). */
const uf = (code, argument) => ({ kind: 'uform', code, argument });
/** The TypeError the engine raises: a wrong `this`, a class called without `new`, a method that is no constructor. */
const typeError = { kind: 'TypeError' };
/** The error a napi-rs class raises when constructed: it has no constructor (`private constructor()` in the .d.ts). */
const napiNoConstructor = { kind: 'napi-no-constructor' };
/** The call returns; a returned handle is freed. */
const ok = { kind: 'ok' };
/** The caller's own exception (a throwing getter or proxy trap) passes through unchanged. */
const own = (error) => ({ kind: 'own', error });
/**
 * The methods of the `Compiled*` handles (`executor.compiled`, `mesh.compiled`) are the native layer itself: no
 * wrapper translates their errors, so they throw napi's `Error` carrying the UForm `code`, not a `UFormError`.
 */
const raw = (code, argument) => ({ kind: 'raw', code, argument });

function escape(text) {
    return String(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Runs one case; returns a description of what went wrong, or null. */
function runCase([label, call, expected]) {
    let result;
    let caught;
    let threw = false;
    try {
        result = call();
    } catch (error) {
        threw = true;
        caught = error;
    }
    // Whatever a case made, it frees: a handle a bad value did not stop must not outlive the case.
    if (!threw && result && typeof result.free === 'function') {
        try {
            result.free();
        } catch {
            // A mesh's executor, freed by its own case, is not this case's concern.
        }
    }
    const got = threw
        ? `${caught?.constructor?.name ?? typeof caught}${caught?.code ? `(${caught.code})` : ''}: ${String(caught?.message ?? caught).slice(0, 200)}`
        : 'a return';
    const fail = (why) => `${label}: ${why}; got ${got}`;
    switch (expected.kind) {
        case 'ok':
            return threw ? fail('expected a return') : null;
        case 'own':
            return caught === expected.error ? null : fail('expected the caller\'s own exception');
        case 'TypeError':
            if (!threw || !(caught instanceof TypeError) || caught instanceof UFormError) return fail('expected a TypeError');
            return null;
        case 'napi-no-constructor':
            if (!threw || !(caught instanceof Error) || !/constructor/.test(caught.message)) return fail('expected napi\'s no-constructor error');
            return null;
        case 'uform':
        case 'raw': {
            if (!threw) return fail(`expected ${expected.code}`);
            if (expected.kind === 'uform' && !(caught instanceof UFormError)) return fail(`expected a UFormError ${expected.code}`);
            if (!(caught instanceof Error)) return fail('expected an Error');
            if (caught.code !== expected.code) return fail(`expected code ${expected.code}`);
            // A field is named by its path from the parameter (`config.threads`); a parameter by its own name.
            if (expected.argument && !new RegExp(`\`(?:[A-Za-z]+\\.)?${escape(expected.argument)}`).test(caught.message)) {
                return fail(`expected the message to name \`${expected.argument}\``);
            }
            return null;
        }
        default:
            throw new Error(`unknown expectation ${expected.kind}`);
    }
}

const counts = new Map();

/** Runs a table; fails listing every case that went wrong, and reports the table's size. */
function runTable(t, name, cases) {
    const failures = cases.map(runCase).filter(Boolean);
    counts.set(name, cases.length);
    t.diagnostic(`${name}: ${cases.length} cases`);
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases failed:\n${failures.join('\n')}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The kinds of bad value, by what the slot expects. Each is [label, value].

const symbol = Symbol('bad');
const fn = () => 1;

/** What is not a number at all. */
const notNumbers = [
    ['a string', '2'],
    ['an empty string', ''],
    ['a bigint', 2n],
    ['a boolean', true],
    ['an object', {}],
    ['an array', []],
    ['an array of a number', [1]],
    ['a symbol', symbol],
    ['a function', fn],
    ['a boxed number', new Number(2)],
    ['a Date', new Date(0)],
];
/** Numbers no count may take: negative, fractional, not finite, beyond 32 bits, beyond 2^53. */
const badNumbers = [
    ['-1', -1],
    ['-2**31', -(2 ** 31)],
    ['1.5', 1.5],
    ['-0.5', -0.5],
    ['Number.EPSILON', Number.EPSILON],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['2**32', 2 ** 32],
    ['2**53', 2 ** 53],
    ['2**64', 2 ** 64],
    ['Number.MAX_VALUE', Number.MAX_VALUE],
    ['2n**64n', 2n ** 64n],
    ['-1n', -1n],
];
const badCounts = [...badNumbers, ...notNumbers];
/** Counts where a positive one is required also refuse zero, written either way. */
const badPositiveCounts = [...badCounts, ['0', 0], ['-0', -0]];

const notStrings = [
    ['a number', 5],
    ['NaN', NaN],
    ['a bigint', 5n],
    ['a boolean', false],
    ['an object', {}],
    ['an object with toString', { toString: () => 'intel-haswell' }],
    ['an array', ['intel-haswell']],
    ['a symbol', symbol],
    ['a function', fn],
    ['a boxed string', new String('x')],
];
/** Strings UTF-8 cannot carry, or a C string would cut short. */
const unrepresentableStrings = [
    ['a NUL byte', 'a\0b'],
    ['a lone high surrogate', '\uD800'],
    ['a lone low surrogate', 'x\uDC00'],
    ['a reversed surrogate pair', '\uDC00\uD800'],
];
const badStrings = [...notStrings, ...unrepresentableStrings];

const notArrays = [
    ['a number', 0],
    ['a string', '0'],
    ['an object', {}],
    ['an array-like object', { length: 1, 0: 0 }],
    ['a typed array', new Uint32Array([0])],
    ['a Set', new Set([0])],
    ['a bigint', 0n],
    ['a boolean', true],
    ['a symbol', symbol],
    ['a function', fn],
];
/** Arrays of numbers with one bad element; the message names the element. */
const badNumberElements = [
    ['[-1]', [-1], 0],
    ['[0, 0.5]', [0, 0.5], 1],
    ['[NaN]', [NaN], 0],
    ['[Infinity]', [Infinity], 0],
    ['[2**32]', [2 ** 32], 0],
    ['["0"]', ['0'], 0],
    ['[0n]', [0n], 0],
    ['[null]', [null], 0],
    ['[undefined]', [undefined], 0],
    ['a sparse [, ]', [,], 0], // eslint-disable-line no-sparse-arrays
    ['[[0]]', [[0]], 0],
    ['[{}]', [{}], 0],
    ['[symbol]', [symbol], 0],
    ['[true]', [true], 0],
];
const badBigintElements = [
    ['[1] (a number)', [1], 0],
    ['[-1n]', [-1n], 0],
    ['[2n**64n]', [2n ** 64n], 0],
    ['["1"]', ['1'], 0],
    ['[null]', [null], 0],
    ['[{}]', [{}], 0],
    ['[symbol]', [symbol], 0],
];
/** Where an options object or config is expected. */
const notObjects = [
    ['a number', 5],
    ['NaN', NaN],
    ['a string', 'threads'],
    ['a boolean', true],
    ['a bigint', 5n],
    ['a symbol', symbol],
    ['a function', fn],
    ['an array', []],
    ['an array of an object', [{ threads: 1 }]],
];
const badMoods = [
    ['2', 2],
    ['-1', -1],
    ['0.5', 0.5],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['2**32', 2 ** 32],
    ['"0"', '0'],
    ['"Parked"', 'Parked'],
    ['"Spinning"', 'Spinning'],
    ['0n', 0n],
    ['1n', 1n],
    ['false', false],
    ['true', true],
    ['{}', {}],
    ['[0]', [0]],
    ['a symbol', symbol],
    ['a function', fn],
    ['a boxed 0', new Number(0)],
    ['the Mood object', Mood],
];

/** Cases setting one field of a config to each bad value. */
function fieldCases(prefix, make, field, values, code = 'invalid_argument') {
    return values.map(([label, value]) => [`${prefix} ${field}: ${label}`, () => make({ [field]: value }), uf(code, field)]);
}
function elementCases(prefix, make, field, values) {
    return values.map(([label, value, index]) => [`${prefix} ${field}: ${label}`, () => make({ [field]: value }), uf('invalid_argument', `${field}[${index}]`)]);
}
/** A config whose reading throws the caller's own error: a getter, and a proxy that throws on every read. */
function throwingConfigCases(prefix, make, field) {
    const fromGetter = new RangeError('getter');
    const fromProxy = new RangeError('proxy');
    return [
        [`${prefix} a getter of ${field} that throws`, () => make({ get [field]() { throw fromGetter; } }), own(fromGetter)],
        [`${prefix} a proxy whose get throws`, () => make(new Proxy({}, { get() { throw fromProxy; } })), own(fromProxy)],
    ];
}

const cpuClass = uform.capabilitiesAvailable().split(',').filter((n) => !isGpuClass(n)).pop();
const unknownCpuClasses = [
    ['an empty name', ''],
    ['a space', ' '],
    ['upper case', cpuClass.toUpperCase()],
    ['a trailing space', `${cpuClass} `],
    ['underscores', cpuClass.replace(/-/g, '_')],
    ['a GPU class', 'nvidia-hopper'],
    ['a list', `${cpuClass},${cpuClass}`],
    ['U+FFFD', '\uFFFD'],
    ['10,000 characters', 'x'.repeat(10000)],
];

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

test('bad input: every method of a freed handle', (t) => {
    const freedExecutor = () => {
        const executor = Executor.forRam({ threads: 1 });
        executor.free();
        return executor;
    };
    const freedMesh = () => {
        const executor = Executor.forRam({ threads: 1 });
        const mesh = Mesh.bootstrap(executor);
        mesh.free();
        executor.free();
        return mesh;
    };
    const cases = [
        ['executor.drain()', () => freedExecutor().drain(), uf('freed_handle', 'drain')],
        ['executor.drain(Spinning)', () => freedExecutor().drain(Mood.Spinning), uf('freed_handle', 'drain')],
        ['executor.compiled.drain()', () => freedExecutor().compiled.drain(), raw('freed_handle', 'drain')],
        ['Mesh.bootstrap(freed executor)', () => Mesh.bootstrap(freedExecutor()), uf('freed_handle')],
        ['Mesh.bootstrap(freed executor, peers)', () => Mesh.bootstrap(freedExecutor(), { hostDomainCount: 2, directory: '/nonexistent', job: 'j' }), uf('freed_handle')],
        ['executor.free() again', () => freedExecutor().free(), ok],
        ['executor[Symbol.dispose]() again', () => freedExecutor()[Symbol.dispose](), ok],
        ['executor.compiled.free() again', () => freedExecutor().compiled.free(), ok],
        ['executor.compiled', () => void freedExecutor().compiled, ok],
        ['executor freed through compiled.free, then drain', () => {
            const executor = Executor.forRam({ threads: 1 });
            executor.compiled.free();
            executor.drain();
        }, uf('freed_handle', 'drain')],
        ['executor freed through compiled.free, then free', () => {
            const executor = Executor.forRam({ threads: 1 });
            executor.compiled.free();
            executor.free();
        }, ok],
        ['mesh.describe()', () => freedMesh().describe(), uf('freed_handle', 'describe')],
        ['mesh.compiled.describe()', () => freedMesh().compiled.describe(), raw('freed_handle', 'describe')],
        ['mesh.free() again', () => freedMesh().free(), ok],
        ['mesh[Symbol.dispose]() again', () => freedMesh()[Symbol.dispose](), ok],
        ['mesh.compiled.free() again', () => freedMesh().compiled.free(), ok],
        ['mesh freed through compiled.free, then describe', () => {
            const executor = Executor.forRam({ threads: 1 });
            const mesh = Mesh.bootstrap(executor);
            mesh.compiled.free();
            try {
                mesh.describe();
            } finally {
                mesh.free();
                executor.free();
            }
        }, uf('freed_handle', 'describe')],
        ['a mesh outlives its freed-under executor', () => {
            const executor = Executor.forRam({ threads: 1 });
            const mesh = Mesh.bootstrap(executor);
            try {
                executor.free();
            } finally {
                mesh.free();
                executor.free();
            }
        }, uf('in_use')],
    ];
    runTable(t, 'freed handles', cases);
});

test('bad input: methods called with a wrong this', (t) => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor);
    const getter = (klass, name) => Object.getOwnPropertyDescriptor(klass.prototype, name).get;
    const CompiledExecutor = executor.compiled.constructor;
    const CompiledMesh = mesh.compiled.constructor;
    const methods = [
        [Executor, 'drain', Executor.prototype.drain],
        [Executor, 'free', Executor.prototype.free],
        [Executor, '[Symbol.dispose]', Executor.prototype[Symbol.dispose]],
        [Executor, 'compiled', getter(Executor, 'compiled')],
        [Mesh, 'describe', Mesh.prototype.describe],
        [Mesh, 'free', Mesh.prototype.free],
        [Mesh, '[Symbol.dispose]', Mesh.prototype[Symbol.dispose]],
        [Mesh, 'compiled', getter(Mesh, 'compiled')],
        [CompiledExecutor, 'drain', CompiledExecutor.prototype.drain],
        [CompiledExecutor, 'free', CompiledExecutor.prototype.free],
        [CompiledMesh, 'describe', CompiledMesh.prototype.describe],
        [CompiledMesh, 'free', CompiledMesh.prototype.free],
    ];
    // Receivers are made per case: a method that wrongly accepted one (say, freed it) could not spoil the next.
    const fresh = () => {
        const e = Executor.forRam({ threads: 1 });
        return { executor: e, mesh: Mesh.bootstrap(e) };
    };
    const made = [];
    const handles = (pick) => () => {
        const pair = fresh();
        made.push(pair);
        return pick(pair);
    };
    const receivers = (own) => [
        ['undefined', () => undefined],
        ['null', () => null],
        ['a number', () => 5],
        ['a string', () => 'x'],
        ['a symbol', () => symbol],
        ['a plain object', () => ({})],
        ['an object with a handle and a free method', () => ({ handle: 0, free() {}, describe() {}, drain() {} })],
        ['a function', () => fn],
        [`${own.name}.prototype`, () => own.prototype],
        [`Object.create(${own.name}.prototype)`, () => Object.create(own.prototype)],
        ['an Executor', handles((p) => p.executor)],
        ['a Mesh', handles((p) => p.mesh)],
        ['a CompiledExecutor', handles((p) => p.executor.compiled)],
        ['a CompiledMesh', handles((p) => p.mesh.compiled)],
    ];
    const cases = [];
    for (const [own, name, method] of methods) {
        for (const [label, receiver] of receivers(own)) {
            // Its own kind of handle is the one right receiver.
            if (label === `a ${own.name}` || label === `an ${own.name}`) continue;
            cases.push([`${own.name}.${name} with this ${label}`, () => method.call(receiver()), typeError]);
        }
    }
    // Static constructors do not use `this`: a detached one still works.
    const { forRam } = Executor;
    const { bootstrap } = Mesh;
    cases.push(['Executor.forRam detached', () => forRam.call(undefined, { threads: 1 }), ok]);
    cases.push(['Mesh.bootstrap detached', () => bootstrap.call(5, executor), ok]);
    runTable(t, 'wrong this', cases);
    for (const pair of made) {
        pair.mesh.free();
        pair.executor.free();
    }
    mesh.free();
    executor.free();
});

test('bad input: constructors', (t) => {
    const executor = Executor.forRam({ threads: 1 });
    const mesh = Mesh.bootstrap(executor);
    const CompiledExecutor = executor.compiled.constructor;
    const CompiledMesh = mesh.compiled.constructor;
    const cases = [
        ['new Executor()', () => new Executor(), typeError],
        ['new Executor(a lookalike private token)', () => new Executor(Symbol('uform.private'), executor.compiled, []), typeError],
        ['new Executor(the compiled handle)', () => new Executor(executor.compiled), typeError],
        ['Executor() without new', () => Executor(), typeError],
        ['new Mesh()', () => new Mesh(), typeError],
        ['new Mesh(a lookalike private token)', () => new Mesh(Symbol('uform.private'), mesh.compiled, []), typeError],
        ['Mesh() without new', () => Mesh(), typeError],
        ['a subclass of Executor', () => new (class extends Executor {})(), typeError],
        ['a subclass of Mesh', () => new (class extends Mesh {})(), typeError],
        ['new Executor.forRam()', () => new Executor.forRam({ threads: 1 }), typeError],
        ['new Executor.onPool()', () => new Executor.onPool(1n), typeError],
        ['new Mesh.bootstrap()', () => new Mesh.bootstrap(executor), typeError],
        ['new executor.drain()', () => new executor.drain(), typeError],
        ['UFormError() without new', () => UFormError('timeout', 'x'), typeError],
        ['new UFormError with a symbol message', () => new UFormError('timeout', Symbol('m')), typeError],
        ['new UFormError with no arguments', () => void new UFormError(), ok],
        ['new CompiledExecutor()', () => new CompiledExecutor(), napiNoConstructor],
        ['CompiledExecutor()', () => CompiledExecutor(), napiNoConstructor],
        ['new CompiledMesh()', () => new CompiledMesh(), napiNoConstructor],
        ['CompiledMesh()', () => CompiledMesh(), napiNoConstructor],
    ];
    runTable(t, 'constructors', cases);
    mesh.free();
    executor.free();
});

// ---------------------------------------------------------------------------------------------------------------
// The Trainer (needs the test model: UFORM_TEST_MODEL_DIR, set by `cargo xtask test node`). Its config holds the
// first floating-point inputs: NaN, the infinities, negatives and non-numbers for every rate, decay and norm.

/** Floats no rate, decay, norm or probability may be. */
const badFloats = [
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['-Infinity', -Infinity],
    ['-1', -1],
    ['-Number.MIN_VALUE', -Number.MIN_VALUE],
    ['-Number.MAX_VALUE', -Number.MAX_VALUE],
    ...notNumbers,
];

test('bad input: Trainer', (t) => {
    const modelDir = process.env.UFORM_TEST_MODEL_DIR;
    assert.ok(modelDir, 'UFORM_TEST_MODEL_DIR is not set: run the suite through `cargo xtask test node`');
    const executor = Executor.forRam({ threads: 1 });
    const model = Model.loadRam(modelDir, { executor });
    const freedModel = Model.loadRam(modelDir, { executor });
    freedModel.free();
    const trainer = Trainer.contrastive(model);
    const freedTrainer = Trainer.contrastive(model);
    freedTrainer.free();
    const directory = scratch('uform-node-bad-save');
    const existing = join(directory, 'existing');
    mkdirSync(existing);
    const file = join(directory, 'a-file');
    writeFileSync(file, 'not a directory');
    const make = (config) => Trainer.contrastive(model, config);
    const badTexts = [
        ['[ok, 5]', ['ok', 5], 1],
        ['[ok, null]', ['ok', null], 1],
        ['[undefined]', [undefined], 0],
        ['a sparse [, ]', [,], 0], // eslint-disable-line no-sparse-arrays
        ['[{}]', [{}], 0],
        ['[a boxed string]', [new String('x')], 0],
        ['[symbol]', [symbol], 0],
        ['[ok, a NUL byte]', ['ok', 'a\0b'], 1],
        ['[a lone surrogate]', ['\uD800'], 0],
        ['[ok, a reversed pair]', ['ok', '\uDC00\uD800'], 1],
    ];
    const step = (anchors, positives) => () => trainer.step(anchors, positives);
    const cases = [
        // Trainer.contrastive: the model.
        ...[
            ['undefined', undefined],
            ['null', null],
            ['a string', 'model'],
            ['an object', {}],
            ['an array', [model]],
            ['its compiled handle', model.compiled],
            ['an Executor', executor],
            ['a Trainer', trainer],
            ['the Model class', Model],
            ['Model.prototype', Model.prototype],
        ].map(([label, value]) => [`contrastive model: ${label}`, () => Trainer.contrastive(value), uf('invalid_argument', 'model')]),
        ['contrastive model: a freed Model', () => Trainer.contrastive(freedModel), uf('freed_handle', 'Trainer.contrastive')],
        // The config and each of its fields.
        ...notObjects.map(([label, value]) => [`contrastive config: ${label}`, () => make(value), uf('invalid_argument', 'config')]),
        ...fieldCases('contrastive', make, 'learningRate', badFloats),
        ...fieldCases('contrastive', make, 'weightDecay', badFloats),
        ...fieldCases('contrastive', make, 'maxGradNorm', badFloats),
        ...fieldCases('contrastive', make, 'scale', [...badFloats, ['0', 0], ['-0', -0]]),
        ...fieldCases('contrastive', make, 'dropout', [...badFloats, ['1', 1], ['1.5', 1.5], ['Number.MAX_VALUE', Number.MAX_VALUE]]),
        ...fieldCases('contrastive', make, 'warmupSteps', badCounts),
        ...fieldCases('contrastive', make, 'totalSteps', badCounts),
        ...fieldCases('contrastive', make, 'maxTokens', [...badPositiveCounts, ['513', 513], ['2**32-1', 2 ** 32 - 1]]),
        // A seed is exact up to 2^53 - 1, so 2^32 is no bad value for it.
        ...fieldCases('contrastive', make, 'seed', badCounts.filter(([label]) => label !== '2**32')),
        ...throwingConfigCases('contrastive', make, 'learningRate'),
        ['contrastive config: every field at an edge', () => make({ learningRate: 0, weightDecay: 0, maxGradNorm: 0, dropout: 0, maxTokens: 512, warmupSteps: 2 ** 32 - 1, totalSteps: 2 ** 32 - 1, seed: 2 ** 53 - 1, scale: Number.MIN_VALUE }), ok],
        ['contrastive config: a huge learning rate', () => make({ learningRate: Number.MAX_VALUE }), ok],
        ['contrastive config: unknown keys', () => make({ learning_rate: NaN, lr: -1 }), ok],
        ['contrastive extra arguments', () => Trainer.contrastive(model, undefined, 'extra', symbol), ok],
        // Trainer.step: two arrays of texts of one length, at least one pair.
        ...notArrays.map(([label, value]) => [`step anchors: ${label}`, step(value, ['p']), uf('invalid_argument', 'anchors')]),
        ...notArrays.map(([label, value]) => [`step positives: ${label}`, step(['a'], value), uf('invalid_argument', 'positives')]),
        // (Array.from, not map: map keeps a sparse array's holes.)
        ...badTexts.map(([label, value, i]) => [`step anchors: ${label}`, step(value, Array.from(value, () => 'p')), uf('invalid_argument', `anchors[${i}]`)]),
        ...badTexts.map(([label, value, i]) => [`step positives: ${label}`, step(Array.from(value, () => 'a'), value), uf('invalid_argument', `positives[${i}]`)]),
        ['step anchors: undefined', step(undefined, ['p']), uf('invalid_argument', 'anchors')],
        ['step positives: undefined', step(['a'], undefined), uf('invalid_argument', 'positives')],
        ['step: one positive short', step(['a', 'b'], ['p']), uf('invalid_argument', 'positives')],
        ['step: one positive too many', step(['a'], ['p', 'q']), uf('invalid_argument', 'positives')],
        ['step: an empty batch', step([], []), uf('invalid_argument', 'anchors')],
        // Trainer.save: a folder that does not exist yet, under one that does.
        // (A NUL byte in a path is left to the file system: the contract names no kind for it.)
        ...badStrings.filter(([label]) => label !== 'a NUL byte').map(([label, value]) => [`save directory: ${label}`, () => trainer.save(value), uf('invalid_argument', 'directory')]),
        ['save directory: undefined', () => trainer.save(undefined), uf('invalid_argument', 'directory')],
        ['save directory: an existing folder', () => trainer.save(existing), uf('invalid_argument', 'directory')],
        ['save directory: an existing file', () => trainer.save(file), uf('invalid_argument', 'directory')],
        ['save directory: the parent is missing', () => trainer.save(join(directory, 'missing', 'trained')), uf('io')],
        ['save directory: the parent is a file', () => trainer.save(join(file, 'trained')), uf('io')],
        // A freed trainer, and the model under a live one.
        ['freed trainer: step', () => freedTrainer.step(['a'], ['p']), uf('freed_handle', 'step')],
        ['freed trainer: save', () => freedTrainer.save(join(directory, 'never')), uf('freed_handle', 'save')],
        ['freed trainer: compiled.step', () => freedTrainer.compiled.step(['a'], ['p']), raw('freed_handle', 'step')],
        ['freed trainer: free() again', () => freedTrainer.free(), ok],
        ['freed trainer: [Symbol.dispose]() again', () => freedTrainer[Symbol.dispose](), ok],
        ['freed trainer: compiled.free() again', () => freedTrainer.compiled.free(), ok],
        ['model.free() under a live trainer', () => model.free(), uf('in_use')],
        // Wrong `this` (stepAsync rejects its promise instead: 07-train.test.mjs), and constructors that are not.
        ...[
            ['step', Trainer.prototype.step],
            ['save', Trainer.prototype.save],
            ['free', Trainer.prototype.free],
            ['[Symbol.dispose]', Trainer.prototype[Symbol.dispose]],
        ].flatMap(([name, method]) => [
            [`Trainer.${name} with this undefined`, () => method.call(undefined, ['a'], ['p']), typeError],
            [`Trainer.${name} with this a plain object`, () => method.call({}, ['a'], ['p']), typeError],
            [`Trainer.${name} with this a Model`, () => method.call(model, ['a'], ['p']), typeError],
            [`Trainer.${name} with this Trainer.prototype`, () => method.call(Trainer.prototype, ['a'], ['p']), typeError],
        ]),
        ['new Trainer()', () => new Trainer(), typeError],
        ['Trainer() without new', () => Trainer(), typeError],
        ['a subclass of Trainer', () => new (class extends Trainer {})(), typeError],
        ['new Trainer.contrastive()', () => new Trainer.contrastive(model), typeError],
        ['new CompiledTrainer()', () => new trainer.compiled.constructor(), napiNoConstructor],
    ];
    runTable(t, 'Trainer', cases);
    assert.deepEqual(readdirSync(directory).sort(), ['a-file', 'existing'], 'a failed save left something behind');
    assert.deepEqual(readdirSync(existing), []);
    assert.equal(model.encodeText(['still usable']).rows, 1);
    trainer.free();
    model.free();
    executor.free();
});

// ---------------------------------------------------------------------------------------------------------------
// Counts large enough to allocate or spawn by the count: each in its own process, so an abort (which no
// try/catch sees) fails the case by name instead of taking the suite down.

const extremes = [
    ['forRam threads: 2**32-1', 'Executor.forRam({ threads: 2 ** 32 - 1 })', 'invalid_argument', 'threads'],
    ['forRam threads: 2**31', 'Executor.forRam({ threads: 2 ** 31 })', 'invalid_argument', 'threads'],
    ['forRam threads: 65537', 'Executor.forRam({ threads: 65537 })', 'invalid_argument', 'threads'],
    ['forRam deferredLimit: 2**32-1', 'Executor.forRam({ threads: 2, deferredLimit: 2 ** 32 - 1 })', 'ok'],
    ['forRam memoryDomains: 100,000 entries', 'Executor.forRam({ threads: 1, memoryDomains: new Array(100000).fill(0) })', 'invalid_argument', 'memoryDomains'],
    ['forRam memoryDomains: a sparse array of length 2**24', 'Executor.forRam({ memoryDomains: new Array(2 ** 24) })', 'invalid_argument', 'memoryDomains[0]'],
    ['forRam cpuClass: 1,000,000 characters', 'Executor.forRam({ cpuClass: "x".repeat(1e6) })', 'invalid_argument', 'cpuClass'],
    ['forVram streams: 100,000 entries', 'Executor.forVram({ streams: new Array(100000).fill(1n) })', 'invalid_argument', 'streams'],
    [
        'bootstrap hostDomainCount: 2**32-1 (a timeout naming the missing range)',
        'Mesh.bootstrap(Executor.forRam({ threads: 1 }), { hostDomainIndex: 0, hostDomainCount: 2 ** 32 - 1, directory: DIR, job: "huge", timeoutSeconds: 1 })',
        'timeout',
        '4294967294',
    ],
    [
        'bootstrap hostDomainIndex: 2**32-2 of 2**32-1',
        'Mesh.bootstrap(Executor.forRam({ threads: 1 }), { hostDomainIndex: 2 ** 32 - 2, hostDomainCount: 2 ** 32 - 1, directory: DIR, job: "last", timeoutSeconds: 1 })',
        'timeout',
        '4294967293',
    ],
    ['bootstrap gpusPerMultimemDomain: 2**32-1', 'Mesh.bootstrap(Executor.forRam({ threads: 1 }), { gpusPerMultimemDomain: 2 ** 32 - 1 })', 'ok'],
    ['bootstrap timeoutSeconds: 2**32-1 with no peers', 'Mesh.bootstrap(Executor.forRam({ threads: 1 }), { timeoutSeconds: 2 ** 32 - 1 })', 'ok'],
    ['bootstrap job: 100,000 characters', 'Mesh.bootstrap(Executor.forRam({ threads: 1 }), { hostDomainCount: 2, directory: DIR, job: "j".repeat(1e5), timeoutSeconds: 1 })', 'io'],
];

test('bad input: extreme counts, each in its own process', (t) => {
    const directory = scratch('uform-node-extreme');
    const failures = [];
    for (const [label, expression, code, mention] of extremes) {
        const script = `
            import { Executor, Mesh } from 'uform';
            const DIR = ${JSON.stringify(directory)};
            let outcome;
            try {
                const made = ${expression};
                made.free();
                outcome = { code: 'ok' };
            } catch (error) {
                outcome = { code: error.code, name: error.constructor.name, message: error.message.slice(0, 400) };
            }
            process.stdout.write(JSON.stringify(outcome));
        `;
        const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: here, encoding: 'utf8', timeout: 30_000 });
        if (child.status !== 0 || child.signal) {
            failures.push(`${label}: the process ended with ${child.signal ?? `status ${child.status}`}: ${(child.stderr || '').split('\n').slice(0, 3).join(' | ')}`);
            continue;
        }
        const outcome = JSON.parse(child.stdout);
        if (outcome.code !== code) failures.push(`${label}: expected ${code}, got ${JSON.stringify(outcome)}`);
        else if (code !== 'ok' && outcome.name !== 'UFormError') failures.push(`${label}: expected a UFormError, got ${outcome.name}`);
        else if (mention && !outcome.message.includes(mention)) failures.push(`${label}: expected the message to mention ${mention}: ${outcome.message}`);
    }
    counts.set('extreme counts', extremes.length);
    t.diagnostic(`extreme counts: ${extremes.length} cases`);
    assert.deepEqual(failures, [], failures.join('\n'));
    assert.deepEqual(readdirSync(directory), [], 'nothing left behind in the mesh directory');
});

test('bad input: the total', (t) => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    t.diagnostic(`bad-input cases in all: ${total} (${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')})`);
    assert.ok(total > 500, `only ${total} cases`);
});
