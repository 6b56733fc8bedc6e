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
