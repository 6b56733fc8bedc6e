//! JavaScript arguments read into Rust values. Arguments are read from raw values, never coerced: a fractional,
//! negative or `NaN` count, a `number` where a `bigint` is expected, a string where a number is expected, an unknown
//! enum value, a string with a lone surrogate (which UTF-8 cannot carry) — each is an invalid-argument error naming
//! the argument. For optional fields and parameters, `undefined` and `null` mean absent.

use super::{check, invalid, Result, ToJs};
use napi::bindgen_prelude::FromNapiValue;
use napi::{sys, JsValue, Unknown};
use std::marker::PhantomData;
use std::ptr;

/// A JavaScript value of the callback in progress, with the callback's env. It is made only from values napi hands
/// the callback (an argument, a property or element read from one), and its lifetime `'call` ends with the
/// callback's, so every napi call on it runs while the value is alive, on the thread that owns it.
#[derive(Clone, Copy)]
pub struct Js<'call> {
    env: sys::napi_env,
    raw: sys::napi_value,
    call: PhantomData<&'call ()>,
}

impl<'call> Js<'call> {
    /// An argument napi-rs read for a `#[napi]` function.
    pub fn of(value: &'call Unknown<'_>) -> Js<'call> {
        let v = value.value();
        Js { env: v.env, raw: v.value, call: PhantomData }
    }

    /// A value of a raw callback: the env and value napi passed to it (see `Args::get`).
    pub(super) fn argument(env: sys::napi_env, raw: sys::napi_value) -> Js<'call> {
        Js { env, raw, call: PhantomData }
    }

    fn kind(&self) -> sys::napi_valuetype {
        let mut t = 0;
        // SAFETY: the callback's env and a live value of it (see `Js`); `t` is a local napi writes.
        unsafe { sys::napi_typeof(self.env, self.raw, &mut t) };
        t
    }

    /// `undefined` or `null`: what an absent optional argument or field is.
    pub fn is_absent(&self) -> bool {
        matches!(self.kind(), sys::ValueType::napi_undefined | sys::ValueType::napi_null)
    }

    /// The number, or `None` for any other type (one napi call: it reports a non-number itself).
    fn number(&self) -> Option<f64> {
        let mut n = 0.0;
        // SAFETY: the callback's env and a live value of it (see `Js`); `n` is a local napi writes.
        (unsafe { sys::napi_get_value_double(self.env, self.raw, &mut n) } == sys::Status::napi_ok).then_some(n)
    }

    fn string(&self) -> Option<String> {
        if self.kind() != sys::ValueType::napi_string {
            return None;
        }
        let mut len = 0usize;
        // SAFETY: the callback's env and a live string of it (see `Js`); a null buffer asks only for the length.
        unsafe { sys::napi_get_value_string_utf8(self.env, self.raw, ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
        // SAFETY: as above; napi writes at most `buf.len()` bytes, NUL included, into `buf`.
        unsafe {
            sys::napi_get_value_string_utf8(self.env, self.raw, buf.as_mut_ptr().cast(), buf.len(), &mut written)
        };
        buf.truncate(written);
        Some(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Whether a string holds a lone surrogate, which UTF-8 cannot carry. V8 writes one as U+FFFD, so only a string
    /// that reads with U+FFFD is read again as UTF-16 to tell a lone surrogate from a real U+FFFD.
    fn has_lone_surrogate(&self, text: &str) -> bool {
        text.contains('\u{FFFD}') && char::decode_utf16(self.utf16()).any(|c| c.is_err())
    }

    fn utf16(&self) -> Vec<u16> {
        let mut len = 0usize;
        // SAFETY: the callback's env and a live string of it (see `Js`); a null buffer asks only for the length.
        unsafe { sys::napi_get_value_string_utf16(self.env, self.raw, ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
        // SAFETY: as above; napi writes at most `buf.len()` code units, NUL included, into `buf`.
        unsafe { sys::napi_get_value_string_utf16(self.env, self.raw, buf.as_mut_ptr(), buf.len(), &mut written) };
        buf.truncate(written);
        buf
    }

    /// A string as an error message quotes it, a lone surrogate escaped as `\u{d800}` rather than shown as U+FFFD.
    fn quoted(&self) -> String {
        let text = self.string().unwrap_or_default();
        if !self.has_lone_surrogate(&text) {
            return format!("{text:?}");
        }
        let mut shown = String::from('"');
        for c in char::decode_utf16(self.utf16()) {
            match c {
                Ok(c) => shown.extend(c.escape_debug()),
                Err(lone) => shown += &format!("\\u{{{:x}}}", lone.unpaired_surrogate()),
            }
        }
        shown + "\""
    }

    /// How a value is shown in an error message: numbers as JavaScript prints them, strings quoted, bigints with `n`.
    pub fn describe(&self) -> String {
        match self.kind() {
            sys::ValueType::napi_undefined => "undefined".into(),
            sys::ValueType::napi_null => "null".into(),
            sys::ValueType::napi_boolean => {
                let mut b = false;
                // SAFETY: the callback's env and a live boolean of it (see `Js`); `b` is a local napi writes.
                unsafe { sys::napi_get_value_bool(self.env, self.raw, &mut b) };
                b.to_string()
            }
            sys::ValueType::napi_number => show_number(self.number().unwrap_or(f64::NAN)),
            sys::ValueType::napi_string => self.quoted(),
            sys::ValueType::napi_bigint => {
                // SAFETY: the callback's env and a live bigint of it (see `Js`).
                match unsafe { napi::bindgen_prelude::BigInt::from_napi_value(self.env, self.raw) } {
                    Ok(big) if big.words.len() <= 2 => {
                        let magnitude = big.words.iter().rev().fold(0u128, |acc, w| (acc << 64) | *w as u128);
                        format!("{}{magnitude}n", if big.sign_bit && magnitude != 0 { "-" } else { "" })
                    }
                    _ => "a bigint wider than 128 bits".into(),
                }
            }
            sys::ValueType::napi_symbol => "a symbol".into(),
            sys::ValueType::napi_function => "a function".into(),
            _ if self.is_array() => "an array".into(),
            _ => "an object".into(),
        }
    }

    /// (negative, low 64 bits, fits in 64 bits)
    fn bigint(&self) -> Option<(bool, u64, bool)> {
        if self.kind() != sys::ValueType::napi_bigint {
            return None;
        }
        // SAFETY: the callback's env and a live bigint of it (see `Js`).
        let big = unsafe { napi::bindgen_prelude::BigInt::from_napi_value(self.env, self.raw) }.ok()?;
        let (negative, value, lossless) = big.get_u64();
        let zero = big.words.iter().all(|w| *w == 0);
        Some((negative && !zero, value, lossless || zero))
    }

    fn is_array(&self) -> bool {
        let mut yes = false;
        // SAFETY: the callback's env and a live value of it (see `Js`); `yes` is a local napi writes.
        unsafe { sys::napi_is_array(self.env, self.raw, &mut yes) };
        yes
    }

    /// The property `name` of an object (`undefined` when missing).
    pub fn field(&self, name: &str) -> Result<Js<'call>> {
        let key = name.to_js(self.env)?;
        let mut value = ptr::null_mut();
        // A getter may throw; its exception stays pending and napi reports it, which is what the caller should see.
        // SAFETY: the callback's env, a live object and key of it (see `Js`); `value` is a local napi writes.
        let status = unsafe { sys::napi_get_property(self.env, self.raw, key, &mut value) };
        if status != sys::Status::napi_ok {
            return Err(invalid(name, "could not be read from the object"));
        }
        // The property is a value of the same call's scope.
        Ok(Js { env: self.env, raw: value, call: PhantomData })
    }

    fn element(&self, index: u32) -> Result<Js<'call>> {
        let mut value = ptr::null_mut();
        // SAFETY: the callback's env and a live array of it (see `Js`); `value` is a local napi writes.
        check(unsafe { sys::napi_get_element(self.env, self.raw, index, &mut value) }, "read an array element")?;
        Ok(Js { env: self.env, raw: value, call: PhantomData })
    }
}

/// A number as JavaScript's `String(n)` prints the common cases.
fn show_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if n == n.trunc() && n.abs() < 1e21 {
        format!("{}", n as i128)
    } else {
        format!("{n}")
    }
}

/// Reads one JavaScript value as a Rust value, naming the argument in errors.
pub trait FromJs: Sized {
    fn from_js(value: Js<'_>, argument: &str) -> Result<Self>;
}

/// Reads an optional argument or field: absent (`undefined`/`null`) is `None`.
pub fn optional<T: FromJs>(value: Js<'_>, argument: &str) -> Result<Option<T>> {
    if value.is_absent() {
        Ok(None)
    } else {
        T::from_js(value, argument).map(Some)
    }
}

/// Reads a required argument or field: absent is an invalid-argument error. (The read comes first and absence is
/// asked only when it fails: one napi call fewer on the path every call takes.)
pub fn required<T: FromJs>(value: Js<'_>, argument: &str) -> Result<T> {
    T::from_js(value, argument).map_err(|error| {
        if value.is_absent() {
            invalid(argument, format!("is required, got {}", value.describe()))
        } else {
            error
        }
    })
}

/// A whole number from 0 to `max`, as a JavaScript number.
fn whole(value: Js<'_>, argument: &str, max: f64) -> Result<f64> {
    match value.number() {
        Some(n) if n.is_nan() => Err(invalid(argument, "must be a number, got NaN")),
        Some(n) if n.fract() == 0.0 && (0.0..=max).contains(&n) => Ok(n),
        Some(n) if n.is_finite() && n.fract() != 0.0 => {
            Err(invalid(argument, format!("must be a whole number, got {}", show_number(n))))
        }
        Some(n) if n < 0.0 => Err(invalid(argument, format!("must not be negative, got {}", show_number(n)))),
        Some(n) => Err(invalid(argument, format!("must be at most {}, got {}", show_number(max), show_number(n)))),
        None if value.kind() == sys::ValueType::napi_bigint => {
            Err(invalid(argument, format!("must be a number, not a bigint, got {}", value.describe())))
        }
        None => Err(invalid(argument, format!("must be a number, got {}", value.describe()))),
    }
}

impl FromJs for u32 {
    fn from_js(value: Js<'_>, argument: &str) -> Result<u32> {
        whole(value, argument, u32::MAX as f64).map(|n| n as u32)
    }
}

impl FromJs for u64 {
    /// Byte sizes are numbers, exact up to `Number.MAX_SAFE_INTEGER`.
    fn from_js(value: Js<'_>, argument: &str) -> Result<u64> {
        whole(value, argument, 9007199254740991.0).map(|n| n as u64)
    }
}

impl FromJs for i32 {
    fn from_js(value: Js<'_>, argument: &str) -> Result<i32> {
        match value.number() {
            Some(n) if n.fract() == 0.0 && (i32::MIN as f64..=i32::MAX as f64).contains(&n) => Ok(n as i32),
            _ => Err(invalid(argument, format!("must be a whole number that fits 32 bits, got {}", value.describe()))),
        }
    }
}

impl FromJs for f64 {
    fn from_js(value: Js<'_>, argument: &str) -> Result<f64> {
        match value.number() {
            Some(n) if !n.is_nan() => Ok(n),
            _ => Err(invalid(argument, format!("must be a number, got {}", value.describe()))),
        }
    }
}

impl FromJs for bool {
    fn from_js(value: Js<'_>, argument: &str) -> Result<bool> {
        if value.kind() != sys::ValueType::napi_boolean {
            return Err(invalid(argument, format!("must be a boolean, got {}", value.describe())));
        }
        let mut b = false;
        // SAFETY: the callback's env and a live boolean of it (see `Js`); `b` is a local napi writes.
        unsafe { sys::napi_get_value_bool(value.env, value.raw, &mut b) };
        Ok(b)
    }
}

impl FromJs for String {
    fn from_js(value: Js<'_>, argument: &str) -> Result<String> {
        let text =
            value.string().ok_or_else(|| invalid(argument, format!("must be a string, got {}", value.describe())))?;
        if value.has_lone_surrogate(&text) {
            return Err(invalid(
                argument,
                format!("must be valid UTF-8 (no lone surrogates), got {}", value.describe()),
            ));
        }
        Ok(text)
    }
}

/// An address (a stream, a pool): a `bigint` from 0 to 2^64 - 1.
pub struct Address(pub u64);

impl FromJs for Address {
    fn from_js(value: Js<'_>, argument: &str) -> Result<Address> {
        match value.bigint() {
            Some((false, v, true)) => Ok(Address(v)),
            Some(_) => Err(invalid(
                argument,
                format!("must be an address from 0n to 2n ** 64n - 1n, got {}", value.describe()),
            )),
            None if value.kind() == sys::ValueType::napi_number => Err(invalid(
                argument,
                format!(
                    "must be a bigint address, not a number, got {} (write {}n)",
                    value.describe(),
                    value.describe()
                ),
            )),
            None => Err(invalid(argument, format!("must be a bigint address, got {}", value.describe()))),
        }
    }
}

impl<T: FromJs> FromJs for Vec<T> {
    fn from_js(value: Js<'_>, argument: &str) -> Result<Vec<T>> {
        if !value.is_array() {
            return Err(invalid(argument, format!("must be an array, got {}", value.describe())));
        }
        let mut len = 0u32;
        // SAFETY: the callback's env and a live array of it (see `Js`); `len` is a local napi writes.
        check(unsafe { sys::napi_get_array_length(value.env, value.raw, &mut len) }, "read an array length")?;
        (0..len).map(|i| required(value.element(i)?, &format!("{argument}[{i}]"))).collect()
    }
}

/// The bytes of a `Uint8Array` (a `Buffer` is one), borrowed in place for the callback: V8 does not move a typed
/// array's backing store, and no JavaScript runs while the callback does, so nothing changes or frees it meanwhile.
fn uint8_array<'call>(value: Js<'call>, argument: &str) -> Result<&'call [u8]> {
    let mut is_typed = false;
    // SAFETY: the callback's env and a live value of it (see `Js`); `is_typed` is a local napi writes.
    unsafe { sys::napi_is_typedarray(value.env, value.raw, &mut is_typed) };
    let (mut kind, mut len, mut data) = (-1, 0usize, ptr::null_mut());
    if is_typed {
        // SAFETY: as above, a typed array; napi writes the locals, and may leave the buffer and offset unasked.
        let status = unsafe {
            sys::napi_get_typedarray_info(
                value.env,
                value.raw,
                &mut kind,
                &mut len,
                &mut data,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        check(status, "read a typed array")?;
    }
    if kind != sys::TypedarrayType::uint8_array {
        return Err(invalid(argument, format!("must be a Uint8Array or a Buffer, got {}", value.describe())));
    }
    if len == 0 || data.is_null() {
        return Ok(&[]);
    }
    // SAFETY: napi's pointer to the array's `len` bytes (already past its byte offset), alive and unchanged for the
    // callback, which `'call` bounds (see above).
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// A `list<bytes>` argument read in place: an array of `Uint8Array`s (or `Buffer`s), each borrowed without a copy
/// for the callback; an element of another type is an invalid argument naming its index.
pub fn borrowed_bytes<'call>(value: Js<'call>, argument: &str) -> Result<Vec<&'call [u8]>> {
    if !value.is_array() {
        let why = if value.is_absent() { "is required" } else { "must be an array of Uint8Arrays" };
        return Err(invalid(argument, format!("{why}, got {}", value.describe())));
    }
    let mut len = 0u32;
    // SAFETY: the callback's env and a live array of it (see `Js`); `len` is a local napi writes.
    check(unsafe { sys::napi_get_array_length(value.env, value.raw, &mut len) }, "read an array length")?;
    (0..len).map(|i| uint8_array(value.element(i)?, &format!("{argument}[{i}]"))).collect()
}

/// A `list<bytes>` argument for a call that outlives the callback (a Promise form's worker thread): each buffer is
/// copied once, since JavaScript may change or free it while the work runs.
pub fn owned_bytes(value: Js<'_>, argument: &str) -> Result<Vec<Vec<u8>>> {
    Ok(borrowed_bytes(value, argument)?.into_iter().map(<[u8]>::to_vec).collect())
}

/// Reads a record argument's fields with `read`, naming a field its own errors name (`` `threads` ``) by its path
/// from the parameter (`` `config.threads` ``), as the core and the wrapper name it. Only a failure pays for it.
pub fn fields_of<T>(argument: &str, read: impl FnOnce() -> Result<T>) -> Result<T> {
    read().map_err(|mut error| {
        if let Some(rest) = error.reason.strip_prefix('`') {
            error.reason = format!("`{argument}.{rest}");
        }
        error
    })
}

/// An input record: a plain object whose fields are read by name. `null`/`undefined` reads as every field absent.
pub fn record<'call>(value: Js<'call>, argument: &str) -> Result<Option<Js<'call>>> {
    if value.is_absent() {
        return Ok(None);
    }
    if value.kind() != sys::ValueType::napi_object || value.is_array() {
        return Err(invalid(argument, format!("must be an object, got {}", value.describe())));
    }
    Ok(Some(value))
}

/// Reads a numeric enum's value, as the number C uses, from its JavaScript number.
pub fn enum_number(value: Js<'_>, argument: &str, accepted: &[(i64, &str)], enum_name: &str) -> Result<i64> {
    let n = value.number();
    if let Some(n) = n {
        if let Some((v, _)) = accepted.iter().find(|(v, _)| *v as f64 == n) {
            return Ok(*v);
        }
    }
    let names: Vec<String> = accepted.iter().map(|(v, name)| format!("{enum_name}.{name} ({v})")).collect();
    Err(invalid(argument, format!("must be one of {}, got {}", names.join(", "), value.describe())))
}

/// Reads a string enum's value, as its position, from its JavaScript string.
pub fn enum_string(value: Js<'_>, argument: &str, accepted: &[&str], enum_name: &str) -> Result<usize> {
    if let Some(s) = value.string() {
        if let Some(i) = accepted.iter().position(|a| *a == s) {
            return Ok(i);
        }
    }
    let names: Vec<String> = accepted.iter().map(|a| format!("{a:?}")).collect();
    Err(invalid(argument, format!("must be a {enum_name}, one of {}, got {}", names.join(", "), value.describe())))
}
