{{ banner }}
//
// The Kotlin API of UForm: records, enums, the exception hierarchy, classes and functions. Every call crosses into
// libuform_jni.so through `UFormNative` (UFormNative.kt), whose JNI functions generated/jni/glue.rs implements.

package {{ package }}
{%- for part in parts %}

{{ part }}
{%- endfor %}
