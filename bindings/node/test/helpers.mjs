// Shared by the test files: assertions on UFormError and a scratch directory per test file.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UFormError } from 'uform';

/** Runs `call`, expecting a UFormError with `code` whose message matches every pattern in `mentions`. */
export function throwsUForm(call, code, ...mentions) {
    let caught;
    try {
        call();
    } catch (error) {
        caught = error;
    }
    assert.ok(caught, `expected a UFormError with code ${code}, but the call returned`);
    assert.ok(caught instanceof UFormError, `expected a UFormError, got ${caught?.constructor?.name}: ${caught?.message}`);
    assert.ok(caught instanceof Error);
    assert.equal(caught.name, 'UFormError');
    assert.equal(caught.code, code, `code of: ${caught.message}`);
    for (const mention of mentions) {
        assert.match(caught.message, mention instanceof RegExp ? mention : new RegExp(escape(mention)), `message: ${caught.message}`);
    }
    return caught;
}

function escape(text) {
    return String(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A fresh directory under the system's temporary folder (or UFORM_TEST_DIR), removed when the process exits. */
export function scratch(prefix) {
    const base = process.env.UFORM_TEST_DIR ?? tmpdir();
    const dir = mkdtempSync(join(base, `${prefix}-`));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
}

/** GPU class names, as opposed to CPU class names, in a capability list. */
export function isGpuClass(name) {
    return /^(nvidia-|amd-(cdna|rdna))/.test(name);
}

/** The cosine of two vectors (arrays or typed arrays) of one length. */
export function cosine(a, b) {
    let dot = 0, aa = 0, bb = 0;
    for (let i = 0; i < a.length; i++) {
        dot += a[i] * b[i];
        aa += a[i] * a[i];
        bb += b[i] * b[i];
    }
    return dot / Math.sqrt(aa * bb);
}
