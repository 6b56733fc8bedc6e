//! What every generated JNI function leans on, written once: running a call so that no panic and no core error
//! crosses into the JVM except as a Java exception, lifting JNI arguments into Rust values, the handles the Kotlin
//! classes hold, and the byte encoding that records and lists cross back in.
//!
//! Nothing here allocates a native structure per call: scalars cross as JNI scalars, strings as `java.lang.String`,
//! lists as Java arrays, and a record argument as its fields, one JNI argument each (an optional scalar as a presence
//! flag and a value). Only a record, list or matrix result crosses as one `byte[]`, which the generated Kotlin reads
//! (`Reader` in `UFormNative.kt`), little-endian, in the layout [`Encode`] writes.

use jni::objects::{
    JBooleanArray, JByteArray, JDoubleArray, JIntArray, JLongArray, JObjectArray, JPrimitiveArray, JString, JValue,
    TypeArray,
};
use jni::sys::{jboolean, jdouble, jint, jlong, jobject};
use jni::JNIEnv;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why a call did not produce its value.
pub enum Failure {
    /// The core refused: thrown as the `UFormException` subclass of its kind.
    Core(uform_core::Error),
    /// A Java exception is already pending (a string that is not UTF-16, a JNI call that threw).
    Thrown,
    /// A JNI call failed without an exception pending: thrown as the internal error.
    Jni(String),
}

impl From<uform_core::Error> for Failure {
    fn from(error: uform_core::Error) -> Self {
        Failure::Core(error)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(error: jni::errors::Error) -> Self {
        match error {
            jni::errors::Error::JavaException => Failure::Thrown,
            other => Failure::Jni(other.to_string()),
        }
    }
}

/// The value a native method returns when it throws (the JVM ignores it).
pub trait Null {
    fn null() -> Self;
}

impl Null for () {
    fn null() -> Self {}
}
impl Null for jint {
    fn null() -> Self {
        0
    }
}
impl Null for jlong {
    fn null() -> Self {
        0
    }
}
impl Null for jboolean {
    fn null() -> Self {
        0
    }
}
impl Null for jdouble {
    fn null() -> Self {
        0.0
    }
}
impl Null for jobject {
    fn null() -> Self {
        std::ptr::null_mut()
    }
}

/// Runs one native method's body: a core error becomes its `UFormException`, a panic the internal one.
pub fn call<'l, R: Null>(env: &mut JNIEnv<'l>, body: impl FnOnce(&mut JNIEnv<'l>) -> Result<R, Failure>) -> R {
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&mut *env)));
    let failure = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(failure)) => failure,
        Err(payload) => Failure::Core(uform_core::Error::from_panic(payload)),
    };
    raise(env, failure);
    R::null()
}

/// Kotlin spells a core message's names in camelCase, under their record parameter (`config.cpuClass`).
const SPELLING: uform_core::path::Spelling =
    uform_core::path::Spelling { camel_case: true, flatten_record_parameters: false };

fn raise(env: &mut JNIEnv, failure: Failure) {
    if env.exception_check().unwrap_or(true) {
        return;
    }
    let (class, message) = match failure {
        Failure::Thrown => return,
        Failure::Core(error) => (crate::exception_class(error.kind()), error.message_in(&SPELLING)),
        Failure::Jni(message) => {
            (crate::exception_class(uform_core::ErrorKind::Internal), format!("a JNI call failed: {message}"))
        }
    };
    // Nothing is left to report to if even this fails: the JVM is out of memory and has an exception pending.
    let _ = env.throw_new(class, message);
}

// ---- arguments ----

/// A present `String` argument, decoded from its UTF-16 so a lone surrogate is refused, as Kotlin's strict
/// encoders refuse it: `java.nio.charset.MalformedInputException` (a `CharacterCodingException`), before the core
/// sees the call. The modified UTF-8 of `GetStringUTFChars` would carry the surrogate through instead.
pub fn string(env: &mut JNIEnv, value: &JString) -> Result<String, Failure> {
    if value.is_null() {
        return Err(Failure::Jni("a required string is null".into()));
    }
    let raw = env.get_native_interface();
    // SAFETY: `raw` is this thread's JNIEnv and `value` a live local reference to a java.lang.String; the region
    // read is exactly its length.
    let units = unsafe {
        let length = ((**raw).GetStringLength.expect("JNI GetStringLength"))(raw, value.as_raw());
        let mut units = vec![0u16; length.max(0) as usize];
        ((**raw).GetStringRegion.expect("JNI GetStringRegion"))(raw, value.as_raw(), 0, length, units.as_mut_ptr());
        units
    };
    match String::from_utf16(&units) {
        Ok(text) => Ok(text),
        Err(_) => {
            let exception = env.new_object("java/nio/charset/MalformedInputException", "(I)V", &[JValue::Int(1)])?;
            env.throw(jni::objects::JThrowable::from(exception))?;
            Err(Failure::Thrown)
        }
    }
}

fn region<'a, T: TypeArray + Default + Clone>(
    env: &mut JNIEnv,
    array: &JPrimitiveArray<'a, T>,
    read: impl FnOnce(&mut JNIEnv, &JPrimitiveArray<'a, T>, &mut [T]) -> jni::errors::Result<()>,
) -> Result<Vec<T>, Failure> {
    if array.is_null() {
        return Err(Failure::Jni("a required array is null".into()));
    }
    let length = env.get_array_length(array)?;
    let mut values = vec![T::default(); length as usize];
    read(env, array, &mut values)?;
    Ok(values)
}

/// An `IntArray` of unsigned 32-bit values (`List<UInt>` in Kotlin).
pub fn u32s(env: &mut JNIEnv, array: &JIntArray) -> Result<Vec<u32>, Failure> {
    Ok(region(env, array, |env, a, out| env.get_int_array_region(a, 0, out))?.into_iter().map(|v| v as u32).collect())
}

/// An `IntArray` of signed 32-bit values.
pub fn i32s(env: &mut JNIEnv, array: &JIntArray) -> Result<Vec<i32>, Failure> {
    region(env, array, |env, a, out| env.get_int_array_region(a, 0, out))
}

/// A `LongArray` of unsigned 64-bit values (`List<ULong>` in Kotlin).
pub fn u64s(env: &mut JNIEnv, array: &JLongArray) -> Result<Vec<u64>, Failure> {
    Ok(region(env, array, |env, a, out| env.get_long_array_region(a, 0, out))?.into_iter().map(|v| v as u64).collect())
}

/// A `DoubleArray`.
pub fn f64s(env: &mut JNIEnv, array: &JDoubleArray) -> Result<Vec<f64>, Failure> {
    region(env, array, |env, a, out| env.get_double_array_region(a, 0, out))
}

/// A `BooleanArray`.
pub fn bools(env: &mut JNIEnv, array: &JBooleanArray) -> Result<Vec<bool>, Failure> {
    Ok(region(env, array, |env, a, out| env.get_boolean_array_region(a, 0, out))?.into_iter().map(|v| v != 0).collect())
}

/// An `Array<String>`.
pub fn strings(env: &mut JNIEnv, array: &JObjectArray) -> Result<Vec<String>, Failure> {
    if array.is_null() {
        return Err(Failure::Jni("a required array is null".into()));
    }
    let length = env.get_array_length(array)?;
    let mut values = Vec::with_capacity(length as usize);
    for i in 0..length {
        let element = JString::from(env.get_object_array_element(array, i)?);
        values.push(string(env, &element)?);
        env.delete_local_ref(element)?;
    }
    Ok(values)
}

/// Byte buffers from a `ByteArray[]`, each copied once out of the JVM's heap (`GetByteArrayRegion`): a `ByteArray`
/// cannot be lent past the JNI call that pins it, and the core reads every buffer during the whole call.
pub fn byte_arrays(env: &mut JNIEnv, array: &JObjectArray) -> Result<Vec<Vec<u8>>, Failure> {
    if array.is_null() {
        return Err(Failure::Jni("a required array is null".into()));
    }
    let length = env.get_array_length(array)?;
    let mut values = Vec::with_capacity(length as usize);
    for i in 0..length {
        let element = JByteArray::from(env.get_object_array_element(array, i)?);
        if element.is_null() {
            return Err(Failure::Jni(format!("element {i} of a required array is null")));
        }
        values.push(env.convert_byte_array(&element)?);
        env.delete_local_ref(element)?;
    }
    Ok(values)
}

/// The enum value at `index` among `all` (Kotlin passes its enum's ordinal; both follow the IDL's order).
pub fn variant<T: Copy>(all: &[T], index: jint) -> Result<T, Failure> {
    usize::try_from(index)
        .ok()
        .and_then(|i| all.get(i).copied())
        .ok_or_else(|| Failure::Jni(format!("enum ordinal {index} out of range")))
}

/// Enum values from their ordinals.
pub fn variants<T: Copy>(env: &mut JNIEnv, all: &[T], array: &JIntArray) -> Result<Vec<T>, Failure> {
    i32s(env, array)?.into_iter().map(|i| variant(all, i)).collect()
}

// ---- handles ----

/// A new handle owning `value`; Kotlin's `NativeHandle` keeps it and hands it back to [`release`] exactly once.
pub fn handle<T>(value: T) -> jlong {
    Box::into_raw(Box::new(value)) as jlong
}

/// The value behind a live handle.
///
/// # Safety
/// `handle` came from [`handle::<T>`] and Kotlin's `NativeHandle` has not released it: it counts the calls in
/// flight and releases only when the last one has returned and the object was closed or collected.
pub unsafe fn borrow<'a, T>(handle: jlong) -> &'a T {
    &*(handle as *const T)
}

/// Drops a handle, after `free` (whose error, like an in-use executor's, is dropped: the core keeps what a borrower
/// still holds, and frees it with the last borrower).
///
/// # Safety
/// As [`borrow`], and this is the handle's last use.
pub unsafe fn release<T>(handle: jlong, free: impl FnOnce(&T) -> uform_core::Result<()>) {
    let value = Box::from_raw(handle as *mut T);
    let _ = free(&value);
}

/// A direct `ByteBuffer` over a class's quiet word (4 bytes, native order), which Kotlin reads before a call it may
/// skip. The buffer does not own the word: the core keeps it while the executor it came from lives, and Kotlin reads
/// it only while it holds a use of that executor's handle.
pub fn quiet_buffer(env: &mut JNIEnv, quiet: &uform_core::executor::Quiet) -> Result<jobject, Failure> {
    let word = quiet.word().as_ptr().cast::<u8>();
    // SAFETY: the word is 4 live bytes for as long as the executor lives (see above); nothing writes through the
    // buffer, which Kotlin only reads with acquire ordering.
    Ok(unsafe { env.new_direct_byte_buffer(word, 4) }?.into_raw())
}

// ---- results ----

/// A string result.
pub fn jstring(env: &mut JNIEnv, value: &str) -> Result<jobject, Failure> {
    Ok(env.new_string(value)?.into_raw())
}

/// A record, list or matrix result as the `byte[]` the generated Kotlin reads.
pub fn bytes(env: &mut JNIEnv, value: &impl Encode) -> Result<jobject, Failure> {
    let mut out = Vec::with_capacity(64);
    value.encode(&mut out);
    Ok(env.byte_array_from_slice(&out)?.into_raw())
}

/// The little-endian layout of results: integers and floats at their width, `bool` one byte, a string its UTF-8
/// length (u32) then bytes, an option a presence byte then the value, a list its length (u32) then elements, an enum
/// its ordinal (u32), a record its fields in IDL order, a matrix its rows, columns and then its floats.
pub trait Encode {
    fn encode(&self, out: &mut Vec<u8>);

    /// Encodes `values` one after the other (a list's elements, a matrix's floats); numbers override it with one
    /// copy of the whole slice, which Kotlin reads back with one bulk `get` into a primitive array.
    fn encode_all(values: &[Self], out: &mut Vec<u8>)
    where
        Self: Sized,
    {
        for value in values {
            value.encode(out);
        }
    }
}

macro_rules! encode_le {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }

            fn encode_all(values: &[Self], out: &mut Vec<u8>) {
                if cfg!(target_endian = "little") {
                    // SAFETY: a slice of plain numbers is readable as its bytes (no padding, any alignment for u8),
                    // and on a little-endian target those bytes are the layout's.
                    let bytes = unsafe {
                        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
                    };
                    out.extend_from_slice(bytes);
                } else {
                    out.reserve(std::mem::size_of_val(values));
                    for value in values {
                        value.encode(out);
                    }
                }
            }
        }
    )*};
}
encode_le!(u32, i32, u64, f64, f32);

impl Encode for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl Encode for str {
    fn encode(&self, out: &mut Vec<u8>) {
        (self.len() as u32).encode(out);
        out.extend_from_slice(self.as_bytes());
    }
}

impl Encode for String {
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_str().encode(out);
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(value) => {
                out.push(1);
                value.encode(out);
            }
        }
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        (self.len() as u32).encode(out);
        T::encode_all(self, out);
    }
}

impl Encode for uform_core::F32Matrix {
    fn encode(&self, out: &mut Vec<u8>) {
        self.rows.encode(out);
        self.columns.encode(out);
        f32::encode_all(&self.data, out);
    }
}

/// An enum value's ordinal among `all`, as Kotlin's `entries` index it.
pub fn ordinal<T: PartialEq>(all: &[T], value: &T) -> u32 {
    all.iter().position(|v| v == value).unwrap_or_default() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_little_endian_with_length_prefixes() {
        let mut out = Vec::new();
        7u32.encode(&mut out);
        Some("é".to_string()).encode(&mut out);
        None::<u64>.encode(&mut out);
        vec![true, false].encode(&mut out);
        assert_eq!(out, [7, 0, 0, 0, 1, 2, 0, 0, 0, 0xc3, 0xa9, 0, 2, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn lists_of_numbers_are_copied_whole_in_the_same_layout() {
        let mut out = Vec::new();
        vec![1.5f64, -0.25].encode(&mut out);
        assert_eq!(out, [&2u32.to_le_bytes()[..], &1.5f64.to_le_bytes(), &(-0.25f64).to_le_bytes()].concat());
        let mut out = Vec::new();
        vec![7u32, 9].encode(&mut out);
        assert_eq!(out, [2, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0]);
    }

    #[test]
    fn a_matrix_is_its_shape_then_its_floats() {
        let mut out = Vec::new();
        uform_core::F32Matrix { data: vec![1.0, -2.0], rows: 1, columns: 2 }.encode(&mut out);
        assert_eq!(&out[..8], [1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(&out[8..], [1.0f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat());
    }

    #[test]
    fn ordinals_follow_the_idl_order() {
        assert_eq!(ordinal(&uform_core::Mood::ALL, &uform_core::Mood::Spinning), 1);
        assert!(matches!(variant(&uform_core::Mood::ALL, 1), Ok(uform_core::Mood::Spinning)));
        assert!(matches!(variant(&uform_core::Mood::ALL, 2), Err(Failure::Jni(_))));
        assert!(matches!(variant(&uform_core::Mood::ALL, -1), Err(Failure::Jni(_))));
    }
}
