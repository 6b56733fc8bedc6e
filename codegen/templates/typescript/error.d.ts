/** The kind of a {@link UFormError}, the same set in every language. */
export type UFormErrorCode =
{%- for e in errors %}
    | {{ e.code }}
{%- endfor %};

/**
 * The error every UForm call throws, with `code` set to its kind:
{%- for e in errors %}
 * - {{ e.code }}: {{ e.doc }}
{%- endfor %}
 */
export declare class UFormError extends Error {
    readonly code: UFormErrorCode;
}
