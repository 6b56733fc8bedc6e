// encodeText scenarios 22–25 of SCENARIOS.md against the test model (all-MiniLM-L6-v2) and the committed reference
// embeddings; 26–29 of issue 29: 20,000 texts under a 64 MiB scratch limit, a 10 MB text, the model file changed
// after loading, a text without tokens; and bf16 models (issue 33). `cargo xtask test node` sets UFORM_TEST_MODEL_DIR and UFORM_TEST_REFERENCE; without them these fail.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Executor, Model, Precision, Trainer, capabilitiesAvailable } from 'uform';
import { cosine, throwsUForm } from './helpers.mjs';

const RUN_THROUGH = 'run the suite through `cargo xtask test node`, which installs the test model';
let modelDir, reference, executor, model;

before(() => {
    modelDir = process.env.UFORM_TEST_MODEL_DIR;
    const referencePath = process.env.UFORM_TEST_REFERENCE;
    if (!modelDir || !referencePath) return;
    reference = JSON.parse(readFileSync(referencePath, 'utf8'));
    executor = Executor.forRam({ threads: 2 });
    model = Model.loadRam(modelDir, { executor });
});

after(() => {
    model?.free();
    executor?.free();
});

function ready() {
    assert.ok(model, `UFORM_TEST_MODEL_DIR or UFORM_TEST_REFERENCE is not set: ${RUN_THROUGH}`);
}

function closeTo(matrix, expected, rows = expected.length) {
    assert.equal(matrix.rows, rows);
    assert.equal(matrix.columns, 384);
    for (let r = 0; r < rows; r++) {
        const got = matrix.data.subarray(r * 384, (r + 1) * 384);
        let dot = 0, gg = 0, ww = 0, worst = 0;
        for (let c = 0; c < 384; c++) {
            dot += got[c] * expected[r][c];
            gg += got[c] * got[c];
            ww += expected[r][c] * expected[r][c];
            worst = Math.max(worst, Math.abs(got[c] - expected[r][c]));
        }
        const cosine = dot / Math.sqrt(gg * ww);
        assert.ok(cosine >= 0.9999 && worst <= 1e-4, `row ${r}: cosine ${cosine.toFixed(6)}, max diff ${worst.toExponential(2)}`);
    }
}

test('22: encodeText reproduces the reference embeddings, rows in input order, 384 columns', () => {
    ready();
    const m = model.encodeText(reference.texts);
    assert.ok(m.data instanceof Float32Array);
    assert.equal(m.data.length, reference.texts.length * 384);
    closeTo(m, reference.embeddings);
    const reversed = model.encodeText(reference.texts.slice(0, 4).reverse());
    closeTo(reversed, reference.embeddings.slice(0, 4).reverse());
    closeTo(model.encodeText(reference.texts.slice(0, 3), { normalize: false }), reference.embeddings_unnormalized.slice(0, 3));
});

test('23: edge inputs — empty list, empty string, over-long and non-ASCII text', () => {
    ready();
    const empty = model.encodeText([]);
    assert.equal(empty.rows, 0);
    assert.ok(empty.data instanceof Float32Array);
    assert.equal(empty.data.length, 0);
    const long = reference.long_text_index;
    const blank = reference.texts.indexOf('');
    const m = model.encodeText([reference.texts[long], '', 'Größere Straßenbahnen — 東京 🍕']);
    closeTo({ ...m, rows: 2 }, [reference.embeddings[long], reference.embeddings[blank]], 2);
    assert.equal(m.rows, 3);
    let norm = 0;
    for (let c = 0; c < 384; c++) norm += m.data[768 + c] ** 2;
    assert.ok(Math.abs(Math.sqrt(norm) - 1) < 1e-4);
    assert.equal(model.encodeText(['a somewhat longer text than four tokens'], { maxTokens: 4 }).rows, 1);
});

test('23: a lone surrogate and a non-string element are invalid arguments naming texts[i]', () => {
    ready();
    throwsUForm(() => model.encodeText(['fine', 'lone \ud800 surrogate']), 'invalid_argument', 'texts[1]');
    throwsUForm(() => model.encodeText(['fine', 'also fine', 42]), 'invalid_argument', 'texts[2]');
    throwsUForm(() => model.encodeText([null]), 'invalid_argument', 'texts[0]');
    assert.throws(() => model.encodeText('not an array'));
});

test('24: the Float32Array stays valid after the model and its executor are freed', () => {
    ready();
    const ex = Executor.forRam({ threads: 1 });
    const own = Model.loadRam(modelDir, { executor: ex });
    const m = own.encodeText(reference.texts.slice(0, 2));
    own.free();
    ex.free();
    globalThis.gc?.();
    closeTo(m, reference.embeddings.slice(0, 2));
    m.data[0] = 1.5; // the caller's to write
    assert.equal(m.data[0], 1.5);
});

function statusKib(key) {
    const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith(key));
    return Number(line.split(/\s+/)[1]);
}

function maxDifference(a, b) {
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    return worst;
}

test('26: 20,000 texts in one call stay within a 64 MiB scratch limit and match 32-text calls', () => {
    ready();
    const limit = 64 * 1024 * 1024;
    const small = Executor.forRam({ threads: 2, scratchLimit: limit });
    const bounded = Model.loadRam(modelDir, { executor: small });
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const texts = Array.from({ length: 20000 }, (_, i) => `${words.slice(0, 1 + (i % words.length)).join(' ')} ${i}`);
    bounded.encodeText(texts.slice(0, 32)); // prepares the encoder
    const before = statusKib('VmRSS:');
    writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM, the peak resident size, to now
    const started = Date.now();
    const all = bounded.encodeText(texts);
    const growth = statusKib('VmHWM:') - before;
    const resultKib = all.data.byteLength / 1024;
    console.log(`20,000 texts under a 64 MiB scratch limit: RSS +${growth} KiB at peak (result ${resultKib} KiB), ${(Date.now() - started) / 1000} s`);
    assert.ok(growth <= limit / 1024 + resultKib + 16 * 1024, `RSS grew ${growth} KiB for a 64 MiB scratch limit`);
    assert.equal(all.rows, 20000);
    const starts = [];
    for (let s = 0; s < texts.length; s += 32 * 31) starts.push(s);
    starts.push(texts.length - 32);
    for (const s of starts) {
        const window = model.encodeText(texts.slice(s, s + 32));
        const worst = maxDifference(window.data, all.data.subarray(s * 384, (s + 32) * 384));
        assert.ok(worst <= 1e-6, `texts ${s}..${s + 32}: max abs difference ${worst}`);
    }
    const afterLarge = statusKib('VmRSS:');
    bounded.encodeText(texts.slice(0, 3));
    assert.ok(statusKib('VmRSS:') <= afterLarge + 1024, 'a small call after the large one grew the scratch');
    bounded.free();
    small.free();
});

test('26: a text that cannot fit the scratch limit is out of memory naming it', () => {
    ready();
    const tiny = Executor.forRam({ threads: 2, scratchLimit: 1024 * 1024 });
    const m = Model.loadRam(modelDir, { executor: tiny });
    const long = reference.texts[reference.long_text_index];
    throwsUForm(() => m.encodeText(['short', long]), 'out_of_memory', '`texts[1]`', '`ExecutorForRamConfig.scratchLimit`');
    assert.equal(m.encodeText(['short', long], { maxTokens: 64 }).rows, 2);
    m.free();
    tiny.free();
    throwsUForm(() => Executor.forRam({ scratchLimit: 0 }), 'invalid_argument', '`config.scratchLimit`');
});

test('27: a 10 MB text embeds as its truncated prefix', () => {
    ready();
    const long = reference.texts[reference.long_text_index]; // 326 tokens: its first 256 are the huge text's
    const huge = `${long} `.repeat(Math.ceil((10 << 20) / (long.length + 1)));
    const m = model.encodeText([huge, long]);
    assert.deepEqual(m.data.subarray(0, 384), m.data.subarray(384, 768));
});

test('28: the model file truncated or rewritten after loading changes nothing, before the first encode and after', () => {
    ready();
    const texts = reference.texts.slice(0, 4);
    const want = model.encodeText(texts);
    const ex = Executor.forRam({ threads: 2 });
    for (const how of ['truncated', 'rewritten']) {
        const folder = mkdtempSync(join(tmpdir(), `uform-node-${how}-`));
        cpSync(modelDir, folder, { recursive: true });
        const weights = join(folder, 'model.safetensors');
        const size = statSync(weights).size;
        const m = Model.loadRam(folder, { executor: ex });
        for (let round = 0; round < 2; round++) {
            if (how === 'truncated') truncateSync(weights, 0);
            else writeFileSync(weights, Buffer.alloc(size, 0x3f));
            assert.deepEqual(m.encodeText(texts).data, want.data, `${how}, round ${round}`);
        }
        m.free();
        rmSync(folder, { recursive: true, force: true });
    }
    ex.free();
});

test('29: a text the tokenizer gives no tokens is a row of zeros', () => {
    ready();
    const folder = mkdtempSync(join(tmpdir(), 'uform-node-no-tokens-'));
    for (const entry of readdirSync(modelDir)) symlinkSync(join(modelDir, entry), join(folder, entry));
    const tokenizer = JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'));
    tokenizer.post_processor = null; // no [CLS] and [SEP]: an empty text has no tokens at all
    rmSync(join(folder, 'tokenizer.json'));
    writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify(tokenizer));
    const ex = Executor.forRam({ threads: 2 });
    const m = Model.loadRam(folder, { executor: ex });
    const got = m.encodeText(['', 'hello world', '']);
    assert.ok(got.data.subarray(0, 384).every((v) => v === 0) && got.data.subarray(768).every((v) => v === 0));
    assert.deepEqual(got.data.subarray(384, 768), m.encodeText(['hello world']).data);
    m.free();
    ex.free();
    rmSync(folder, { recursive: true, force: true });
});

test('bf16: a bf16 model reports its bytes, embeds at cosine 0.999 but not as f32, and refuses training; icelake refuses bf16', () => {
    ready();
    const classes = capabilitiesAvailable().split(',');
    if (classes.includes('intel-icelake')) {
        const icelake = Executor.forRam({ threads: 1, cpuClass: 'intel-icelake' });
        try {
            throwsUForm(() => Model.loadRam(modelDir, { executor: icelake, precision: Precision.Bf16 }), 'unsupported', 'AVX512_BF16');
        } finally {
            icelake.free();
        }
    }
    const bf16Classes = classes.filter((c) => c === 'amd-genoa' || c === 'intel-sapphirerapids');
    if (bf16Classes.length === 0) {
        // This CPU has no bf16 instructions: its native class refuses bf16.
        throwsUForm(() => Model.loadRam(modelDir, { executor, precision: Precision.Bf16 }), 'unsupported');
        return;
    }
    const f32 = model.describe();
    assert.equal(f32.precision, Precision.F32);
    const exact = model.encodeText(reference.texts);
    for (const cpuClass of bf16Classes) {
        const ex = Executor.forRam({ threads: 2, cpuClass });
        const bf16 = Model.loadRam(modelDir, { executor: ex, precision: Precision.Bf16 });
        try {
            const described = bf16.describe();
            assert.equal(described.precision, Precision.Bf16);
            let matrices = 0, vectors = 0;
            for (const t of described.tensors.filter((t) => t.dtype === 'F32')) {
                const values = t.shape.reduce((a, b) => a * b, 1);
                if (t.shape.length >= 2) matrices += values;
                else vectors += values;
            }
            assert.equal(described.weightBytes, 2 * matrices + 4 * vectors);
            assert.equal(f32.weightBytes, 4 * (matrices + vectors));
            assert.ok(described.weightBytes < f32.weightBytes);
            const got = bf16.encodeText(reference.texts);
            assert.equal(got.rows, reference.texts.length);
            reference.embeddings.forEach((want, r) => {
                const c = cosine(got.data.subarray(r * 384, (r + 1) * 384), want);
                assert.ok(c >= 0.999, `${cpuClass} row ${r}: cosine ${c}`);
            });
            // Not f32's floats: the products really are bf16's.
            assert.ok(maxDifference(got.data, exact.data) > 1e-5, `${cpuClass}: bf16 gave f32's embeddings`);
            throwsUForm(() => Trainer.contrastive(bf16), 'unsupported', 'precision f32');
        } finally {
            bf16.free();
            ex.free();
        }
    }
});

test('25: encodeTextAsync returns the same numbers while the event loop keeps running', async () => {
    ready();
    const texts = reference.texts; // hundreds of milliseconds of work: the 1 ms interval has time to tick
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
        const pending = model.encodeTextAsync(texts);
        assert.ok(pending instanceof Promise);
        const m = await pending;
        closeTo(m, reference.embeddings);
    } finally {
        clearInterval(timer);
    }
    assert.ok(ticks > 0, 'the event loop did not tick while encodeTextAsync ran');
});

test('25: bad input rejects the promise with the error the blocking form throws', async () => {
    ready();
    await assert.rejects(model.encodeTextAsync(['ok', 7]), (e) => e.code === 'invalid_argument' && /texts\[1\]/.test(e.message));
    await assert.rejects(model.encodeTextAsync(['a'], { maxTokens: 0 }), { code: 'invalid_argument' });
    const other = Executor.forRam({ threads: 1 });
    const gone = await Model.loadRamAsync(modelDir, { executor: other });
    assert.equal(gone.describe().residency, 'ram');
    gone.free();
    await assert.rejects(gone.encodeTextAsync(['a']), { code: 'freed_handle' });
    await assert.rejects(Model.loadRamAsync(`${modelDir}/missing.safetensors`, { executor: other }), { code: 'io' });
    other.free();
});

test('25: while an encode is in flight, free is in use and drain waits for it', async () => {
    ready();
    const batch = Array.from({ length: 48 }, (_, i) => `${reference.texts[reference.long_text_index]} ${i}`);
    const first = Array.from(model.encodeText(batch.slice(0, 1)).data);
    const pending = model.encodeTextAsync(batch);
    // In flight from the moment the promise exists: free refuses and leaves the model usable.
    throwsUForm(() => model.free(), 'in_use', /a call is in flight on it/);
    assert.equal(model.describe().residency, 'ram'); // refused, not broken
    executor.drain(); // blocks the event loop until the encode on the pool thread has finished ...
    model.free(); // ... so the model is no longer in use (this is the file's last test)
    const m = await pending;
    assert.equal(m.rows, 48);
    closeTo({ rows: 1, columns: m.columns, data: m.data.subarray(0, 384) }, [first]);
});
