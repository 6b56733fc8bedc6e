// One process of a trainer across processes (scenarios 30–32), spawned by 08-train-mesh.test.mjs:
//   node train-mesh-peer.mjs ROLE FIXTURE DIRECTORY JOB RANK WORLD STEPS
// ROLE `fixture` trains the first STEPS steps of FIXTURE (a ddp*.json) on this rank's share and prints, as one JSON line, each
// step's loss, learning rate and gradient norm and the held-out embeddings after training. ROLE `faults` steps with a
// mismatched batch, with a batch rank 1 refuses, frees the mesh under the trainer, takes one good step, and then
// rank 1 dies (SIGKILL) while rank 0 steps again; rank 0 prints each error's code and message.
import { readFileSync } from 'node:fs';
import { Executor, Mesh, Model, Trainer } from 'uform';

const [role, fixturePath, directory, job, rank, world, steps] = process.argv.slice(2);
const f = JSON.parse(readFileSync(fixturePath, 'utf8'));
const r = Number(rank);
const executor = Executor.forRam({ threads: 1 });
const mesh = Mesh.bootstrap(executor, {
    hostDomainIndex: r,
    hostDomainCount: Number(world),
    directory,
    job,
    timeoutSeconds: 30,
});
const model = Model.loadRam(process.env.UFORM_TEST_MODEL_DIR, { executor });
const c = f.config;
const trainer = Trainer.contrastive(model, {
    learningRate: c.learning_rate,
    weightDecay: c.weight_decay,
    warmupSteps: c.warmup_steps,
    totalSteps: c.max_steps,
    maxGradNorm: c.max_grad_norm,
    scale: c.scale,
    dropout: 0,
    seed: c.seed,
    mesh,
});

/** This rank's anchors and positives at step k: its share of the global batch, as the fixture recorded it. */
function batch(k) {
    const pairs = f.ranks[r].local_steps[k].map((i) => f.pairs[i]);
    return [pairs.map(([a]) => a), pairs.map(([, p]) => p)];
}

const out = { rank: r, loss: [], lr: [], gradNorm: [], errors: [] };
const fails = (call) => {
    try {
        call();
        out.errors.push({ code: 'none' });
    } catch (error) {
        out.errors.push({ code: error.code, message: error.message });
    }
};
if (role === 'fixture') {
    for (let k = 0; k < Number(steps); k++) {
        const step = trainer.step(...batch(k));
        out.loss.push(step.loss);
        out.lr.push(step.learningRate);
        out.gradNorm.push(step.gradientNorm);
    }
    out.heldOut = Array.from(model.encodeText(f.held_out).data);
} else {
    const [anchors, positives] = batch(0);
    const n = r === 1 ? anchors.length - 1 : anchors.length;
    fails(() => trainer.step(anchors.slice(0, n), positives.slice(0, n)));
    const bad = positives.slice();
    if (r === 1) bad[0] += '\0';
    fails(() => trainer.step(anchors, bad));
    fails(() => mesh.free());
    trainer.step(anchors, positives);
    if (r === 1) process.kill(process.pid, 'SIGKILL');
    const started = Date.now();
    fails(() => trainer.step(anchors, positives));
    out.failedAfterSeconds = (Date.now() - started) / 1000;
    out.embeddedRows = model.encodeText(anchors).rows;
}
trainer.free();
model.free();
mesh.free();
executor.free();
process.stdout.write(`${JSON.stringify(out)}\n`);
