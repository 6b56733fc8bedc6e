{{ doc }}class {{ name }} internal constructor(pointer: Long) : AutoCloseable {
    internal val handle = NativeHandle(this, pointer) { UFormNative.{{ release }}(it) }
{%- if let Some(quiet) = quiet %}

    /** The core's quiet word: read (holding a use of [handle]) before a call that would change nothing. */
    private val quiet: java.nio.ByteBuffer = UFormNative.{{ quiet }}(pointer)
{%- endif %}
{%- if !constructors.is_empty() || !statics.is_empty() %}

    companion object {
{%- for s in statics %}
        {{ s }}
{%- endfor %}
{%- for c in constructors %}
{{ c }}
{%- endfor %}
    }
{%- endif %}
{%- for m in methods %}

{{ m }}
{%- endfor %}

    /**
     * Drops this object's reference to the native {{ name }}: later calls on it, and passing it as an argument, throw
     * `IllegalStateException`; a second `close()` does nothing.
{%- if let Some(free) = free %} The native object is freed as [{{ free }}] frees it,{% else %} The native object is released{% endif %}
     * once the calls in flight on other threads have returned: `close()` does not wait for them, and they finish
     * normally. An object nobody closes is released the same way once the collector finds it unreachable.
     */
    override fun close() = handle.close()
}
