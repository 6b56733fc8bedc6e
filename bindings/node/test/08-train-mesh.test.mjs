// Trainer-across-the-mesh scenarios 30–32 of SCENARIOS.md: real Node processes (train-mesh-peer.mjs) on one mesh at
// 127.0.0.1 against the committed torch DDP fixtures (tests/fixtures/train/ddp2.json, ddp4.json, beside
// UFORM_TEST_TRAIN_REFERENCE). `cargo xtask test node` sets the variables; without them these fail.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { cosine, scratch } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function fixturePath(world) {
    const reference = process.env.UFORM_TEST_TRAIN_REFERENCE;
    assert.ok(reference && process.env.UFORM_TEST_MODEL_DIR, 'run the suite through `cargo xtask test node`');
    return join(dirname(reference), `ddp${world}.json`);
}

/** Runs `world` peers in `role`; resolves with each one's exit code, signal and parsed output, in rank order. */
function run(role, world, directory, steps = 0) {
    const fixture = fixturePath(world === 4 ? 4 : 2);
    return Promise.all(
        Array.from({ length: world }, (_, rank) => new Promise((resolve) => {
            const child = spawn(
                process.execPath,
                [join(here, 'train-mesh-peer.mjs'), role, fixture, directory, 'train', String(rank), String(world), String(steps)],
                { stdio: ['ignore', 'pipe', 'inherit'] },
            );
            let stdout = '';
            child.stdout.on('data', (chunk) => { stdout += chunk; });
            child.on('exit', (code, signal) => resolve({ code, signal, out: stdout.trim() ? JSON.parse(stdout) : null }));
        })),
    );
}

/** `world` processes train `steps` steps: each rank's losses, learning rates and gradient norms are torch DDP's, every
 * rank ends with the same weights, and after all 20 steps the held-out embeddings are torch DDP's. */
async function reproduces(world, steps) {
    const f = JSON.parse(readFileSync(fixturePath(world), 'utf8'));
    const directory = scratch(`train-mesh-${world}`);
    const peers = await run('fixture', world, directory, steps);
    for (const [rank, { code, out }] of peers.entries()) {
        assert.equal(code, 0, `rank ${rank} failed`);
        for (let k = 0; k < steps; k++) {
            const want = f.ranks[rank].loss[k];
            const rel = Math.abs(out.loss[k] - want) / Math.abs(want);
            assert.ok(rel <= 1e-4, `rank ${rank}, step ${k + 1}: loss ${out.loss[k]} vs torch DDP's ${want}`);
            assert.ok(Math.abs(out.lr[k] - f.lr[k]) <= 1e-12, `rank ${rank}, step ${k + 1}: lr ${out.lr[k]}`);
            assert.ok(Math.abs(out.gradNorm[k] - f.grad_norm[k]) <= 1e-3 * f.grad_norm[k], `step ${k + 1}: norm`);
        }
        assert.deepEqual(out.heldOut, peers[0].out.heldOut, `rank ${rank} ends with other weights than rank 0`);
    }
    const h = f.held_out_embeddings_after[0].length;
    f.held_out_embeddings_after.forEach((want, i) => {
        if (steps < f.steps.length) return;
        const c = cosine(peers[0].out.heldOut.slice(i * h, (i + 1) * h), want);
        assert.ok(c >= 0.9999, `held-out text ${i}: cosine ${c} to torch DDP's`);
    });
    assert.deepEqual(readdirSync(directory), [], 'the mesh directory is left empty');
}

test('30: two processes on one mesh reproduce torch DDP on two ranks for 20 steps', () => reproduces(2, 20));

// Four ranks for their first 4 steps (the core's own suite runs all 20): what the binding adds is the same.
test('30: four processes reproduce torch DDP on four ranks', () => reproduces(4, 4));

test('31–32: a mismatched batch, a refused batch, a borrowed mesh and a killed peer fail clearly', async () => {
    const directory = scratch('train-mesh-faults');
    const [zero, one] = await run('faults', 2, directory);
    assert.equal(one.signal, 'SIGKILL', 'rank 1 was to die');
    assert.equal(zero.code, 0, 'rank 0 failed');
    const [mismatch, refused, inUse, lost] = zero.out.errors;
    assert.equal(mismatch.code, 'invalid_argument', mismatch.message);
    assert.match(mismatch.message, /rank 1 has 7 pairs/);
    assert.equal(refused.code, 'invalid_argument', refused.message);
    assert.match(refused.message, /refused by rank 1/);
    assert.equal(inUse.code, 'in_use', inUse.message);
    assert.ok(['conflict', 'timeout'].includes(lost.code), lost.message);
    assert.match(lost.message, /rank 1 of the mesh is gone/);
    assert.ok(zero.out.failedAfterSeconds < 35, `the step failed only after ${zero.out.failedAfterSeconds} s`);
    assert.equal(zero.out.embeddedRows, 8, 'the model still embeds');
    // Rank 1 never left, but its process is gone from this machine: the last survivor removes the job directory as
    // if it had left (the mesh's rules), and nothing of the collective's store stays.
    assert.deepEqual(readdirSync(directory), [], 'the mesh directory is left empty');
});
