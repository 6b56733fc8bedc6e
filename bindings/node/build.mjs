// Assembles the npm package `uform` into target/node/package (or the folder given with --out):
// builds the native addon (crate `uform-node`) with cargo, copies it in under the napi-rs name
// `uform.<platform>-<arch>[-<libc>].node`, and adds the generated wrapper (generated/typescript),
// this folder's package.json and README.md, and the generated JavaScript reference (generated/docs/javascript).
// No global tooling: cargo and node are enough. `--release` builds optimised; `--pack` also runs `npm pack`.
//
//   node bindings/node/build.mjs [--release] [--pack] [--out DIR]

import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const args = process.argv.slice(2);
const release = args.includes('--release');
const pack = args.includes('--pack');
const outIndex = args.indexOf('--out');
const out = outIndex >= 0 ? resolve(args[outIndex + 1]) : join(root, 'target/node/package');

function run(program, argv, cwd = root) {
    console.error(`+ (cd ${cwd}) ${program} ${argv.join(' ')}`);
    return execFileSync(program, argv, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
}

/** The napi-rs platform suffix of this machine, like `linux-x64-gnu`. */
function target() {
    const { platform, arch } = process;
    if (platform !== 'linux') return `${platform}-${arch}`;
    const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
    return `${platform}-${arch}-${glibc ? 'gnu' : 'musl'}`;
}

// The package's version is the interface's: refuse to pack a package.json that drifted from idl/uform.yaml.
const idlVersion = /^version:\s*(\S+)/m.exec(readFileSync(join(root, 'idl/uform.yaml'), 'utf8'))?.[1];
const packageVersion = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8')).version;
if (idlVersion !== packageVersion) {
    throw new Error(`bindings/node/package.json has version ${packageVersion}, but idl/uform.yaml has ${idlVersion}`);
}

const cargo = process.env.CARGO ?? 'cargo';
run(cargo, ['build', '--quiet', '-p', 'uform-node', ...(release ? ['--release'] : [])]);
const targetDir = process.env.CARGO_TARGET_DIR ? resolve(process.env.CARGO_TARGET_DIR) : join(root, 'target');
const library = {
    linux: 'libuform_node.so',
    darwin: 'libuform_node.dylib',
    win32: 'uform_node.dll',
}[process.platform];
const built = join(targetDir, release ? 'release' : 'debug', library);
if (!existsSync(built)) throw new Error(`cargo built no ${built}`);

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
copyFileSync(built, join(out, `uform.${target()}.node`));
for (const file of ['index.js', 'index.mjs', 'index.d.ts']) {
    copyFileSync(join(root, 'generated/typescript', file), join(out, file));
}
copyFileSync(join(here, 'package.json'), join(out, 'package.json'));
copyFileSync(join(here, 'README.md'), join(out, 'README.md'));
const docs = join(root, 'generated/docs/javascript');
if (existsSync(docs)) cpSync(docs, join(out, 'docs'), { recursive: true });
console.error(`assembled ${out}`);

if (pack) {
    const tarball = run('npm', ['pack', '--silent', '--pack-destination', dirname(out)], out).trim().split('\n').pop();
    console.log(join(dirname(out), tarball));
}
