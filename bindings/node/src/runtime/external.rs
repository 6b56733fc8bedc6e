//! Core buffers shared with JavaScript without a copy, through external `ArrayBuffer`s that own them.

use super::{check, Object, Result};
use napi::sys;
use std::ptr;

/// An executor's quiet word as a 4-byte external `ArrayBuffer` over the core's atomic, which the wrapper reads with
/// `Atomics.load` before calling in (see `uform_core::Executor::quiet`). The buffer owns the `Quiet`, so the word
/// stays where it is until the collector frees the buffer.
pub fn quiet_buffer(env: sys::napi_env, quiet: uform_core::executor::Quiet) -> Result<sys::napi_value> {
    unsafe extern "C" fn release(_env: sys::napi_env, _data: *mut std::ffi::c_void, hint: *mut std::ffi::c_void) {
        // SAFETY: `hint` is the boxed `Quiet` `quiet_buffer` leaked; napi calls `release` once, when the buffer dies.
        drop(unsafe { Box::from_raw(hint.cast::<uform_core::executor::Quiet>()) });
    }
    let quiet = Box::new(quiet);
    let word = quiet.word().as_ptr().cast::<std::ffi::c_void>();
    let hint = Box::into_raw(quiet);
    let mut buffer = ptr::null_mut();
    // SAFETY: the callback's env; `word` is 4 bytes owned by `hint`, which lives until `release` frees it.
    let status =
        unsafe { sys::napi_create_external_arraybuffer(env, word, 4, Some(release), hint.cast(), &mut buffer) };
    if status != sys::Status::napi_ok {
        // SAFETY: napi did not take `hint`, so it is still the box leaked above.
        drop(unsafe { Box::from_raw(hint) });
        check(status, "share the quiet word")?;
    }
    Ok(buffer)
}

/// A verb's matrix as `{ data: Float32Array, rows, columns }`. `data` views the core's own buffer through an
/// external `ArrayBuffer` (no copy) that frees the buffer when the collector frees the array.
pub fn f32_matrix(env: sys::napi_env, matrix: uform_core::F32Matrix) -> Result<sys::napi_value> {
    unsafe extern "C" fn release(_env: sys::napi_env, _data: *mut std::ffi::c_void, hint: *mut std::ffi::c_void) {
        // SAFETY: `hint` is the boxed slice `f32_matrix` leaked; napi calls `release` once, when the buffer dies.
        drop(unsafe { Box::from_raw(hint.cast::<Box<[f32]>>()) });
    }
    let uform_core::F32Matrix { mut data, rows, columns } = matrix;
    data.truncate(rows as usize * columns as usize);
    let len = data.len();
    let mut buffer = ptr::null_mut();
    if len == 0 {
        let mut unused = ptr::null_mut();
        // SAFETY: the callback's env; `unused` and `buffer` are locals napi writes.
        check(unsafe { sys::napi_create_arraybuffer(env, 0, &mut unused, &mut buffer) }, "create an ArrayBuffer")?;
    } else {
        let owned: Box<Box<[f32]>> = Box::new(data.into_boxed_slice());
        let start = owned.as_ptr() as *mut std::ffi::c_void;
        let hint = Box::into_raw(owned);
        // SAFETY: the callback's env; `start` is `len * 4` bytes owned by `hint`, which lives until `release`.
        let status = unsafe {
            sys::napi_create_external_arraybuffer(env, start, len * 4, Some(release), hint.cast(), &mut buffer)
        };
        if status != sys::Status::napi_ok {
            // SAFETY: napi did not take `hint`, so it is still the box leaked above.
            drop(unsafe { Box::from_raw(hint) });
            check(status, "share a matrix")?;
        }
    }
    let mut array = ptr::null_mut();
    check(
        // SAFETY: the callback's env and the buffer just made in it, `len` floats long; `array` is a local.
        unsafe { sys::napi_create_typedarray(env, sys::TypedarrayType::float32_array, len, buffer, 0, &mut array) },
        "create a Float32Array",
    )?;
    let object = Object::new(env)?;
    object.set_raw("data", array)?;
    object.set("rows", &rows)?;
    object.set("columns", &columns)?;
    Ok(object.finish())
}
