// Model scenarios 18–21 of SCENARIOS.md: loading safetensors into RAM, describe(), bad files, borrowing.
import assert from 'node:assert/strict';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Executor, Model, gpuDevices } from 'uform';
import { scratch, throwsUForm } from './helpers.mjs';

// [name, dtype, shape, bytes]: several dtypes and shapes, a zero-sized tensor and a scalar among them.
const TENSORS = [
    ['encoder.weight', 'F32', [2, 3], 24],
    ['embeddings', 'BF16', [4], 8],
    ['position_ids', 'I64', [1, 3], 24],
    ['empty', 'U8', [0], 0],
    ['norm.bias', 'F16', [2, 2], 8],
    ['mask', 'BOOL', [3], 3],
    ['scale', 'F64', [], 8],
];

function raw(header, data) {
    const text = Buffer.from(header);
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(text.length));
    return Buffer.concat([length, text, Buffer.from(data)]);
}

function safetensors(tensors) {
    const entries = { __metadata__: { format: 'pt' } };
    let offset = 0;
    for (const [name, dtype, shape, bytes] of tensors) {
        entries[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
        offset += bytes;
    }
    let header = JSON.stringify(entries);
    while (header.length % 8 !== 0) header += ' ';
    return raw(header, Array.from({ length: offset }, (_, i) => (i * 31 + 7) % 256));
}

function checkDescription(model, path, architecture) {
    const d = model.describe();
    assert.equal(d.path, path);
    assert.equal(d.format, 'safetensors');
    assert.equal(d.architecture ?? null, architecture);
    assert.equal(d.residency, 'ram');
    assert.deepEqual(d.devices, []);
    assert.deepEqual(
        d.tensors.map((t) => [t.name, t.dtype, t.shape, t.bytes]),
        TENSORS,
    );
    assert.equal(d.bytes, 75);
}

test('18: forVram and loadVram without a GPU are unavailable, with messages a user understands', (t) => {
    if (gpuDevices().length > 0) {
        t.skip('a GPU is present: scripts/gpu-check.sh covers loadVram');
        return;
    }
    throwsUForm(() => Executor.forVram({ devices: [0, 1] }), 'unavailable', 'forVram');
    const dir = scratch('vram');
    const file = join(dir, 'model.safetensors');
    writeFileSync(file, safetensors(TENSORS));
    const executor = Executor.forRam({ threads: 1 });
    const e = throwsUForm(() => Model.loadVram(file, { executor, devices: [0, 1] }), 'unavailable', 'Model.loadRam');
    assert.match(e.message, /^no GPU driver/);
    executor.free(); // the failed load left no borrow
});

test('19: a file, its directory and a sharded pair describe every tensor exactly, in file order', () => {
    const dir = scratch('describe');
    const file = join(dir, 'model.safetensors');
    writeFileSync(file, safetensors(TENSORS));
    writeFileSync(join(dir, 'config.json'), '{"model_type": "bert"}');
    const executor = Executor.forRam({ threads: 2 });
    for (const path of [file, dir]) {
        const model = Model.loadRam(path, { executor });
        checkDescription(model, path, 'bert');
        model.free();
    }
    unlinkSync(join(dir, 'config.json'));
    const bare = Model.loadRam(file, { executor });
    checkDescription(bare, file, null);
    bare.free();

    const sharded = join(dir, 'sharded');
    mkdirSync(sharded);
    const names = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    writeFileSync(join(sharded, names[0]), safetensors(TENSORS.slice(0, 3)));
    writeFileSync(join(sharded, names[1]), safetensors(TENSORS.slice(3)));
    const weightMap = Object.fromEntries(TENSORS.map(([name], i) => [name, names[i < 3 ? 0 : 1]]));
    const index = join(sharded, 'model.safetensors.index.json');
    writeFileSync(index, JSON.stringify({ metadata: { total_size: 75 }, weight_map: weightMap }));
    for (const path of [index, sharded]) {
        const model = Model.loadRam(path, { executor });
        checkDescription(model, path, null);
        model.free();
    }
    executor.free();
});

const OK_TENSOR = '"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}';
const past = Buffer.concat([Buffer.from([0, 16, 0, 0, 0, 0, 0, 0]), Buffer.from('{}')]);
const BAD_FILES = [
    ['truncated.safetensors', Buffer.from([1, 2, 3]), 'fewer than the 8-byte header length'],
    ['past.safetensors', past, 'runs past the end of the file'],
    ['malformed.safetensors', raw('{"a": {', []), 'not a JSON object of tensors'],
    ['dtype.safetensors', raw('{"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}', [0, 0, 0, 0]), 'dtype `F33`'],
    ['shape.safetensors', raw('{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', new Array(8).fill(0)), 'tensor `w`'],
    [
        'overlap.safetensors',
        raw(`{${OK_TENSOR},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, new Array(8).fill(0)),
        'overlaps tensor `a`',
    ],
];

test('20: bad files are invalid arguments naming the file (and the tensor)', () => {
    const dir = scratch('bad');
    const executor = Executor.forRam({ threads: 1 });
    for (const [name, contents, fragment] of BAD_FILES) {
        const path = join(dir, name);
        writeFileSync(path, contents);
        throwsUForm(() => Model.loadRam(path, { executor }), 'invalid_argument', path, fragment);
    }
    writeFileSync(join(dir, 's1.safetensors'), safetensors([['a', 'U8', [2], 2]]));
    const index = join(dir, 'missing.index.json');
    writeFileSync(index, '{"weight_map": {"a": "s1.safetensors", "b": "s9.safetensors"}}');
    throwsUForm(() => Model.loadRam(index, { executor }), 'invalid_argument', index, /s9\.safetensors.*does not exist/);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    throwsUForm(() => Model.loadRam(empty, { executor }), 'invalid_argument', empty, 'without weights');
    const missing = join(dir, 'not-there');
    throwsUForm(() => Model.loadRam(missing, { executor }), 'io', missing);
    executor.free(); // no failed load kept a borrow
});

test('21: a live model keeps its executor in use; a freed model refuses every call; using frees it', () => {
    const dir = scratch('borrow');
    const file = join(dir, 'm.safetensors');
    writeFileSync(file, safetensors(TENSORS));
    const executor = Executor.forRam({ threads: 1 });
    const model = Model.loadRam(file, { executor });
    throwsUForm(() => executor.free(), 'in_use', 'still borrows');
    model.free();
    model.free(); // a second free does nothing
    throwsUForm(() => model.describe(), 'freed_handle', 'describe');
    throwsUForm(() => model.encodeText(['hello']), 'freed_handle');
    const scoped = Model.loadRam(file, { executor });
    scoped[Symbol.dispose]();
    throwsUForm(() => scoped.describe(), 'freed_handle');
    executor.free(); // both models returned their borrow
    throwsUForm(() => Model.loadRam(file, { executor }), 'freed_handle', 'Model.loadRam');
});

test('21: loadRam naming no executor takes the default executor; bad arguments are invalid arguments', () => {
    const dir = scratch('default-executor');
    const file = join(dir, 'm.safetensors');
    writeFileSync(file, safetensors(TENSORS));
    for (const model of [Model.loadRam(file), Model.loadRam(file, {}), Model.loadRam(file, { executor: undefined })]) {
        checkDescription(model, file, null);
        model.free();
    }
    const executor = Executor.forRam({ threads: 1 });
    throwsUForm(() => Model.loadRam(join(dir, 'not-there')), 'io', 'not-there');
    assert.throws(() => Model.loadRam(42, { executor }));
    assert.throws(() => Model.loadRam('/tmp/x.safetensors', { executor: {} }));
    executor.free();
});
