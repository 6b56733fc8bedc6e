// One process of a multi-process mesh (scenario 14), spawned by 03-mesh.test.mjs:
//   node mesh-peer.mjs DIRECTORY JOB INDEX COUNT
// Joins with a RAM executor, prints its describe() as one JSON line, then frees the mesh and the executor.
import { Executor, Mesh } from 'uform';

const [directory, job, index, count] = process.argv.slice(2);
const executor = Executor.forRam({ threads: 1 });
const mesh = Mesh.bootstrap(executor, {
    hostDomainIndex: Number(index),
    hostDomainCount: Number(count),
    directory,
    job,
    timeoutSeconds: 60,
});
process.stdout.write(`${JSON.stringify(mesh.describe())}\n`);
mesh.free();
executor.free();
