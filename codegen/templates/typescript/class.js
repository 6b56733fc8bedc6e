{{ quiet_tables }}/** Frees every {{ name }} the program forgot to free, once the collector has reclaimed it. */
const {{ registry }} = new FinalizationRegistry((compiled) => {
    try {
        compiled.free();
    } catch {
        // Still borrowed (an executor under a live mesh): the native object's own destructor releases it later.
    }
});

{{ doc }}class {{ name }} {
    #compiled;
    #handle;
    #borrowed;
{%- if quiet_word.is_some() %}
    #quiet;
{%- endif %}

    /** @private Instances come from the static constructors. */
    constructor(token, compiled, borrowed) {
        if (token !== PRIVATE) {
            throw new TypeError('{{ name }} has no public constructor; use {{ constructors }}');
        }
        this.#compiled = compiled;
        // The number the native layer's plain functions take for this handle; see `FAST` in the glue.
        this.#handle = compiled.handle;
        // Arguments the native handle borrows stay reachable while it lives, so their finalizers wait for it.
        this.#borrowed = borrowed;
{%- if let Some(word) = quiet_word %}
        // The core's quiet word, read before calling in: while it says a call would change nothing, the call is skipped.
        this.#quiet = new Uint32Array(native.{{ word }}(this.#handle));
{%- endif %}
        {{ registry }}.register(this, compiled, this);
    }
{%- for m in constructors_js %}

{{ m.doc }}    static {% if m.promise %}async {% endif %}{{ m.name }}({{ m.params }}) {
{%- for check in m.checks %}
        {{ check }}
{%- endfor %}
        let compiled;
        try {
{%- if let Some(fast) = m.fast %}
            compiled = {% if m.promise %}await {% endif %}native.{{ fast }}({{ m.args }});
{%- else %}
            compiled = native.{{ compiled }}.{{ m.name }}({{ m.args }});
{%- endif %}
        } catch (error) {
            throw uformError(error);
        }
        return new {{ name }}(PRIVATE, compiled, [{{ m.borrowed }}]);
    }
{%- endfor %}
{%- for m in methods %}

{{ m.doc }}    {% if m.promise %}async {% endif %}{{ m.name }}({{ m.params }}) {
{%- for check in m.checks %}
        {{ check }}
{%- endfor %}
{%- if let Some(quiet) = m.quiet %}
        if ({{ quiet }}) {
            return;
        }
{%- endif %}
        try {
{%- if let Some(fast) = m.fast %}
            {% if m.returns %}return {% endif %}{% if m.promise %}await {% endif %}native.{{ fast }}(this.#handle{% if !m.args.is_empty() %}, {{ m.args }}{% endif %});
{%- else %}
            {% if m.returns %}return {% endif %}this.#compiled.{{ m.name }}({{ m.args }});
{%- endif %}
        } catch (error) {
            throw uformError(error);
        }
{%- if m.frees %}
        {{ registry }}.unregister(this);
        this.#borrowed = undefined;
{%- endif %}
    }
{%- endfor %}

{{ compiled_doc }}    get compiled() {
        return this.#compiled;
    }

    /** Frees the {{ name }} as `{{ free }}()` does, so `using` releases it at the end of its scope. */
    [disposeSymbol]() {
        // The class's own `{{ free }}`, not `this.{{ free }}`: a wrong `this` is a TypeError, never a call of its `{{ free }}`.
        {{ name }}.prototype.{{ free }}.call(this);
    }
}
