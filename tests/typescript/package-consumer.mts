// A TypeScript program that consumes the installed `uform` package by name (its `exports` and `types`), and
// releases with `using`. `cargo xtask test node` compiles it with strict tsc inside a folder where the packed
// tarball is installed, then runs the output: tsc lowers `using` for Node 20, which cannot parse it.
import * as uform from "uform";
import { Executor, Mesh, Mood, UFormError, type MeshDescription } from "uform";
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
