// Images, scenarios 36–38 of SCENARIOS.md (issue 32): the random-weight CLIP, CLIP vision-only and SigLIP
// checkpoints of tests/fixtures/images (found beside UFORM_TEST_REFERENCE, ../images) against transformers'
// embeddings of the committed files, of the processor's own crops, and its image × text logits.
// `cargo xtask test node` sets UFORM_TEST_REFERENCE; without it these fail.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { Executor, Model, Precision, capabilitiesAvailable } from 'uform';
import { throwsUForm } from './helpers.mjs';

let root, reference, executor;

before(() => {
    if (!process.env.UFORM_TEST_REFERENCE) return;
    root = join(dirname(process.env.UFORM_TEST_REFERENCE), '..', 'images');
    reference = JSON.parse(readFileSync(join(root, 'reference.json'), 'utf8'));
    executor = Executor.forRam({ threads: 2 });
});

after(() => executor?.free());

function load(name, options = {}) {
    assert.ok(reference, 'UFORM_TEST_REFERENCE is not set: run the suite through `cargo xtask test node`');
    return Model.loadRam(join(root, name), { executor, ...options });
}

/** Each named file of a folder under the fixtures, as a Buffer. */
function read(folder, names) {
    return names.map((name) => readFileSync(join(root, folder, name)));
}

/** Whether this CPU runs a class with bf16 instructions (the native class is then one). */
function hasBf16() {
    return capabilitiesAvailable().split(',').some((c) => c === 'amd-genoa' || c === 'intel-sapphirerapids');
}

function row(matrix, r) {
    return matrix.data.subarray(r * matrix.columns, (r + 1) * matrix.columns);
}

function norm(v) {
    let s = 0;
    for (const x of v) s += x * x;
    return Math.sqrt(s);
}

/** The worst cosine between the matrix's rows and the expected rows, and the row it was found at. */
function worstCosine(matrix, expected) {
    assert.equal(matrix.rows, expected.length);
    assert.equal(matrix.columns, expected[0].length);
    let worst = Infinity, at = -1;
    expected.forEach((want, r) => {
        const got = row(matrix, r);
        const cosine = want.reduce((s, w, c) => s + w * got[c], 0) / (norm(got) * norm(want));
        if (!(cosine >= worst)) [worst, at] = [cosine, r];
    });
    return [worst, at];
}

test('36: every checkpoint embeds the committed files and the processor\'s crops as transformers, normalised by default', () => {
    for (const name of ['clip', 'clip-vision', 'siglip']) {
        const entry = reference[name];
        const model = load(name);
        try {
            const files = read('files', entry.files);
            const raw = model.encodeImage(files, { normalize: false });
            assert.equal(raw.rows, files.length);
            let [cosine, at] = worstCosine(raw, entry.image_embeds);
            assert.ok(cosine >= 0.999, `${name}: files[${at}] (${entry.files[at]}) at cosine ${cosine}`);
            // normalize: false keeps the rows' own lengths, which are not 1 for these random weights.
            assert.ok(entry.files.some((_, r) => Math.abs(norm(row(raw, r)) - 1) > 1e-3), `${name}: normalize: false gave unit rows`);
            const normalised = model.encodeImage(files);
            for (let r = 0; r < normalised.rows; r++) {
                const n = norm(row(normalised, r));
                assert.ok(Math.abs(n - 1) < 1e-5, `${name}: files[${r}] has norm ${n}`);
                const scaled = row(raw, r).map((x) => x / norm(row(raw, r)));
                assert.ok(scaled.every((x, c) => Math.abs(x - row(normalised, r)[c]) < 1e-5), `${name}: files[${r}] normalised is not raw / |raw|`);
            }
            assert.deepEqual(model.encodeImage(files, { normalize: true }).data, normalised.data);
            // The processor's own crops: the same pixels transformers fed its model.
            const crops = read(join('crops', name.split('-')[0]), entry.crops);
            [cosine, at] = worstCosine(model.encodeImage(crops), entry.crop_embeds);
            assert.ok(cosine >= 0.9999, `${name}: crops[${at}] at cosine ${cosine}`);
            const d = model.describe();
            assert.deepEqual(d.towers, name === 'clip-vision' ? ['image'] : ['text', 'image'], name);
            assert.equal(d.family, name.split('-')[0]);
            assert.equal(d.dimensions, raw.columns);
        } finally {
            model.free();
        }
    }
});

test('36: image × text logits match transformers\' logits_per_image; encodeText runs the text tower', () => {
    for (const name of ['clip', 'siglip']) {
        const entry = reference[name];
        const model = load(name);
        try {
            const images = model.encodeImage(read('files', entry.files));
            const texts = model.encodeText(entry.texts);
            const [cosine, at] = worstCosine(texts, entry.text_embeds);
            assert.ok(cosine >= 0.9999, `${name}: texts[${at}] at cosine ${cosine}`);
            for (let r = 0; r < texts.rows; r++) assert.ok(Math.abs(norm(row(texts, r)) - 1) < 1e-5);
            const scale = Math.exp(entry.logit_scale);
            const bias = entry.logit_bias ?? 0;
            let worst = 0;
            entry.logits_per_image.forEach((wants, i) => wants.forEach((want, t) => {
                const image = row(images, i), text = row(texts, t);
                const dot = image.reduce((s, x, c) => s + x * text[c], 0);
                worst = Math.max(worst, Math.abs(scale * dot + bias - want));
            }));
            assert.ok(worst < 0.02 * scale, `${name}: logits differ by ${worst} (scale ${scale})`);
            // The text tower takes dimensions, but no prompt and no maxTokens.
            assert.equal(model.encodeText(entry.texts.slice(0, 1), { dimensions: 8 }).columns, 8);
            throwsUForm(() => model.encodeText(['a dog'], { prompt: 'query: ' }), 'unsupported');
            throwsUForm(() => model.encodeText(['a dog'], { maxTokens: 8 }), 'unsupported');
        } finally {
            model.free();
        }
    }
});

test('36: bf16 reproduces the files\' embeddings at cosine 0.999 where the CPU has it; elsewhere loading bf16 is refused', () => {
    const entry = reference.clip;
    const files = read('files', entry.files);
    if (!hasBf16()) {
        // This CPU has no bf16 instructions: its native class refuses bf16.
        throwsUForm(() => load('clip', { precision: Precision.Bf16 }), 'unsupported');
        return;
    }
    const model = load('clip', { precision: Precision.Bf16 });
    const exact = load('clip');
    try {
        assert.equal(model.describe().precision, Precision.Bf16);
        const got = model.encodeImage(files, { normalize: false });
        const [cosine, at] = worstCosine(got, entry.image_embeds);
        assert.ok(cosine >= 0.999, `bf16: files[${at}] at cosine ${cosine}`);
        assert.notDeepEqual(got.data, exact.encodeImage(files, { normalize: false }).data, 'bf16 gave f32\'s rows');
    } finally {
        model.free();
        exact.free();
    }
});

test('37: Buffer, Uint8Array and a subarray view at a non-zero byteOffset give the same rows; so does encodeImageAsync', async () => {
    const entry = reference.clip;
    const model = load('clip');
    try {
        const buffers = read('files', entry.files.slice(0, 4));
        assert.ok(buffers.every((b) => Buffer.isBuffer(b)));
        const want = model.encodeImage(buffers);
        assert.equal(want.rows, 4);
        const [cosine] = worstCosine(want, entry.image_embeds.slice(0, 4));
        assert.ok(cosine >= 0.999);
        // Plain Uint8Arrays over their own ArrayBuffers.
        const plain = buffers.map((b) => new Uint8Array(b));
        assert.ok(plain.every((a) => a.constructor === Uint8Array && a.byteOffset === 0));
        assert.deepEqual(model.encodeImage(plain).data, want.data);
        // Views into one larger buffer, each at a non-zero offset with junk before and after.
        const total = buffers.reduce((s, b) => s + b.length + 7, 7);
        const big = new Uint8Array(total).fill(0xa5);
        let offset = 7;
        const views = buffers.map((b) => {
            big.set(b, offset);
            const view = big.subarray(offset, offset + b.length);
            offset += b.length + 7;
            return view;
        });
        assert.ok(views.every((v) => v.byteOffset > 0 && v.buffer === big.buffer));
        assert.deepEqual(model.encodeImage(views).data, want.data);
        // A Buffer slice (Node's pooled buffers are themselves views) works too.
        const pooled = Buffer.concat([Buffer.from('junk'), buffers[0]]).subarray(4);
        assert.deepEqual(model.encodeImage([pooled]).data, want.data.subarray(0, want.columns));
        // The Promise form: the same rows for every kind of buffer.
        for (const images of [buffers, plain, views]) {
            const pending = model.encodeImageAsync(images);
            assert.ok(pending instanceof Promise);
            const got = await pending;
            assert.deepEqual([got.rows, got.columns], [want.rows, want.columns]);
            assert.deepEqual(got.data, want.data);
        }
        const raw = await model.encodeImageAsync(views, { normalize: false });
        assert.deepEqual(raw.data, model.encodeImage(buffers, { normalize: false }).data);
        // Input that is not a list of byte arrays is an invalid argument naming it.
        throwsUForm(() => model.encodeImage(['a.png']), 'invalid_argument', 'images[0]');
        throwsUForm(() => model.encodeImage(buffers[0]), 'invalid_argument', 'images');
        await assert.rejects(model.encodeImageAsync([buffers[0], 7]), (e) => e.code === 'invalid_argument' && /images\[1\]/.test(e.message));
    } finally {
        model.free();
    }
});

test('38: each hostile file (and an empty buffer) at images[2] is an invalid argument naming it; the model still embeds', async () => {
    const model = load('clip');
    try {
        const good = readFileSync(join(root, 'files', 'photo.jpg'));
        const names = readdirSync(join(root, 'hostile')).sort();
        assert.ok(names.length >= 6, `hostile files: ${names}`);
        const cases = names.map((n) => [n, readFileSync(join(root, 'hostile', n))]).concat([['<empty>', new Uint8Array(0)]]);
        for (const [name, bytes] of cases) {
            const mentions = ['images[2]', ...(name.includes('bomb') ? ['budget'] : [])];
            throwsUForm(() => model.encodeImage([good, good, bytes]), 'invalid_argument', ...mentions);
            await assert.rejects(model.encodeImageAsync([good, good, bytes]), (e) => {
                assert.equal(e.code, 'invalid_argument', `${name}: ${e.message}`);
                assert.ok(mentions.every((m) => e.message.includes(m)), `${name}: ${e.message}`);
                return true;
            });
        }
        // Nothing was lost: the model still embeds, and the same as before.
        const again = model.encodeImage([good]);
        assert.equal(again.rows, 1);
        assert.deepEqual(again.data, model.encodeImage([good, good]).data.subarray(0, again.columns));
        // An empty list gives no rows.
        const empty = model.encodeImage([]);
        assert.deepEqual([empty.rows, empty.data.length], [0, 0]);
        assert.equal((await model.encodeImageAsync([])).rows, 0);
    } finally {
        model.free();
    }
});

test('38: a text-only model refuses encodeImage, clip-vision refuses encodeText, as unsupported', async () => {
    assert.ok(reference, 'UFORM_TEST_REFERENCE is not set: run the suite through `cargo xtask test node`');
    const photo = readFileSync(join(root, 'files', 'photo.jpg'));
    const text = Model.loadRam(join(root, '..', 'families', 'distilbert'), { executor });
    try {
        assert.deepEqual(text.describe().towers, ['text']);
        throwsUForm(() => text.encodeImage([photo]), 'unsupported');
        await assert.rejects(text.encodeImageAsync([photo]), { code: 'unsupported' });
    } finally {
        text.free();
    }
    const vision = load('clip-vision');
    try {
        throwsUForm(() => vision.encodeText(['a dog']), 'unsupported');
        await assert.rejects(vision.encodeTextAsync(['a dog']), { code: 'unsupported' });
        assert.equal(vision.encodeImage([photo]).rows, 1);
    } finally {
        vision.free();
    }
});
