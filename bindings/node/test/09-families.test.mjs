// Text families and reranking, scenarios 33–35 of SCENARIOS.md (issue 31): the random-weight checkpoints of
// tests/fixtures/families (found beside UFORM_TEST_REFERENCE, ../families) against sentence-transformers' reference.
// `cargo xtask test node` sets UFORM_TEST_REFERENCE; without it these fail.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { Executor, Model, Precision, capabilitiesAvailable } from 'uform';
import { throwsUForm } from './helpers.mjs';

let root, reference, executor;

before(() => {
    if (!process.env.UFORM_TEST_REFERENCE) return;
    root = join(dirname(process.env.UFORM_TEST_REFERENCE), '..', 'families');
    reference = JSON.parse(readFileSync(join(root, 'reference.json'), 'utf8'));
    executor = Executor.forRam({ threads: 2 });
});

after(() => executor?.free());

function load(family) {
    assert.ok(reference, 'UFORM_TEST_REFERENCE is not set: run the suite through `cargo xtask test node`');
    return Model.loadRam(join(root, family), { executor });
}

/** Whether this CPU runs a class with bf16 instructions (the native class is then one). */
function hasBf16() {
    return capabilitiesAvailable().split(',').some((c) => c === 'amd-genoa' || c === 'intel-sapphirerapids');
}

function maxDifference(matrix, expected) {
    assert.equal(matrix.rows, expected.length);
    assert.equal(matrix.columns, expected[0].length);
    let worst = 0;
    expected.forEach((row, r) => row.forEach((w, c) => { worst = Math.max(worst, Math.abs(matrix.data[r * matrix.columns + c] - w)); }));
    return worst;
}

test('33: every family reproduces its sentence-transformers reference, and describe() says what it runs', () => {
    const prompts = { distilbert: ['passage', 'query'], 'xlm-roberta': ['document', 'query'], mpnet: ['document', 'query'], modernbert: ['document', 'query'] };
    for (const family of ['distilbert', 'xlm-roberta', 'mpnet', 'modernbert']) {
        const model = load(family);
        try {
            const d = model.describe();
            assert.equal(d.family, family);
            assert.deepEqual([d.maxTokens, d.dimensions, d.crossEncoder], [64, 64, false], family);
            assert.deepEqual([...d.prompts].sort(), prompts[family]);
            const { texts, embeddings } = reference[family];
            const m = model.encodeText(texts);
            assert.equal(m.columns, 64);
            embeddings.forEach((want, r) => {
                const got = m.data.subarray(r * 64, (r + 1) * 64);
                const cosine = want.reduce((s, w, c) => s + w * got[c], 0); // both unit length
                const worst = want.reduce((s, w, c) => Math.max(s, Math.abs(w - got[c])), 0);
                assert.ok(cosine >= 0.9999 && worst <= 1e-4, `${family} text ${r}: cosine ${cosine}, max abs difference ${worst}`);
            });
            // bf16 runs every family too, where the CPU has it (issue 33): cosine >= 0.999 for every text.
            if (hasBf16()) {
                const bf16 = Model.loadRam(join(root, family), { executor, precision: Precision.Bf16 });
                try {
                    const b = bf16.encodeText(texts);
                    embeddings.forEach((want, r) => {
                        const got = b.data.subarray(r * 64, (r + 1) * 64);
                        const norm = Math.sqrt(got.reduce((s, g) => s + g * g, 0));
                        const cosine = want.reduce((s, w, c) => s + w * got[c], 0) / norm;
                        assert.ok(cosine >= 0.999, `bf16 ${family} text ${r}: cosine ${cosine}`);
                    });
                } finally {
                    bf16.free();
                }
            }
        } finally {
            model.free();
        }
    }
});

test('34: rerank reproduces the cross-encoders\' scores in input order and sorted; bad input is refused', async () => {
    for (const family of ['bert-reranker', 'xlm-roberta-reranker', 'modernbert-reranker']) {
        const { query, documents, scores } = reference[family];
        const model = load(family);
        try {
            assert.equal(model.describe().crossEncoder, true);
            const got = model.rerank(query, documents);
            assert.deepEqual(got.map((s) => s.index), documents.map((_, i) => i));
            got.forEach((s, i) => assert.ok(Math.abs(s.score - scores[i]) <= 1e-4, `${family} document ${i}: ${s.score} vs ${scores[i]}`));
            const sorted = model.rerank(query, documents, { sorted: true });
            assert.equal(sorted.length, documents.length);
            sorted.forEach((s, i) => {
                assert.equal(s.score, got[s.index].score, `${family}: the sorted scores keep their indices`);
                assert.ok(i === 0 || sorted[i - 1].score >= s.score, `${family}: not best first`);
            });
            assert.notEqual(sorted[0].index, 0); // the reference's best is not its first document
            assert.deepEqual(await model.rerankAsync(query, documents), got);
            throwsUForm(() => model.rerank('', documents), 'invalid_argument');
            throwsUForm(() => model.rerank(query, []), 'invalid_argument');
            throwsUForm(() => model.rerank(query, documents, { maxTokens: 0 }), 'invalid_argument');
            await assert.rejects(model.rerankAsync('', documents), { code: 'invalid_argument' });
        } finally {
            model.free();
        }
    }
    const plain = load('distilbert');
    try {
        throwsUForm(() => plain.rerank('q', ['d']), 'unsupported');
    } finally {
        plain.free();
    }
});

test('35: a prompt by name or as text, and Matryoshka dimensions, match sentence-transformers; bad options are refused', () => {
    const { texts, prompted_query: prompted, truncated_24: truncated } = reference?.distilbert ?? {};
    const model = load('distilbert');
    try {
        const named = model.encodeText(texts, { promptName: 'query' });
        assert.ok(maxDifference(named, prompted) <= 1e-4);
        assert.deepEqual(model.encodeText(texts, { prompt: 'query: ' }).data, named.data);
        const cut = model.encodeText(texts, { dimensions: 24 });
        assert.equal(cut.columns, 24);
        assert.ok(maxDifference(cut, truncated) <= 1e-4);
        for (const bad of [{ promptName: 'nope' }, { prompt: 'a', promptName: 'query' }, { dimensions: 0 }, { dimensions: 65 }]) {
            throwsUForm(() => model.encodeText(texts, bad), 'invalid_argument');
        }
    } finally {
        model.free();
    }
});
