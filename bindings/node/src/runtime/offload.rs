//! A long call (`async: true` in the IDL) run as napi async work, settling the promise it returns.

use super::{check, engine, error_value, Result, ToJs};
use napi::sys;
use std::ptr;

type Call<T> = Box<dyn FnOnce() -> Result<T> + Send>;
type Write<T> = Box<dyn FnOnce(sys::napi_env, T) -> Result<sys::napi_value> + Send>;

/// One long call in flight: owned by napi from `napi_queue_async_work` until `complete` takes it back.
struct Work<T> {
    call: Option<Call<T>>,
    write: Option<Write<T>>,
    outcome: Option<Result<T>>,
    deferred: sys::napi_deferred,
    work: sys::napi_async_work,
}

/// `call` runs on a libuv pool thread while the event loop stays free, then `write` turns its value into JavaScript
/// back on the event loop. Returns the promise, which resolves with that value or rejects with the same `Error`
/// (UForm kind as `code`) the blocking form throws.
pub fn offload<T: Send + 'static>(
    env: sys::napi_env,
    call: impl FnOnce() -> Result<T> + Send + 'static,
    write: impl FnOnce(sys::napi_env, T) -> Result<sys::napi_value> + Send + 'static,
) -> Result<sys::napi_value> {
    let (mut deferred, mut promise) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: the callback's env; `deferred` and `promise` are locals napi writes.
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
    // SAFETY: the callback's env; `execute` and `complete` take `data` as the `Work<T>` it is; `work` is a local.
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
        // SAFETY: `data` came from `Box::into_raw` above, and napi, which failed to take it, never saw it.
        drop(unsafe { Box::from_raw(data) });
        return Err(e);
    }
    // SAFETY: `data` is still ours: the work is not queued yet, so neither `execute` nor `complete` runs.
    unsafe { (*data).work = work };
    // SAFETY: the callback's env and the work just created in it.
    if let Err(e) = check(unsafe { sys::napi_queue_async_work(env, work) }, "queue async work") {
        // SAFETY: the work never ran and never will: delete it, then take `data` back, which nobody else holds.
        unsafe { sys::napi_delete_async_work(env, work) };
        // SAFETY: as above.
        drop(unsafe { Box::from_raw(data) });
        return Err(e);
    }
    Ok(promise)
}

/// On a pool thread: the call alone (it holds no JavaScript value; the glue's call runs under `guard`).
unsafe extern "C" fn execute<T>(_env: sys::napi_env, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the `Work<T>` `offload` leaked; napi runs `execute` once, before `complete`, and nothing
    // else touches the work meanwhile.
    let work = unsafe { &mut *data.cast::<Work<T>>() };
    if let Some(call) = work.call.take() {
        work.outcome = Some(call());
    }
}

/// Back on the event loop: settle the promise and free the work.
unsafe extern "C" fn complete<T>(env: sys::napi_env, status: sys::napi_status, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the `Work<T>` `offload` leaked; napi runs `complete` once, after `execute`, so it takes the
    // box back.
    let mut work = unsafe { Box::from_raw(data.cast::<Work<T>>()) };
    // SAFETY: the completion's env and its own work, which napi no longer uses.
    unsafe { sys::napi_delete_async_work(env, work.work) };
    let settled = match (status, work.outcome.take(), work.write.take()) {
        (sys::Status::napi_ok, Some(Ok(value)), Some(write)) => write(env, value),
        (sys::Status::napi_ok, Some(Err(error)), _) => Err(error),
        (status, _, _) => Err(engine("run a long call off the event loop", status)),
    };
    match settled {
        // SAFETY: the completion's env, its promise's deferred (settled once, here) and a value made in that env.
        Ok(value) => unsafe { sys::napi_resolve_deferred(env, work.deferred, value) },
        Err(error) => match error_value(env, &error) {
            // SAFETY: as above, with the error value made in that env.
            Some(rejection) => unsafe { sys::napi_reject_deferred(env, work.deferred, rejection) },
            None => sys::Status::napi_generic_failure,
        },
    };
}
