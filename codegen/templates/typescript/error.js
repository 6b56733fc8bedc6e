/** The kinds a native error's `code` may carry; any of them becomes a {@link UFormError}. */
const ERROR_CODES = new Set([{% for e in errors %}{{ e.code }}{% if !loop.last %}, {% endif %}{% endfor %}]);

/**
 * The error every UForm call throws, with `code` set to its kind:
{%- for e in errors %}
 * - {{ e.code }}: {{ e.doc }}
{%- endfor %}
 */
class UFormError extends Error {
    constructor(code, message, options) {
        super(message, options);
        this.name = 'UFormError';
        Object.defineProperty(this, 'code', { value: code, enumerable: true });
    }
}

/**
 * The error a wrapper call throws for what the native layer threw: a UForm kind in `code` (the napi status the
 * glue sets, see bindings/node/src/runtime.rs) becomes a `UFormError` with the same message; anything else, like
 * the `TypeError` napi-rs raises for a value of the wrong class, is thrown as it is.
 */
function uformError(error) {
    if (error instanceof Error && !(error instanceof UFormError) && ERROR_CODES.has(error.code)) {
        return new UFormError(error.code, error.message);
    }
    return error;
}

/** A value as an error message shows it: numbers and bigints as written, strings quoted, others by kind. */
function shown(value) {
    switch (typeof value) {
        case 'string':
            return JSON.stringify(value);
        case 'bigint':
            return `${value}n`;
        case 'object':
            return value === null ? 'null' : Array.isArray(value) ? 'an array' : `an object (${value.constructor?.name ?? 'null prototype'})`;
        case 'function':
            return 'a function';
        case 'symbol':
            return 'a symbol';
        default:
            return String(value);
    }
}

/** The invalid-argument error for a class argument that is not an instance, as the native layer words its own. */
function notInstance(argument, expected, value) {
    return new UFormError('invalid_argument', `\`${argument}\` must be ${expected}, got ${shown(value)}`);
}
