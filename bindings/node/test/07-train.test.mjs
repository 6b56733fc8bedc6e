// Trainer scenarios 26–29 of SCENARIOS.md against the test model (all-MiniLM-L6-v2) and the committed training
// fixture (tests/fixtures/train/reference.json). `cargo xtask test node` sets UFORM_TEST_MODEL_DIR and
// UFORM_TEST_TRAIN_REFERENCE; without them these fail. (`using` itself is exercised by
// tests/typescript/package-consumer.mts, compiled by tsc: Node 20 cannot parse it; here its disposer is called.)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import * as uform from 'uform';
import { Executor, Model, Trainer } from 'uform';
import { cosine, scratch, throwsUForm } from './helpers.mjs';

const RUN_THROUGH = 'run the suite through `cargo xtask test node`, which installs the test model';
let modelDir, reference, executor;

before(() => {
    modelDir = process.env.UFORM_TEST_MODEL_DIR;
    const referencePath = process.env.UFORM_TEST_TRAIN_REFERENCE;
    if (!modelDir || !referencePath) return;
    reference = JSON.parse(readFileSync(referencePath, 'utf8'));
    executor = Executor.forRam({ threads: 2 });
});

after(() => executor?.free());

function ready() {
    assert.ok(reference, `UFORM_TEST_MODEL_DIR or UFORM_TEST_TRAIN_REFERENCE is not set: ${RUN_THROUGH}`);
}

/** A fresh model, freed by `t` at the end of its test (after the trainers the test made). */
function freshModel(t) {
    const model = Model.loadRam(modelDir, { executor });
    t.after(() => model.free());
    return model;
}

/** The fixture's trainer settings as a TrainerContrastiveConfig. */
function fixtureConfig() {
    const c = reference.config;
    return {
        learningRate: c.learning_rate,
        weightDecay: c.weight_decay,
        warmupSteps: c.warmup_steps,
        totalSteps: c.total_steps ?? c.max_steps,
        maxGradNorm: c.max_grad_norm,
        scale: c.scale,
        dropout: c.dropout,
        seed: c.seed,
    };
}

/** Step k's anchors and positives, as the fixture's `steps[k]` lists the pairs. */
function batch(k) {
    const pairs = reference.steps[k].map((i) => reference.pairs[i]);
    return [pairs.map(([a]) => a), pairs.map(([, p]) => p)];
}

function rows(matrix) {
    return Array.from({ length: matrix.rows }, (_, r) => matrix.data.subarray(r * matrix.columns, (r + 1) * matrix.columns));
}

function maxDiff(a, b) {
    assert.equal(a.data.length, b.data.length);
    let worst = 0;
    for (let i = 0; i < a.data.length; i++) worst = Math.max(worst, Math.abs(a.data[i] - b.data[i]));
    return worst;
}

/** One step's numbers against the fixture's step k (0-based). */
function checkStep(s, k) {
    assert.equal(s.step, k + 1);
    const [loss, lr, norm] = [reference.loss[k], reference.lr[k], reference.grad_norm[k]];
    assert.ok(Math.abs(s.loss - loss) <= 1e-4 * Math.abs(loss), `step ${k + 1}: loss ${s.loss}, fixture ${loss}`);
    assert.ok(Math.abs(s.learningRate - lr) <= 1e-9 * Math.abs(lr), `step ${k + 1}: learning rate ${s.learningRate}, fixture ${lr}`);
    assert.ok(Math.abs(s.gradientNorm - norm) <= 1e-3 * norm, `step ${k + 1}: gradient norm ${s.gradientNorm}, fixture ${norm}`);
    assert.ok(Number.isFinite(s.seconds) && s.seconds >= 0);
}

// ---- 26 ----------------------------------------------------------------------------------------------------------

test('26: the committed 20-step fixture: losses, learning rates, held-out embeddings', (t) => {
    ready();
    const model = freshModel(t);
    const heldOut = reference.held_out;
    const untrained = rows(model.encodeText(heldOut));
    untrained.forEach((row, i) => assert.ok(cosine(row, reference.held_out_embeddings_before[i]) >= 0.9999, 'the untrained model is not the fixture\'s'));
    assert.equal(reference.steps.length, 20);
    const trainer = Trainer.contrastive(model, fixtureConfig());
    try {
        for (let k = 0; k < reference.steps.length; k++) checkStep(trainer.step(...batch(k)), k);
        const trained = rows(model.encodeText(heldOut));
        trained.forEach((row, i) => {
            const toAfter = cosine(row, reference.held_out_embeddings_after[i]);
            const toBefore = cosine(row, reference.held_out_embeddings_before[i]);
            assert.ok(toAfter >= 0.9999, `held-out ${i}: cosine ${toAfter.toFixed(6)} to the fixture's trained embedding`);
            assert.ok(toBefore < 0.9995, `held-out ${i}: cosine ${toBefore.toFixed(6)} to the untrained embedding (did not move)`);
        });
    } finally {
        trainer.free();
    }
});

test('26: stepAsync returns a Promise of the same numbers, and the event loop keeps running', async (t) => {
    ready();
    const model = freshModel(t);
    const trainer = Trainer.contrastive(model, fixtureConfig());
    try {
        let ticks = 0;
        const timer = setInterval(() => ticks++, 1);
        try {
            for (let k = 0; k < 3; k++) {
                const pending = trainer.stepAsync(...batch(k));
                assert.ok(pending instanceof Promise);
                // In flight from the moment the promise exists: free refuses, and leaves the trainer usable.
                if (k === 0) throwsUForm(() => trainer.free(), 'in_use', /in flight/);
                checkStep(await pending, k);
            }
        } finally {
            clearInterval(timer);
        }
        assert.ok(ticks > 0, 'the event loop did not tick while stepAsync ran');
        checkStep(trainer.step(...batch(3)), 3); // the blocking form continues the same run
    } finally {
        trainer.free();
    }
});

// ---- 27 ----------------------------------------------------------------------------------------------------------

test('27: encodeText after a step embeds with the new weights; save writes a folder that loads back the same', (t) => {
    ready();
    const model = freshModel(t);
    const dir = scratch('uform-node-train');
    const texts = reference.held_out.slice(0, 4);
    const untrained = model.encodeText(texts);
    // No warm-up, so the first step's learning rate is not zero and the weights move.
    const trainer = Trainer.contrastive(model, { learningRate: 1e-4, dropout: 0, seed: 7 });
    let trained;
    try {
        const s = trainer.step(...batch(0));
        assert.equal(s.step, 1);
        assert.ok(Math.abs(s.learningRate - 1e-4) <= 1e-13);
        const stepped = model.encodeText(texts);
        assert.ok(maxDiff(stepped, untrained) > 1e-4, 'encodeText after a step still embeds with the old weights');
        assert.equal(trainer.step(...batch(1)).step, 2);
        trained = model.encodeText(texts);
        assert.ok(maxDiff(trained, stepped) > 1e-6);
        trainer.save(join(dir, 'trained'));
        assert.ok(existsSync(join(dir, 'trained', 'model.safetensors')));
        assert.deepEqual(readdirSync(dir), ['trained'], 'a temporary sibling was left behind');
    } finally {
        trainer.free();
    }
    assert.ok(maxDiff(model.encodeText(texts), trained) <= 1e-6, 'the trainer\'s free kept the trained weights');
    const loaded = Model.loadRam(join(dir, 'trained'), { executor });
    try {
        assert.equal(loaded.describe().architecture, 'bert');
        assert.ok(maxDiff(loaded.encodeText(texts), trained) <= 1e-6, 'the saved folder embeds differently');
    } finally {
        loaded.free();
    }
});

// ---- 28 ----------------------------------------------------------------------------------------------------------

test('28: a bad config is an invalid argument naming the field; the model stays usable', (t) => {
    ready();
    const model = freshModel(t);
    const cases = [
        ['learningRate', NaN], ['learningRate', Infinity], ['learningRate', -1e-4], ['learningRate', '1e-4'],
        ['weightDecay', NaN], ['weightDecay', -Infinity], ['weightDecay', -0.01], ['weightDecay', 1n],
        ['maxGradNorm', NaN], ['maxGradNorm', Infinity], ['maxGradNorm', -1], ['maxGradNorm', true],
        ['scale', NaN], ['scale', Infinity], ['scale', 0], ['scale', -0], ['scale', -20], ['scale', {}],
        ['dropout', NaN], ['dropout', -0.1], ['dropout', 1], ['dropout', 1.5], ['dropout', '0'],
        ['maxTokens', 0], ['maxTokens', 513], ['maxTokens', 1.5], ['maxTokens', -1],
        ['warmupSteps', -1], ['totalSteps', 0.5], ['seed', -1], ['seed', 2 ** 64],
    ];
    for (const [field, value] of cases) {
        throwsUForm(() => Trainer.contrastive(model, { [field]: value }), 'invalid_argument', `\`config.${field}\``);
    }
    // The edges of each range, zero where it means off, and absent fields are fine.
    for (const config of [
        { learningRate: 0, weightDecay: 0, maxGradNorm: 0, dropout: 0 },
        { dropout: 0.999, maxTokens: 512, scale: 1e-3, seed: Number.MAX_SAFE_INTEGER },
        { learningRate: undefined, dropout: null },
        undefined,
    ]) {
        Trainer.contrastive(model, config).free();
    }
    assert.equal(model.encodeText(['still usable']).rows, 1);
});

test('28: bad batches change no weight and do not count as a step', (t) => {
    ready();
    const model = freshModel(t);
    const texts = reference.held_out.slice(0, 3);
    const untrained = model.encodeText(texts);
    const [anchors, positives] = batch(0);
    const trainer = Trainer.contrastive(model, { learningRate: 1e-4, dropout: 0 });
    try {
        throwsUForm(() => trainer.step(anchors, positives.slice(1)), 'invalid_argument', '`positives`');
        throwsUForm(() => trainer.step(anchors.slice(0, 1), []), 'invalid_argument', '`positives`');
        throwsUForm(() => trainer.step([], []), 'invalid_argument', '`anchors`');
        throwsUForm(() => trainer.step(['fine', 'nul\0inside'], ['a', 'b']), 'invalid_argument', '`anchors[1]`');
        throwsUForm(() => trainer.step(['fine', 'also fine'], ['\0', 'b']), 'invalid_argument', '`positives[0]`');
        throwsUForm(() => trainer.step(['lone \ud800 surrogate'], ['b']), 'invalid_argument', '`anchors[0]`');
        throwsUForm(() => trainer.step(['fine', 3], ['a', 'b']), 'invalid_argument', '`anchors[1]`');
        throwsUForm(() => trainer.step('anchor', ['a']), 'invalid_argument', '`anchors`');
        throwsUForm(() => trainer.step(['a']), 'invalid_argument', '`positives`');
        assert.equal(maxDiff(model.encodeText(texts), untrained), 0, 'a failed step changed the weights');
        assert.equal(trainer.step(anchors, positives).step, 1, 'a failed step counted as a step');
    } finally {
        trainer.free();
    }
});

test('28: stepAsync rejects with the error the blocking form throws', async (t) => {
    ready();
    const model = freshModel(t);
    const trainer = Trainer.contrastive(model);
    await assert.rejects(trainer.stepAsync(['a', 'b'], ['p']), (e) => e.code === 'invalid_argument' && /`positives`/.test(e.message));
    await assert.rejects(trainer.stepAsync([], []), (e) => e.code === 'invalid_argument' && /`anchors`/.test(e.message));
    await assert.rejects(trainer.stepAsync(['ok', 7], ['p', 'q']), (e) => e.code === 'invalid_argument' && /`anchors\[1\]`/.test(e.message));
    trainer.free();
    await assert.rejects(trainer.stepAsync(['a'], ['p']), { code: 'freed_handle' });
    // A wrong `this` rejects with the TypeError the blocking form throws, as an async function does.
    for (const receiver of [undefined, {}, model, Trainer.prototype]) {
        await assert.rejects(Trainer.prototype.stepAsync.call(receiver, ['a'], ['p']), TypeError);
    }
});

test('28: save refuses an existing or unwritable path and leaves nothing behind', (t) => {
    ready();
    const model = freshModel(t);
    const dir = scratch('uform-node-save');
    const existing = join(dir, 'existing');
    mkdirSync(existing);
    writeFileSync(join(existing, 'keep.txt'), 'kept');
    const aFile = join(dir, 'a-file');
    writeFileSync(aFile, 'not a directory');
    const trainer = Trainer.contrastive(model);
    try {
        for (const path of [existing, aFile]) throwsUForm(() => trainer.save(path), 'invalid_argument', '`directory`', 'already exists');
        for (const path of [join(dir, 'missing', 'trained'), join(aFile, 'trained')]) throwsUForm(() => trainer.save(path), 'io', path);
        for (const bad of [42, null, undefined, ['x'], join(dir, 'lone \ud800')]) throwsUForm(() => trainer.save(bad), 'invalid_argument', '`directory`');
    } finally {
        trainer.free();
    }
    assert.deepEqual(readdirSync(dir).sort(), ['a-file', 'existing'], 'a failed save left something behind');
    assert.deepEqual(readdirSync(existing), ['keep.txt']);
    assert.equal(readFileSync(aFile, 'utf8'), 'not a directory');
    assert.equal(model.encodeText(['still usable']).rows, 1);
});

test('28: a freed trainer refuses every call but free', (t) => {
    ready();
    const model = freshModel(t);
    const dir = scratch('uform-node-freed');
    const trainer = Trainer.contrastive(model);
    trainer.free();
    trainer.free();
    trainer[Symbol.dispose]();
    throwsUForm(() => trainer.step(['a'], ['p']), 'freed_handle', 'step');
    throwsUForm(() => trainer.save(join(dir, 'never')), 'freed_handle', 'save');
    assert.deepEqual(readdirSync(dir), []);
    const gone = Model.loadRam(modelDir, { executor });
    gone.free();
    throwsUForm(() => Trainer.contrastive(gone), 'freed_handle', 'Trainer.contrastive');
    throwsUForm(() => Trainer.contrastive(executor), 'invalid_argument', '`model`');
    throwsUForm(() => Trainer.contrastive(undefined), 'invalid_argument', '`model`');
});

test('28: a VRAM model is unsupported', { skip: uform.gpuDevices().length === 0 && 'no GPU: a VRAM model cannot be made here' }, () => {
    ready();
    const gpu = Executor.forVram({ devices: [0] });
    const vram = Model.loadVram(modelDir, { executor: gpu, devices: [0] });
    try {
        throwsUForm(() => Trainer.contrastive(vram), 'unsupported', 'RAM models');
    } finally {
        vram.free();
        gpu.free();
    }
});

// ---- 29 ----------------------------------------------------------------------------------------------------------

test('29: a live trainer keeps its model in use; the disposer frees the trainer', () => {
    ready();
    const model = Model.loadRam(modelDir, { executor });
    const first = Trainer.contrastive(model);
    throwsUForm(() => model.free(), 'in_use', '1 trainer borrows it; free it first');
    const second = Trainer.contrastive(model);
    throwsUForm(() => model.free(), 'in_use', '2 trainers borrow it');
    assert.equal(model.encodeText(['still usable']).rows, 1); // refused, not broken
    second[Symbol.dispose](); // what `using` calls at the end of its scope
    throwsUForm(() => second.step(['a'], ['p']), 'freed_handle');
    first.free();
    first.free();
    model.free(); // nothing borrows it now
    throwsUForm(() => Trainer.contrastive(model), 'freed_handle');
});
