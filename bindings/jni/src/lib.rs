//! `uform-jni`: the native library behind the Kotlin artifact. `generated/jni/glue.rs` holds one JNI function per
//! callable of the IDL (rendered from its call plan by `cargo xtask codegen`), the record and enum encoders, and the
//! error classes; [`runtime`] holds what they share. The generated `UFormNative.kt` declares the matching `external`
//! functions, and the jar carries this library under `linux-x86-64/`.

pub mod runtime;

include!("../../../generated/jni/glue.rs");

/// The Kotlin overhead benchmark's peer (hand-written, not generated, not part of the API): a JNI function that does
/// nothing, declared `external` on `UFormNative` beside the generated ones and bound the same way, so
/// `capabilitiesCompiled()` and `drain()` are measured against the cost of a bare JNI call.
#[no_mangle]
pub extern "system" fn Java_cloud_unum_uform_UFormNative_benchNoop(_env: jni::JNIEnv, _class: jni::objects::JClass) {}

/// The Kotlin overhead benchmark's matrix (hand-written, not part of the API): a 32 × 384 matrix of a constant handed
/// back the way `encodeText` hands back its result (the encoded `byte[]` that `Reader.matrix()` reads), to measure
/// what returning an embedding matrix costs.
#[no_mangle]
pub extern "system" fn Java_cloud_unum_uform_UFormNative_benchMatrix(
    mut env: jni::JNIEnv,
    _class: jni::objects::JClass,
) -> jni::sys::jobject {
    let matrix = uform_core::F32Matrix { data: vec![0.5; 32 * 384], rows: 32, columns: 384 };
    runtime::bytes(&mut env, &matrix).unwrap_or(std::ptr::null_mut())
}
