//! The raw napi callbacks of the glue's `FAST` list: their arguments, the errors they throw, their registration on
//! the module's exports, and the registry of core handles they look up by number.

use super::{check, fail, Failure, Js, Object, Result, ToJs};
use napi::sys;
use std::ptr;

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

/// The first `N` arguments of a raw napi callback, as napi passed them.
pub struct Args<const N: usize> {
    env: sys::napi_env,
    argv: [sys::napi_value; N],
}

impl<const N: usize> Args<N> {
    /// Argument `i`; `undefined` when the caller passed fewer.
    pub fn get(&self, i: usize) -> Js<'_> {
        Js::argument(self.env, self.argv[i])
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
    // SAFETY: `env` and `info` are the callback's (this function's contract); `argv` has room for `argc` values, and
    // napi fills the ones the caller left out with `undefined`.
    let read = unsafe {
        sys::napi_get_cb_info(env, info, &mut argc, args.argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut())
    };
    if read != sys::Status::napi_ok {
        return ptr::null_mut();
    }
    match body(&args) {
        Ok(Some(value)) => value,
        Ok(None) => ptr::null_mut(),
        Err(error) => {
            if let Some(thrown) = error_value(env, &error) {
                // SAFETY: the callback's env and an error value just made in it.
                unsafe { sys::napi_throw(env, thrown) };
            }
            ptr::null_mut()
        }
    }
}

/// A failure as the JavaScript `Error` it crosses as: `code` the UForm kind, the message as written.
pub(super) fn error_value(env: sys::napi_env, error: &Failure) -> Option<sys::napi_value> {
    let (Ok(code), Ok(message)) = (error.status.0.to_js(env), error.reason.to_js(env)) else {
        return None;
    };
    let mut value = ptr::null_mut();
    // SAFETY: the callback's env, two strings just made in it, and a local napi writes.
    (unsafe { sys::napi_create_error(env, code, message, &mut value) } == sys::Status::napi_ok).then_some(value)
}

/// Registers the raw callbacks the glue lists in `FAST` on the module's exports.
pub fn register_fast(env: sys::napi_env, exports: sys::napi_value, fast: &[(&str, sys::napi_callback)]) -> Result<()> {
    let exports = Object::of(env, exports);
    for (name, callback) in fast {
        let mut function = ptr::null_mut();
        check(
            // SAFETY: the module initialiser's env; napi copies the name's `len` bytes; `function` is a local.
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
        exports.set_raw(name, function)?;
    }
    Ok(())
}
