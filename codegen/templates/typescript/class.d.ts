{{ doc }}export declare class {{ name }} implements Disposable {
    private constructor();
{%- for m in members %}
{{ m.doc }}    {{ m.signature }};
{%- endfor %}
{{ compiled_doc }}    readonly compiled: {{ compiled }};
    /** Frees the {{ name }} as `free()` does, so `using` releases it at the end of its scope. */
    [Symbol.dispose](): void;
}

/** The native layer's handle of a {{ name }}: what {@link {{ name }}.compiled} holds. */
export declare class {{ compiled }} {
    private constructor();
{%- for m in compiled_members %}
    {{ m }};
{%- endfor %}
}
