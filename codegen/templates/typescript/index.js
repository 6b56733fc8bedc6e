{{ banner }}
{{ doc }}
'use strict';

const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Loads the native layer, `{{ package }}.<platform>-<arch>[-<libc>].node` (the napi-rs naming): from beside this
 * file in a package built from source, else from the platform package `{{ package }}-<platform>-<arch>[-<libc>]`
 * that npm installs as an optional dependency on the platform it is built for. A platform with neither fails here
 * with what was looked for.
 */
function loadNative() {
    const { platform, arch } = process;
    const targets = platform === 'linux' ? [`${platform}-${arch}-gnu`, `${platform}-${arch}-musl`] : [`${platform}-${arch}`];
    for (const target of targets) {
        const file = join(__dirname, `{{ package }}.${target}.node`);
        if (existsSync(file)) {
            return require(file);
        }
    }
    const packages = targets.map((target) => `{{ package }}-${target}`);
    for (const name of packages) {
        try {
            return require(name);
        } catch (error) {
            // Only a package that is not installed moves on; one that is there but fails to load says why.
            if (error?.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes(name)) {
                throw error;
            }
        }
    }
    const shipped = readdirSync(__dirname).filter((name) => name.endsWith('.node'));
    throw new Error(
        `{{ package }}: no native binary for ${targets.join(' or ')}: none of the packages ${packages.join(', ')} ` +
            `is installed, and ${__dirname} holds ${shipped.length ? shipped.join(', ') : 'no .node file'}. ` +
            'npm installs the platform package as an optional dependency where one is published for this platform ' +
            '(was --omit=optional used?); elsewhere build one from source with `node bindings/node/build.mjs`.',
    );
}

const native = loadNative();

/** Guards the constructors: instances come only from the static constructors. */
const PRIVATE = Symbol('{{ package }}.private');

/** `Symbol.dispose` where the runtime has it (Node 20.4+ and 22), else the symbol Node's polyfills use. */
const disposeSymbol = Symbol.dispose ?? Symbol.for('nodejs.dispose');
{%- for part in parts %}

{{ part }}
{%- endfor %}

module.exports = {
{%- for name in exports %}
    {{ name }},
{%- endfor %}
};
