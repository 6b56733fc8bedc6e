//! The records and enums of the IDL, as plain Rust values. Every binding converts to and from these. They are
//! generated from `idl/uform.yaml` into `generated/rust/types.rs` by `cargo xtask codegen`; edit the IDL, not them.

include!("../../generated/rust/types.rs");
