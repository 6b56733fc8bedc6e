//! The hand-written part of the Node native layer: reading JavaScript arguments with validation, writing results,
//! and the error scheme. The generated glue (`generated/node/glue.rs`) is a mechanical use of these helpers.
//!
//! Error scheme: every failure is a napi error whose status string is the UForm error kind
//! (`ErrorKind::code()`, like `"invalid_argument"`), so the thrown JavaScript `Error` carries it as `code` and the
//! message names the argument and the value. The generated wrapper (`index.js`) turns any error whose `code` is one
//! of the UForm kinds into a `UFormError`; other napi errors pass through unchanged.
//!
//! Arguments are read from raw values, never coerced: a fractional, negative or `NaN` count, a `number` where a
//! `bigint` is expected, a string where a number is expected, an unknown enum value, a string with a lone surrogate
//! (which UTF-8 cannot carry) — each is an invalid-argument error naming the argument. For optional fields and
//! parameters, `undefined` and `null` mean absent.

use napi::bindgen_prelude::{FromNapiValue, ToNapiValue};
use napi::{sys, JsValue, Unknown};
use std::fmt::Display;
use std::ptr;

/// The status of a UForm error crossing napi: the kind's code string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind(pub &'static str);

impl AsRef<str> for Kind {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub type Failure = napi::Error<Kind>;
/// Named `Result` because napi-derive recognises a fallible return by that name.
pub type Result<T> = std::result::Result<T, Failure>;

/// How JavaScript spells the names in a core message: camelCase members, a record parameter's fields under it
/// (`config.cpuClass`).
const SPELLING: uform_core::path::Spelling =
    uform_core::path::Spelling { camel_case: true, flatten_record_parameters: false };

/// A core error as it crosses into JavaScript.
pub fn fail(e: uform_core::Error) -> Failure {
    napi::Error::new(Kind(e.kind().code()), e.message_in(&SPELLING))
}

/// An invalid-argument error: "`argument` what", `argument` spelled as JavaScript reads it.
pub fn invalid(argument: &str, what: impl Display) -> Failure {
    fail(uform_core::Error::invalid_as_spelled(argument, what))
}

/// A napi call that failed under us: a bug or an exhausted engine, reported as internal.
fn engine(what: &str, status: sys::napi_status) -> Failure {
    napi::Error::new(
        Kind(uform_core::ErrorKind::Internal.code()),
        format!("the JavaScript engine failed to {what} (napi status {status})"),
    )
}

fn check(status: sys::napi_status, what: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(engine(what, status))
    }
}

/// Runs a core call, turning a panic into the internal error (the core's one message for it, as in every binding):
/// a panic never crosses into JavaScript.
pub fn guard<T>(call: impl FnOnce() -> uform_core::Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call))
        .unwrap_or_else(|payload| Err(uform_core::Error::from_panic(payload)))
        .map_err(fail)
}

/// A JavaScript value in the current call.
#[derive(Clone, Copy)]
pub struct Js {
    pub env: sys::napi_env,
    pub raw: sys::napi_value,
}

impl Js {
    pub fn of(value: &Unknown<'_>) -> Js {
        let v = value.value();
        Js { env: v.env, raw: v.value }
    }

    fn kind(&self) -> sys::napi_valuetype {
        let mut t = 0;
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
        (unsafe { sys::napi_get_value_double(self.env, self.raw, &mut n) } == sys::Status::napi_ok).then_some(n)
    }

    fn string(&self) -> Option<String> {
        if self.kind() != sys::ValueType::napi_string {
            return None;
        }
        let mut len = 0usize;
        unsafe { sys::napi_get_value_string_utf8(self.env, self.raw, ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u8; len + 1];
        let mut written = 0usize;
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
        unsafe { sys::napi_get_value_string_utf16(self.env, self.raw, ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u16; len + 1];
        let mut written = 0usize;
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
                unsafe { sys::napi_get_value_bool(self.env, self.raw, &mut b) };
                b.to_string()
            }
            sys::ValueType::napi_number => show_number(self.number().unwrap_or(f64::NAN)),
            sys::ValueType::napi_string => self.quoted(),
            sys::ValueType::napi_bigint => {
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
        let big = unsafe { napi::bindgen_prelude::BigInt::from_napi_value(self.env, self.raw) }.ok()?;
        let (negative, value, lossless) = big.get_u64();
        let zero = big.words.iter().all(|w| *w == 0);
        Some((negative && !zero, value, lossless || zero))
    }

    fn is_array(&self) -> bool {
        let mut yes = false;
        unsafe { sys::napi_is_array(self.env, self.raw, &mut yes) };
        yes
    }

    /// The property `name` of an object (`undefined` when missing).
    pub fn field(&self, name: &str) -> Result<Js> {
        let mut key = ptr::null_mut();
        check(
            unsafe { sys::napi_create_string_utf8(self.env, name.as_ptr().cast(), name.len() as isize, &mut key) },
            "create a key",
        )?;
        let mut value = ptr::null_mut();
        // A getter may throw; its exception stays pending and napi reports it, which is what the caller should see.
        let status = unsafe { sys::napi_get_property(self.env, self.raw, key, &mut value) };
        if status != sys::Status::napi_ok {
            return Err(invalid(name, "could not be read from the object"));
        }
        Ok(Js { env: self.env, raw: value })
    }

    fn element(&self, index: u32) -> Result<Js> {
        let mut value = ptr::null_mut();
        check(unsafe { sys::napi_get_element(self.env, self.raw, index, &mut value) }, "read an array element")?;
        Ok(Js { env: self.env, raw: value })
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
    fn from_js(value: Js, argument: &str) -> Result<Self>;
}

/// Reads an optional argument or field: absent (`undefined`/`null`) is `None`.
pub fn optional<T: FromJs>(value: Js, argument: &str) -> Result<Option<T>> {
    if value.is_absent() {
        Ok(None)
    } else {
        T::from_js(value, argument).map(Some)
    }
}

/// Reads a required argument or field: absent is an invalid-argument error. (The read comes first and absence is
/// asked only when it fails: one napi call fewer on the path every call takes.)
pub fn required<T: FromJs>(value: Js, argument: &str) -> Result<T> {
    T::from_js(value, argument).map_err(|error| {
        if value.is_absent() {
            invalid(argument, format!("is required, got {}", value.describe()))
        } else {
            error
        }
    })
}

/// A whole number from 0 to `max`, as a JavaScript number.
fn whole(value: Js, argument: &str, max: f64) -> Result<f64> {
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
    fn from_js(value: Js, argument: &str) -> Result<u32> {
        whole(value, argument, u32::MAX as f64).map(|n| n as u32)
    }
}

impl FromJs for u64 {
    /// Byte sizes are numbers, exact up to `Number.MAX_SAFE_INTEGER`.
    fn from_js(value: Js, argument: &str) -> Result<u64> {
        whole(value, argument, 9007199254740991.0).map(|n| n as u64)
    }
}

impl FromJs for i32 {
    fn from_js(value: Js, argument: &str) -> Result<i32> {
        match value.number() {
            Some(n) if n.fract() == 0.0 && (i32::MIN as f64..=i32::MAX as f64).contains(&n) => Ok(n as i32),
            _ => Err(invalid(argument, format!("must be a whole number that fits 32 bits, got {}", value.describe()))),
        }
    }
}

impl FromJs for f64 {
    fn from_js(value: Js, argument: &str) -> Result<f64> {
        match value.number() {
            Some(n) if !n.is_nan() => Ok(n),
            _ => Err(invalid(argument, format!("must be a number, got {}", value.describe()))),
        }
    }
}

impl FromJs for bool {
    fn from_js(value: Js, argument: &str) -> Result<bool> {
        if value.kind() != sys::ValueType::napi_boolean {
            return Err(invalid(argument, format!("must be a boolean, got {}", value.describe())));
        }
        let mut b = false;
        unsafe { sys::napi_get_value_bool(value.env, value.raw, &mut b) };
        Ok(b)
    }
}

impl FromJs for String {
    fn from_js(value: Js, argument: &str) -> Result<String> {
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
    fn from_js(value: Js, argument: &str) -> Result<Address> {
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
    fn from_js(value: Js, argument: &str) -> Result<Vec<T>> {
        if !value.is_array() {
            return Err(invalid(argument, format!("must be an array, got {}", value.describe())));
        }
        let mut len = 0u32;
        check(unsafe { sys::napi_get_array_length(value.env, value.raw, &mut len) }, "read an array length")?;
        (0..len).map(|i| required(value.element(i)?, &format!("{argument}[{i}]"))).collect()
    }
}

/// An input record: a plain object whose fields are read by name. `null`/`undefined` reads as every field absent.
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

pub fn record(value: Js, argument: &str) -> Result<Option<Js>> {
    if value.is_absent() {
        return Ok(None);
    }
    if value.kind() != sys::ValueType::napi_object || value.is_array() {
        return Err(invalid(argument, format!("must be an object, got {}", value.describe())));
    }
    Ok(Some(value))
}

/// Reads a numeric enum's value, as the number C uses, from its JavaScript number.
pub fn enum_number(value: Js, argument: &str, accepted: &[(i64, &str)], enum_name: &str) -> Result<i64> {
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
pub fn enum_string(value: Js, argument: &str, accepted: &[&str], enum_name: &str) -> Result<usize> {
    if let Some(s) = value.string() {
        if let Some(i) = accepted.iter().position(|a| *a == s) {
            return Ok(i);
        }
    }
    let names: Vec<String> = accepted.iter().map(|a| format!("{a:?}")).collect();
    Err(invalid(argument, format!("must be a {enum_name}, one of {}, got {}", names.join(", "), value.describe())))
}

/// A JavaScript value the glue built, returned to the caller as it is.
pub struct Out(pub sys::napi_value);

impl ToNapiValue for Out {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

/// Writes one Rust value as a JavaScript value.
pub trait ToJs {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value>;
}

impl ToJs for u32 {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_create_uint32(env, *self, &mut v) }, "create a number")?;
        Ok(v)
    }
}

impl ToJs for i32 {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_create_int32(env, *self, &mut v) }, "create a number")?;
        Ok(v)
    }
}

impl ToJs for u64 {
    /// Byte sizes cross as numbers, exact up to 2^53.
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        (*self as f64).to_js(env)
    }
}

impl ToJs for f64 {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_create_double(env, *self, &mut v) }, "create a number")?;
        Ok(v)
    }
}

impl ToJs for bool {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_get_boolean(env, *self, &mut v) }, "create a boolean")?;
        Ok(v)
    }
}

impl ToJs for str {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut v = ptr::null_mut();
        check(
            unsafe { sys::napi_create_string_utf8(env, self.as_ptr().cast(), self.len() as isize, &mut v) },
            "create a string",
        )?;
        Ok(v)
    }
}

impl ToJs for String {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        self.as_str().to_js(env)
    }
}

impl ToJs for Address {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut v = ptr::null_mut();
        check(unsafe { sys::napi_create_bigint_uint64(env, self.0, &mut v) }, "create a bigint")?;
        Ok(v)
    }
}

impl<T: ToJs> ToJs for [T] {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let mut array = ptr::null_mut();
        check(unsafe { sys::napi_create_array_with_length(env, self.len(), &mut array) }, "create an array")?;
        for (i, item) in self.iter().enumerate() {
            let v = item.to_js(env)?;
            check(unsafe { sys::napi_set_element(env, array, i as u32, v) }, "fill an array")?;
        }
        Ok(array)
    }
}

impl<T: ToJs> ToJs for Vec<T> {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        self.as_slice().to_js(env)
    }
}

/// `null` for a value the output does not have.
pub fn null(env: sys::napi_env) -> Result<sys::napi_value> {
    let mut v = ptr::null_mut();
    check(unsafe { sys::napi_get_null(env, &mut v) }, "create null")?;
    Ok(v)
}

/// A plain object under construction.
pub struct Object {
    env: sys::napi_env,
    raw: sys::napi_value,
}

impl Object {
    pub fn new(env: sys::napi_env) -> Result<Object> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::napi_create_object(env, &mut raw) }, "create an object")?;
        Ok(Object { env, raw })
    }
    pub fn set(&self, name: &str, value: &(impl ToJs + ?Sized)) -> Result<()> {
        let v = value.to_js(self.env)?;
        self.set_raw(name, v)
    }
    /// An output field that may be absent: `null` when it is.
    pub fn set_nullable<T: ToJs + ?Sized>(&self, name: &str, value: Option<&T>) -> Result<()> {
        let v = match value {
            Some(v) => v.to_js(self.env)?,
            None => null(self.env)?,
        };
        self.set_raw(name, v)
    }
    /// An input record's field, as a function returns it: left out when absent.
    pub fn set_optional<T: ToJs + ?Sized>(&self, name: &str, value: Option<&T>) -> Result<()> {
        match value {
            Some(v) => self.set(name, v),
            None => Ok(()),
        }
    }
    pub fn set_raw(&self, name: &str, value: sys::napi_value) -> Result<()> {
        let mut key = ptr::null_mut();
        check(
            unsafe { sys::napi_create_string_utf8(self.env, name.as_ptr().cast(), name.len() as isize, &mut key) },
            "create a key",
        )?;
        check(unsafe { sys::napi_set_property(self.env, self.raw, key, value) }, "set a property")
    }
    pub fn finish(self) -> sys::napi_value {
        self.raw
    }
}

/// The core handles of one class, by number. The wrapper calls instance methods through plain functions that take
/// this number (see `FAST` in the glue): unwrapping a napi-rs object costs ~170 ns per call in Node 20
/// (`napi_unwrap` plus the type-tag check), a number and a read lock cost a few. A `Compiled*` object owns its
/// entry and removes it when collected; a number that names no entry is a freed-handle error.
pub struct Handles<T> {
    slots: std::sync::RwLock<Vec<Option<T>>>,
    vacant: std::sync::Mutex<Vec<u32>>,
}

impl<T: Clone> Handles<T> {
    pub const fn new() -> Self {
        Handles { slots: std::sync::RwLock::new(Vec::new()), vacant: std::sync::Mutex::new(Vec::new()) }
    }
    pub fn insert(&self, value: T) -> u32 {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        match self.vacant.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            Some(id) => {
                slots[id as usize] = Some(value);
                id
            }
            None => {
                slots.push(Some(value));
                (slots.len() - 1) as u32
            }
        }
    }
    pub fn get(&self, id: u32, class: &str, method: &str) -> Result<T> {
        let slots = self.slots.read().unwrap_or_else(|p| p.into_inner());
        slots.get(id as usize).and_then(Option::clone).ok_or_else(|| fail(uform_core::Error::freed(class, method)))
    }
    pub fn remove(&self, id: u32) {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get_mut(id as usize) {
            if slot.take().is_some() {
                self.vacant.lock().unwrap_or_else(|p| p.into_inner()).push(id);
            }
        }
    }
}

/// The first `N` arguments of a raw napi callback.
pub struct Args<const N: usize> {
    env: sys::napi_env,
    argv: [sys::napi_value; N],
}

impl<const N: usize> Args<N> {
    /// Argument `i`; `undefined` when the caller passed fewer.
    pub fn get(&self, i: usize) -> Js {
        Js { env: self.env, raw: self.argv[i] }
    }
    pub fn env(&self) -> sys::napi_env {
        self.env
    }
}

/// The body of a raw napi callback: reads the first `N` arguments, runs `body`, and throws what it fails with as a
/// JavaScript `Error` whose `code` is the UForm kind (as napi-rs does for the `#[napi]` functions).
///
/// # Safety
/// `env` and `info` must be the ones napi passed to the callback.
pub unsafe fn raw_call<const N: usize>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    body: impl FnOnce(&Args<N>) -> Result<Option<sys::napi_value>>,
) -> sys::napi_value {
    let mut argc = N;
    let mut args = Args { env, argv: [ptr::null_mut(); N] };
    if unsafe { sys::napi_get_cb_info(env, info, &mut argc, args.argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) }
        != sys::Status::napi_ok
    {
        return ptr::null_mut();
    }
    match body(&args) {
        Ok(Some(value)) => value,
        Ok(None) => ptr::null_mut(),
        Err(error) => {
            if let Some(thrown) = error_value(env, &error) {
                unsafe { sys::napi_throw(env, thrown) };
            }
            ptr::null_mut()
        }
    }
}

/// A failure as the JavaScript `Error` it crosses as: `code` the UForm kind, the message as written.
fn error_value(env: sys::napi_env, error: &Failure) -> Option<sys::napi_value> {
    let (Ok(code), Ok(message)) = (error.status.0.to_js(env), error.reason.to_js(env)) else {
        return None;
    };
    let mut value = ptr::null_mut();
    (unsafe { sys::napi_create_error(env, code, message, &mut value) } == sys::Status::napi_ok).then_some(value)
}

/// A long call (`async: true` in the IDL) run as napi async work: `call` runs on a libuv pool thread while the
/// event loop stays free, then `write` turns its value into JavaScript back on the event loop. Returns the
/// promise, which resolves with that value or rejects with the same `Error` (UForm kind as `code`) the blocking
/// form throws.
pub fn offload<T: Send + 'static>(
    env: sys::napi_env,
    call: impl FnOnce() -> Result<T> + Send + 'static,
    write: impl FnOnce(sys::napi_env, T) -> Result<sys::napi_value> + Send + 'static,
) -> Result<sys::napi_value> {
    type Call<T> = Box<dyn FnOnce() -> Result<T> + Send>;
    type Write<T> = Box<dyn FnOnce(sys::napi_env, T) -> Result<sys::napi_value> + Send>;
    struct Work<T> {
        call: Option<Call<T>>,
        write: Option<Write<T>>,
        outcome: Option<Result<T>>,
        deferred: sys::napi_deferred,
        work: sys::napi_async_work,
    }
    /// On a pool thread: the call alone (it holds no JavaScript value; the glue's call runs under `guard`).
    unsafe extern "C" fn execute<T>(_env: sys::napi_env, data: *mut std::ffi::c_void) {
        let work = unsafe { &mut *data.cast::<Work<T>>() };
        if let Some(call) = work.call.take() {
            work.outcome = Some(call());
        }
    }
    /// Back on the event loop: settle the promise and free the work.
    unsafe extern "C" fn complete<T>(env: sys::napi_env, status: sys::napi_status, data: *mut std::ffi::c_void) {
        let mut work = unsafe { Box::from_raw(data.cast::<Work<T>>()) };
        unsafe { sys::napi_delete_async_work(env, work.work) };
        let settled = match (status, work.outcome.take(), work.write.take()) {
            (sys::Status::napi_ok, Some(Ok(value)), Some(write)) => write(env, value),
            (sys::Status::napi_ok, Some(Err(error)), _) => Err(error),
            (status, _, _) => Err(engine("run a long call off the event loop", status)),
        };
        match settled {
            Ok(value) => unsafe { sys::napi_resolve_deferred(env, work.deferred, value) },
            Err(error) => match error_value(env, &error) {
                Some(rejection) => unsafe { sys::napi_reject_deferred(env, work.deferred, rejection) },
                None => sys::Status::napi_generic_failure,
            },
        };
    }
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    check(unsafe { sys::napi_create_promise(env, &mut deferred, &mut promise) }, "create a promise")?;
    let data = Box::into_raw(Box::new(Work::<T> {
        call: Some(Box::new(call)),
        write: Some(Box::new(write)),
        outcome: None,
        deferred,
        work: ptr::null_mut(),
    }));
    let name = "uform".to_js(env)?;
    let mut work = ptr::null_mut();
    let created = unsafe {
        sys::napi_create_async_work(
            env,
            ptr::null_mut(),
            name,
            Some(execute::<T>),
            Some(complete::<T>),
            data.cast(),
            &mut work,
        )
    };
    if let Err(e) = check(created, "create async work") {
        drop(unsafe { Box::from_raw(data) });
        return Err(e);
    }
    unsafe { (*data).work = work };
    if let Err(e) = check(unsafe { sys::napi_queue_async_work(env, work) }, "queue async work") {
        unsafe { sys::napi_delete_async_work(env, work) };
        drop(unsafe { Box::from_raw(data) });
        return Err(e);
    }
    Ok(promise)
}

/// A native class instance (a `#[napi]` struct) as a JavaScript object, for a promise to resolve with.
pub fn instance<C: ToNapiValue>(env: sys::napi_env, value: C) -> Result<sys::napi_value> {
    unsafe { C::to_napi_value(env, value) }.map_err(|e| {
        napi::Error::new(
            Kind(uform_core::ErrorKind::Internal.code()),
            format!("the JavaScript engine failed to create an object: {}", e.reason),
        )
    })
}

/// `undefined`, what a long call without a result resolves with (the glue of such a twin uses it).
#[allow(dead_code)]
pub fn undefined(env: sys::napi_env) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    check(unsafe { sys::napi_get_undefined(env, &mut value) }, "get undefined")?;
    Ok(value)
}

/// Registers the raw callbacks the glue lists in `FAST` on the module's exports.
pub fn register_fast(env: sys::napi_env, exports: sys::napi_value, fast: &[(&str, sys::napi_callback)]) -> Result<()> {
    for (name, callback) in fast {
        let mut function = ptr::null_mut();
        check(
            unsafe {
                sys::napi_create_function(
                    env,
                    name.as_ptr().cast(),
                    name.len() as isize,
                    *callback,
                    ptr::null_mut(),
                    &mut function,
                )
            },
            "create a function",
        )?;
        let object = Object { env, raw: exports };
        object.set_raw(name, function)?;
    }
    Ok(())
}

/// An executor's quiet word as a 4-byte external `ArrayBuffer` over the core's atomic, which the wrapper reads with
/// `Atomics.load` before calling in (see `uform_core::Executor::quiet`). The buffer owns the `Quiet`, so the word
/// stays where it is until the collector frees the buffer.
pub fn quiet_buffer(env: sys::napi_env, quiet: uform_core::executor::Quiet) -> Result<sys::napi_value> {
    unsafe extern "C" fn release(_env: sys::napi_env, _data: *mut std::ffi::c_void, hint: *mut std::ffi::c_void) {
        drop(unsafe { Box::from_raw(hint.cast::<uform_core::executor::Quiet>()) });
    }
    let quiet = Box::new(quiet);
    let word = quiet.word().as_ptr().cast::<std::ffi::c_void>();
    let hint = Box::into_raw(quiet);
    let mut buffer = ptr::null_mut();
    let status =
        unsafe { sys::napi_create_external_arraybuffer(env, word, 4, Some(release), hint.cast(), &mut buffer) };
    if status != sys::Status::napi_ok {
        drop(unsafe { Box::from_raw(hint) });
        check(status, "share the quiet word")?;
    }
    Ok(buffer)
}

/// A verb's matrix as `{ data: Float32Array, rows, columns }`. `data` views the core's own buffer through an
/// external `ArrayBuffer` (no copy) that frees the buffer when the collector frees the array.
pub fn f32_matrix(env: sys::napi_env, matrix: uform_core::F32Matrix) -> Result<sys::napi_value> {
    unsafe extern "C" fn release(_env: sys::napi_env, _data: *mut std::ffi::c_void, hint: *mut std::ffi::c_void) {
        drop(unsafe { Box::from_raw(hint.cast::<Box<[f32]>>()) });
    }
    let uform_core::F32Matrix { mut data, rows, columns } = matrix;
    data.truncate(rows as usize * columns as usize);
    let len = data.len();
    let mut buffer = ptr::null_mut();
    if len == 0 {
        let mut unused = ptr::null_mut();
        check(unsafe { sys::napi_create_arraybuffer(env, 0, &mut unused, &mut buffer) }, "create an ArrayBuffer")?;
    } else {
        let owned: Box<Box<[f32]>> = Box::new(data.into_boxed_slice());
        let start = owned.as_ptr() as *mut std::ffi::c_void;
        let hint = Box::into_raw(owned);
        let status = unsafe {
            sys::napi_create_external_arraybuffer(env, start, len * 4, Some(release), hint.cast(), &mut buffer)
        };
        if status != sys::Status::napi_ok {
            drop(unsafe { Box::from_raw(hint) });
            check(status, "share a matrix")?;
        }
    }
    let mut array = ptr::null_mut();
    check(
        unsafe { sys::napi_create_typedarray(env, sys::TypedarrayType::float32_array, len, buffer, 0, &mut array) },
        "create a Float32Array",
    )?;
    let object = Object::new(env)?;
    object.set_raw("data", array)?;
    object.set("rows", &rows)?;
    object.set("columns", &columns)?;
    Ok(object.finish())
}
