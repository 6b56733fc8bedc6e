//! Rust values written as JavaScript values, in the callback's env (see the module's safety note).

use super::{check, Address, Kind, Result};
use napi::bindgen_prelude::ToNapiValue;
use napi::sys;
use std::ptr;

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

/// A value one napi call makes: `make` hands napi the local the new value is written to.
fn made(what: &str, make: impl FnOnce(*mut sys::napi_value) -> sys::napi_status) -> Result<sys::napi_value> {
    let mut value = ptr::null_mut();
    check(make(&mut value), what)?;
    Ok(value)
}

impl ToJs for u32 {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        // SAFETY: the callback's env; napi writes the number to the local `made` passes.
        made("create a number", |v| unsafe { sys::napi_create_uint32(env, *self, v) })
    }
}

impl ToJs for i32 {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        // SAFETY: as for `u32`.
        made("create a number", |v| unsafe { sys::napi_create_int32(env, *self, v) })
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
        // SAFETY: as for `u32`.
        made("create a number", |v| unsafe { sys::napi_create_double(env, *self, v) })
    }
}

impl ToJs for bool {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        // SAFETY: as for `u32`.
        made("create a boolean", |v| unsafe { sys::napi_get_boolean(env, *self, v) })
    }
}

impl ToJs for str {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let (text, len) = (self.as_ptr().cast(), self.len() as isize);
        // SAFETY: the callback's env; napi copies `len` bytes of UTF-8 from `text`, and writes the local `made` passes.
        made("create a string", |v| unsafe { sys::napi_create_string_utf8(env, text, len, v) })
    }
}

impl ToJs for String {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        self.as_str().to_js(env)
    }
}

impl ToJs for Address {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        // SAFETY: as for `u32`.
        made("create a bigint", |v| unsafe { sys::napi_create_bigint_uint64(env, self.0, v) })
    }
}

impl<T: ToJs> ToJs for [T] {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        // SAFETY: as for `u32`.
        let array = made("create an array", |v| unsafe { sys::napi_create_array_with_length(env, self.len(), v) })?;
        for (i, item) in self.iter().enumerate() {
            let v = item.to_js(env)?;
            // SAFETY: the callback's env, and the array and element just made in it.
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
    // SAFETY: as for `u32`.
    made("create null", |v| unsafe { sys::napi_get_null(env, v) })
}

/// `undefined`, what a long call without a result resolves with (the glue of such a twin uses it).
#[allow(dead_code)]
pub fn undefined(env: sys::napi_env) -> Result<sys::napi_value> {
    // SAFETY: as for `u32`.
    made("get undefined", |v| unsafe { sys::napi_get_undefined(env, v) })
}

/// A native class instance (a `#[napi]` struct) as a JavaScript object, for a promise to resolve with.
pub fn instance<C: ToNapiValue>(env: sys::napi_env, value: C) -> Result<sys::napi_value> {
    // SAFETY: the env of the async work's completion, on the JavaScript thread (see `offload`).
    unsafe { C::to_napi_value(env, value) }.map_err(|e| {
        napi::Error::new(
            Kind(uform_core::ErrorKind::Internal.code()),
            format!("the JavaScript engine failed to create an object: {}", e.reason),
        )
    })
}

/// A plain object under construction (or the module's exports, which `register_fast` fills).
pub struct Object {
    env: sys::napi_env,
    raw: sys::napi_value,
}

impl Object {
    pub fn new(env: sys::napi_env) -> Result<Object> {
        // SAFETY: as for `u32`.
        let raw = made("create an object", |v| unsafe { sys::napi_create_object(env, v) })?;
        Ok(Object { env, raw })
    }
    /// An object napi handed the callback in progress, in its env.
    pub(super) fn of(env: sys::napi_env, raw: sys::napi_value) -> Object {
        Object { env, raw }
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
        let key = name.to_js(self.env)?;
        // SAFETY: the callback's env, the object it holds, and a key and value made in that env.
        check(unsafe { sys::napi_set_property(self.env, self.raw, key, value) }, "set a property")
    }
    pub fn finish(self) -> sys::napi_value {
        self.raw
    }
}
