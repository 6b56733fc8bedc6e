//! `uform-node`: the napi-rs native layer of the `uform` npm package. Everything but the helpers in
//! [`runtime`] is generated into `generated/node/glue.rs` by `cargo xtask codegen` and included here.

#![allow(clippy::needless_lifetimes, clippy::too_many_arguments)]

mod runtime;

use napi::{sys, Env, Unknown};
use napi_derive::napi;
use runtime::*;

/// A bare napi call that does nothing: the benchmark's baseline for the cost of crossing into the addon.
#[napi]
pub fn noop() {}

include!("../../../generated/node/glue.rs");

/// Adds the raw callbacks of the glue's `FAST` list (the instance methods by handle number) to the exports.
#[napi(module_exports)]
pub fn register(exports: napi::bindgen_prelude::Object, env: Env) -> napi::Result<()> {
    register_fast(env.raw(), napi::JsValue::raw(&exports), FAST).map_err(|e| napi::Error::from_reason(e.reason))
}
