// One runtime of `cargo xtask bench encode`: the `uform` npm package, driven over stdin/stdout by driver.py.
//
//     node worker.mjs MODEL_DIR    (run from a folder where `import('uform')` resolves to the installed package)
//
// Same protocol as worker.py: one JSON line {ready, first_embedding_at} or {unavailable}, then for each
// {"run": WORKLOAD, "reps": N} line the encode times {"seconds": [...]}, for each {"embed": WORKLOAD} the rows.
// API used: Executor.forRam({threads}), Model.loadRam(dir, {executor}), model.encodeText(texts) returning
// {data: Float32Array, rows, columns}.

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';

const threads = Number(process.env.UFORM_BENCH_THREADS ?? '2');
const reply = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const workloads = JSON.parse(readFileSync(process.env.UFORM_BENCH_WORKLOADS, 'utf8'));
const modelDir = process.argv[2];

let encode;
try {
  let uform;
  try {
    uform = await import('uform');
  } catch (e) {
    throw new Error(`no uform package: ${e.message}`);
  }
  const { Executor, Model } = uform.default?.Model ? uform.default : uform;
  if (!Model) throw new Error('the uform package has no Model yet');
  const executor = Executor.forRam({ threads });
  const model = Model.loadRam(modelDir, { executor });
  encode = (texts) => model.encodeText(texts);
  const first = encode(workloads.latency);
  const firstAt = Date.now() / 1000;
  reply({ ready: `uform (Node ${process.version})`, first_embedding_at: firstAt, shape: [first.rows, first.columns] });
} catch (e) {
  reply({ unavailable: `${e.name}: ${e.message}`.split('\n')[0].slice(0, 300) });
  process.exit(0);
}

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.run !== undefined) {
    const texts = workloads[command.run];
    const seconds = [];
    for (let i = 0; i < command.reps; i++) {
      const start = performance.now();
      encode(texts);
      seconds.push((performance.now() - start) / 1000);
    }
    reply({ seconds });
  } else if (command.embed !== undefined) {
    const { data, rows, columns } = encode(workloads[command.embed]);
    const embeddings = [];
    for (let r = 0; r < rows; r++) embeddings.push(Array.from(data.subarray(r * columns, (r + 1) * columns)));
    reply({ embeddings });
  }
}
