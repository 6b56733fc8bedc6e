// Assembles the npm packages in napi-rs's layout: `uform` in target/node/package (or the folder given with --out),
// holding the generated wrapper (generated/typescript), this folder's package.json and README.md and the generated
// JavaScript reference (generated/docs/javascript); and this machine's platform package `uform-<platform>-<arch>
// [-<libc>]` in target/node/npm/<platform>-<arch>[-<libc>] (beside --out's folder: DIR/../npm/...), holding the
// native addon (crate `uform-node`, built with cargo) under the napi-rs name `uform.<platform>-<arch>[-<libc>].node`.
// `uform` lists every platform package of `napi.targets` as an optional dependency, so npm installs only the one
// for the machine it runs on. No global tooling: cargo and node are enough. `--release` builds optimised; `--pack`
// also runs `npm pack` on both and prints the main tarball's path, then the platform tarball's.
//
//   node bindings/node/build.mjs [--release] [--pack] [--out DIR]
//
// Publish both folders (the platform package first): `npm publish target/node/npm/linux-x64-gnu` and
// `npm publish target/node/package`. bindings/node itself is the source, not a package: its `prepack` refuses it.

import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const source = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
const platform = target();
const platformName = `${source.name}-${platform}`;
const platformOut = join(dirname(out), 'npm', platform);
if (!napiSuffixes(source.napi.targets).includes(platform)) {
    throw new Error(`${platform} is not among napi.targets in bindings/node/package.json (${source.napi.targets})`);
}

// The main package: the wrapper, with the platform packages as optional dependencies at its own version.
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const file of ['index.js', 'index.mjs', 'index.d.ts']) {
    copyFileSync(join(root, 'generated/typescript', file), join(out, file));
}
const main = { ...source };
main.optionalDependencies = Object.fromEntries(napiSuffixes(source.napi.targets).map((s) => [`${source.name}-${s}`, source.version]));
main.scripts = { prepack: 'node prepack.mjs' };
writeFileSync(join(out, 'package.json'), `${JSON.stringify(main, null, 2)}\n`);
copyFileSync(join(here, 'prepack.mjs'), join(out, 'prepack.mjs'));
copyFileSync(join(here, 'README.md'), join(out, 'README.md'));
const docs = join(root, 'generated/docs/javascript');
if (existsSync(docs)) cpSync(docs, join(out, 'docs'), { recursive: true });
console.error(`assembled ${out}`);

// This machine's platform package: the addon alone, limited to its platform.
const [os, cpu, abi] = platform.split('-');
rmSync(platformOut, { recursive: true, force: true });
mkdirSync(platformOut, { recursive: true });
const addon = `${source.napi.binaryName}.${platform}.node`;
copyFileSync(built, join(platformOut, addon));
const platformPackage = {
    name: platformName,
    version: source.version,
    description: `The native addon of ${source.name} for ${platform}; install ${source.name}, which depends on it.`,
    license: source.license,
    repository: source.repository,
    main: addon,
    files: [addon],
    os: [os],
    cpu: [cpu],
    ...(abi ? { libc: [abi === 'gnu' ? 'glibc' : 'musl'] } : {}),
    engines: source.engines,
};
writeFileSync(join(platformOut, 'package.json'), `${JSON.stringify(platformPackage, null, 2)}\n`);
writeFileSync(
    join(platformOut, 'README.md'),
    `# ${platformName}\n\nThe native addon of [\`${source.name}\`](https://www.npmjs.com/package/${source.name}) for ` +
        `${platform}. Install \`${source.name}\`: npm picks this package on this platform.\n`,
);
console.error(`assembled ${platformOut}`);

if (pack) {
    for (const folder of [out, platformOut]) {
        const tarball = run('npm', ['pack', '--silent', '--pack-destination', dirname(folder)], folder).trim().split('\n').pop();
        console.log(join(dirname(folder), tarball));
    }
}

/** The napi-rs suffixes of Rust target triples: `x86_64-unknown-linux-gnu` is `linux-x64-gnu`. */
function napiSuffixes(triples) {
    const cpus = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' };
    return triples.map((triple) => {
        const [arch, , system, abi] = triple.split('-');
        const os = { linux: 'linux', darwin: 'darwin', windows: 'win32' }[system] ?? system;
        const cpu = cpus[arch] ?? arch;
        return os === 'linux' ? `${os}-${cpu}-${abi === 'musl' ? 'musl' : 'gnu'}` : `${os}-${cpu}`;
    });
}
