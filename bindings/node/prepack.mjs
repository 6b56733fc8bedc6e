// `prepack` of the npm package `uform` (npm runs it before `npm pack` and `npm publish`): refuses any folder that is
// not the package build.mjs assembled — above all bindings/node itself, the package's source, which holds neither
// the wrapper nor the addon — and says what to run instead.
import { existsSync, readFileSync } from 'node:fs';

const folder = process.cwd();
const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const problems = [];
const missing = ['index.js', 'index.mjs', 'index.d.ts'].filter((file) => !existsSync(file));
if (missing.length) problems.push(`it has no ${missing.join(', ')}`);
const platforms = Object.entries(manifest.optionalDependencies ?? {});
if (!platforms.length) problems.push('its package.json names no platform package under optionalDependencies');
for (const [name, version] of platforms) {
    if (version !== manifest.version) problems.push(`it depends on ${name}@${version}, not ${manifest.version}`);
}
if (problems.length) {
    console.error(
        `${manifest.name}: refusing to pack ${folder}: ${problems.join('; ')}.\n` +
            'This is not the assembled package. From the repository root run\n' +
            '    node bindings/node/build.mjs --release\n' +
            'then publish the platform package first, then the package:\n' +
            '    npm publish target/node/npm/linux-x64-gnu\n' +
            '    npm publish target/node/package',
    );
    process.exit(1);
}
