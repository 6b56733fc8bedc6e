//! `uform-uniffi`: the native library behind the Swift package and the Kotlin artifact. Everything here is
//! generated: `generated/uniffi/uform.udl` declares the surface, uniffi's scaffolding implements its FFI, and
//! `generated/uniffi/glue.rs` converts between the uniffi-facing types and `uform-core`.

uniffi::include_scaffolding!("uform");

include!("../../../generated/uniffi/glue.rs");
