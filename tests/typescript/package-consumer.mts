// A TypeScript program that consumes the installed `uform` package by name (its `exports` and `types`), and
// releases with `using`. `cargo xtask test node` compiles it with strict tsc inside a folder where the packed
// tarball is installed, then runs the output: tsc lowers `using` for Node 20, which cannot parse it.
import * as uform from "uform";
import { Executor, Mesh, Model, Mood, Trainer, UFormError, type MeshDescription, type TrainStep } from "uform";
import assert from "node:assert/strict";

let escaped: Executor | undefined;
let escapedMesh: Mesh | undefined;
{
    using executor = Executor.forRam({ threads: 1 });
    executor.drain(Mood.Spinning);
    using mesh = Mesh.bootstrap(executor);
    const description: MeshDescription = mesh.describe();
    assert.equal(description.hostDomainCount, 1);
    escaped = executor;
    escapedMesh = mesh;
}
// Leaving the block disposed the mesh, then the executor (reverse order, so the executor was no longer borrowed).
for (const call of [() => escapedMesh?.describe(), () => escaped?.drain()]) {
    assert.throws(call, (error: unknown) => error instanceof UFormError && error.code === "freed_handle");
}
assert.ok(uform.capabilitiesAvailable().length > 0);
console.log("07 using frees the mesh and the executor at the end of the scope: ok");

// Scenario 29: `using` frees a trainer at the end of its scope, and then its model frees. (UFORM_TEST_MODEL_DIR is
// the test model; `cargo xtask test node` sets it.)
const modelDir = process.env["UFORM_TEST_MODEL_DIR"];
assert.ok(modelDir, "UFORM_TEST_MODEL_DIR is not set: run this through `cargo xtask test node`");
let escapedTrainer: Trainer | undefined;
{
    using executor = Executor.forRam({ threads: 1 });
    using model = Model.loadRam(modelDir, { executor });
    {
        using trainer = Trainer.contrastive(model, { learningRate: 1e-4, dropout: 0 });
        escapedTrainer = trainer;
        assert.throws(() => model.free(), (error: unknown) => error instanceof UFormError && error.code === "in_use");
        const step: (anchors: string[], positives: string[]) => TrainStep = trainer.step.bind(trainer);
        void step; // the steps themselves are bindings/node/test/07-train.test.mjs's
    }
    // The trainer was disposed at the end of its block, so the model's own `using` can free it now.
    assert.equal(model.encodeText(["still usable"]).rows, 1);
}
assert.throws(() => escapedTrainer?.step(["a"], ["p"]), (error: unknown) => error instanceof UFormError && error.code === "freed_handle");
console.log("29 using frees the trainer, then the model and its executor: ok");
