// The bad-input suites' table runner and the kinds of bad value, by what the slot expects (shared by
// bad-input.test.mjs and bad-input-handles.test.mjs).
import assert from 'node:assert/strict';
import * as uform from 'uform';
import { Mood, UFormError } from 'uform';
import { isGpuClass } from './helpers.mjs';

export const noGpus = uform.gpuDevices().length === 0;

// ---------------------------------------------------------------------------------------------------------------
// What a case expects.

/** A UFormError with `code` whose message names `argument` (in backticks, as every message names it, a field by its path
 * from the parameter: `config.threads`). */
export const uf = (code, argument) => ({ kind: 'uform', code, argument });
/** The TypeError the engine raises: a wrong `this`, a class called without `new`, a method that is no constructor. */
export const typeError = { kind: 'TypeError' };
/** The error a napi-rs class raises when constructed: it has no constructor (`private constructor()` in the .d.ts). */
export const napiNoConstructor = { kind: 'napi-no-constructor' };
/** The call returns; a returned handle is freed. */
export const ok = { kind: 'ok' };
/** The caller's own exception (a throwing getter or proxy trap) passes through unchanged. */
export const own = (error) => ({ kind: 'own', error });
/**
 * The methods of the `Compiled*` handles (`executor.compiled`, `mesh.compiled`) are the native layer itself: no
 * wrapper translates their errors, so they throw napi's `Error` carrying the UForm `code`, not a `UFormError`.
 */
export const raw = (code, argument) => ({ kind: 'raw', code, argument });

export function escape(text) {
    return String(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Runs one case; returns a description of what went wrong, or null. */
export function runCase([label, call, expected]) {
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

export const counts = new Map();

/** Runs a table; fails listing every case that went wrong, and reports the table's size. */
export function runTable(t, name, cases) {
    const failures = cases.map(runCase).filter(Boolean);
    counts.set(name, cases.length);
    t.diagnostic(`${name}: ${cases.length} cases`);
    assert.deepEqual(failures, [], `${failures.length} of ${cases.length} cases failed:\n${failures.join('\n')}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The kinds of bad value, by what the slot expects. Each is [label, value].

export const symbol = Symbol('bad');
export const fn = () => 1;

/** What is not a number at all. */
export const notNumbers = [
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
export const badNumbers = [
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
export const badCounts = [...badNumbers, ...notNumbers];
/** Counts where a positive one is required also refuse zero, written either way. */
export const badPositiveCounts = [...badCounts, ['0', 0], ['-0', -0]];

export const notStrings = [
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
export const unrepresentableStrings = [
    ['a NUL byte', 'a\0b'],
    ['a lone high surrogate', '\uD800'],
    ['a lone low surrogate', 'x\uDC00'],
    ['a reversed surrogate pair', '\uDC00\uD800'],
];
export const badStrings = [...notStrings, ...unrepresentableStrings];

export const notArrays = [
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
export const badNumberElements = [
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
export const badBigintElements = [
    ['[1] (a number)', [1], 0],
    ['[-1n]', [-1n], 0],
    ['[2n**64n]', [2n ** 64n], 0],
    ['["1"]', ['1'], 0],
    ['[null]', [null], 0],
    ['[{}]', [{}], 0],
    ['[symbol]', [symbol], 0],
];
/** Where an options object or config is expected. */
export const notObjects = [
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
export const badMoods = [
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
export function fieldCases(prefix, make, field, values, code = 'invalid_argument') {
    return values.map(([label, value]) => [`${prefix} ${field}: ${label}`, () => make({ [field]: value }), uf(code, field)]);
}
export function elementCases(prefix, make, field, values) {
    return values.map(([label, value, index]) => [`${prefix} ${field}: ${label}`, () => make({ [field]: value }), uf('invalid_argument', `${field}[${index}]`)]);
}
/** A config whose reading throws the caller's own error: a getter, and a proxy that throws on every read. */
export function throwingConfigCases(prefix, make, field) {
    const fromGetter = new RangeError('getter');
    const fromProxy = new RangeError('proxy');
    return [
        [`${prefix} a getter of ${field} that throws`, () => make({ get [field]() { throw fromGetter; } }), own(fromGetter)],
        [`${prefix} a proxy whose get throws`, () => make(new Proxy({}, { get() { throw fromProxy; } })), own(fromProxy)],
    ];
}

export const cpuClass = uform.capabilitiesAvailable().split(',').filter((n) => !isGpuClass(n)).pop();
export const unknownCpuClasses = [
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

/** Reports the cases this file's tables ran, and fails when there are fewer than `minimum`. */
export function reportTotal(t, file, minimum) {
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    t.diagnostic(`${file} cases in all: ${total} (${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')})`);
    assert.ok(total >= minimum, `only ${total} cases`);
}
