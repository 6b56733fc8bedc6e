{{ banner }}
//
// The Rust side of generated/uniffi/uform.udl: the uniffi-facing types the scaffolding expects, their
// conversions to and from `uform_core`, and the classes and functions that call into it. Included by
// bindings/uniffi/src/lib.rs after `uniffi::include_scaffolding!`.

use std::sync::Arc;

/// Runs `call`, turning a panic into the internal error: a panic never crosses into Kotlin or Swift.
fn guard<T>(call: impl FnOnce() -> Result<T, {{ error }}>) -> Result<T, {{ error }}> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call))
        .unwrap_or_else(|payload| Err(uform_core::Error::from_panic(payload).into()))
}
{%- for part in parts %}

{{ part }}
{%- endfor %}
