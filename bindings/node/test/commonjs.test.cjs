// CommonJS smoke test: the package works from require() as from import.
const assert = require('node:assert/strict');
const { test } = require('node:test');
const uform = require('uform');

test('cjs require(uform) exposes the whole API', () => {
    for (const name of ['Executor', 'Mesh', 'Mood', 'GpuVendor', 'MultimemTier', 'UFormError', 'gpuDevices', 'capabilitiesCompiled', 'capabilitiesAvailable', 'meshOptionsFromEnvironment']) {
        assert.ok(name in uform, name);
    }
    const executor = uform.Executor.forRam({ threads: 1 });
    executor.drain(uform.Mood.Spinning);
    executor.free();
    assert.throws(() => uform.Executor.forRam({ threads: -1 }), (error) => error instanceof uform.UFormError && error.code === 'invalid_argument');
});

test('cjs and esm see the same objects', async () => {
    const esm = await import('uform');
    assert.equal(esm.Executor, uform.Executor);
    assert.equal(esm.UFormError, uform.UFormError);
});
