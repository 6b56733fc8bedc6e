{{ banner }}
{{ doc }}
'use strict';

const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Loads the native layer, `{{ package }}.<platform>-<arch>[-<libc>].node`, from beside this file (the napi-rs
 * naming). A platform this package does not ship fails here with the list of what it does ship.
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
    const shipped = readdirSync(__dirname).filter((name) => name.endsWith('.node'));
    throw new Error(
        `{{ package }}: no native binary for ${targets.join(' or ')} in ${__dirname}; ` +
            `this package ships ${shipped.length ? shipped.join(', ') : 'none'}. ` +
            'Build one from source with `cargo xtask test node` or `node bindings/node/build.mjs`.',
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
