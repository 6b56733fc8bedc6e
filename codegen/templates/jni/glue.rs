{{ banner }}
//
// The JNI side of the Kotlin binding: one function per callable of the IDL, rendered from its call plan, named for
// the `external fun` that generated/kotlin/cloud/unum/uform/UFormNative.kt declares; the encoders of the records and
// enums that results carry; the exception class of each error kind. Included by bindings/jni/src/lib.rs, whose
// `runtime` module does the lifting, the handles and the error conversion.

#[allow(unused_imports)]
use crate::runtime::Encode;
#[allow(unused_imports)]
use jni::objects::{JBooleanArray, JClass, JDoubleArray, JIntArray, JLongArray, JObjectArray, JString};
#[allow(unused_imports)]
use jni::sys::{jboolean, jdouble, jint, jlong, jobject};
use jni::JNIEnv;

/// The `UFormException` subclass each error kind is thrown as.
pub fn exception_class(kind: uform_core::ErrorKind) -> &'static str {
    match kind {
{%- for k in kinds %}
        uform_core::ErrorKind::{{ k.0 }} => "{{ k.1 }}",
{%- endfor %}
    }
}
{%- for part in parts %}

{{ part }}
{%- endfor %}
