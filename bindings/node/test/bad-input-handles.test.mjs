// Issue 9, bad input (continued from bad-input.test.mjs, whose header says what a case is): every method of a freed
// handle, methods called with a wrong `this`, constructors, the Trainer, and extreme counts in child processes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as uform from 'uform';
import { Executor, Mesh, Model, Mood, Trainer, UFormError } from 'uform';
import { scratch } from './helpers.mjs';
import {
    uf,
    typeError,
    napiNoConstructor,
    ok,
    own,
    raw,
    counts,
    runTable,
    symbol,
    fn,
    notNumbers,
    badCounts,
    badPositiveCounts,
    badStrings,
    notArrays,
    notObjects,
    fieldCases,
    throwingConfigCases,
    cpuClass,
    reportTotal,
} from './bad-input-cases.mjs';

const here = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------------------------------
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

test('bad input: the total', (t) => reportTotal(t, 'bad-input-handles', 519));
