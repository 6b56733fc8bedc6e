//! `uform-node`: the napi-rs native layer of the `uform` npm package. Everything but the helpers in
//! [`runtime`] is generated into `generated/node/glue.rs` by `cargo xtask codegen` and included here.

#![allow(clippy::needless_lifetimes, clippy::too_many_arguments, clippy::redundant_closure)]

mod runtime;

use napi::{sys, Env, Unknown};
use napi_derive::napi;
use runtime::*;

/// A bare napi callback that does nothing, registered as `noop`: the overhead benchmark's baseline for the cost of
/// crossing into the addon, made the same way as the glue's callbacks.
unsafe extern "C" fn noop(_env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    std::ptr::null_mut()
}

/// A 32 × 384 matrix of a constant, registered as `benchMatrix` and handed back the way `encodeText` hands back its
/// result: the overhead benchmark's measure of what returning an embedding matrix costs.
unsafe extern "C" fn bench_matrix(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    let matrix = uform_core::F32Matrix { data: vec![0.5; 32 * 384], rows: 32, columns: 384 };
    f32_matrix(env, matrix).unwrap_or(std::ptr::null_mut())
}

include!("../../../generated/node/glue.rs");

/// The same no-op through napi-rs's `#[napi]` glue (registered as `noopNapiRs`): the benchmark prints it for context,
/// since it is what a napi-rs addon's cheapest call costs.
#[napi(js_name = "noopNapiRs")]
pub fn noop_napi_rs() {}

/// Adds the raw callbacks of the glue's `FAST` list (the instance methods by handle number) to the exports.
#[napi(module_exports)]
pub fn register(exports: napi::bindgen_prelude::Object, env: Env) -> napi::Result<()> {
    let exports = napi::JsValue::raw(&exports);
    register_fast(env.raw(), exports, &[("noop", Some(noop)), ("benchMatrix", Some(bench_matrix))])
        .map_err(|e| napi::Error::from_reason(e.reason))?;
    register_fast(env.raw(), exports, FAST).map_err(|e| napi::Error::from_reason(e.reason))
}
